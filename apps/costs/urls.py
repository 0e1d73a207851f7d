from django.urls import path

from apps.costs import views

app_name = "costs"
urlpatterns = [
    path("cases/<int:pk>/costs/", views.case_costs, name="case"),
    path("cases/<int:pk>/costs/budget/", views.budget_submit, name="budget"),
    path("cases/<int:pk>/costs/import/", views.import_submit, name="import"),
]
