from django.urls import path

from apps.scorecards import views

app_name = "scorecards"
urlpatterns = [
    path("cases/<int:pk>/comparison/", views.comparison, name="comparison"),
    path("cases/<int:pk>/matrix/", views.matrix, name="matrix"),
    path("cases/<int:pk>/criteria/", views.criteria_edit, name="criteria"),
    path("offers/<int:offer_pk>/scorecard/", views.scorecard_edit, name="scorecard"),
    path(
        "offers/<int:offer_pk>/scorecard/workbook/",
        views.scorecard_workbook_download,
        name="scorecard-workbook",
    ),
    path(
        "offers/<int:offer_pk>/scorecard/import/", views.scorecard_import, name="scorecard-import"
    ),
]
