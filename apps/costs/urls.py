from django.urls import path

from apps.costs import downloads, views

app_name = "costs"
urlpatterns = [
    path("cases/<int:pk>/costs/", views.case_costs, name="case"),
    path("cases/<int:pk>/costs/budget/", views.budget_submit, name="budget"),
    path("cases/<int:pk>/costs/import/", views.import_submit, name="import"),
    path("cases/<int:pk>/costs/daily-import/", views.daily_import_submit, name="daily-import"),
    path("costs/imports/<int:pk>/file/", downloads.cost_import_download, name="import-file"),
]
