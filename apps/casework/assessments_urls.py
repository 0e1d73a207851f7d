"""The data-export assessment pages, under one name (``assessments:``), and their history."""

from django.urls import path

from apps.assessments import views
from apps.casework import area_views

app_name = "assessments"
urlpatterns = [
    path("cases/<int:case_pk>/data-export/new/", views.assessment_create, name="create"),
    path("data-export/<int:pk>/", views.assessment_detail, name="detail"),
    path("data-export/<int:pk>/edit/", views.assessment_edit, name="edit"),
    path("data-export/<int:pk>/sign-off/", views.assessment_sign_off, name="sign_off"),
    path("data-export/<int:pk>/report/", views.assessment_report, name="report"),
    path(
        "data-export/<int:pk>/report.json",
        views.assessment_report,
        {"fmt": "json"},
        name="report_json",
    ),
    path(
        "data-export/<int:pk>/report.md", views.assessment_report, {"fmt": "md"}, name="report_md"
    ),
    path(
        "data-export/<int:pk>/workbook/",
        views.questionnaire_workbook_download,
        name="workbook",
    ),
    path("data-export/<int:pk>/import/", views.questionnaire_import, name="import"),
    path("data-export/<int:pk>/history/", area_views.assessment_history, name="history"),
    path(
        "data-export/<int:pk>/attachments/<slug:key>/",
        views.attachment_download,
        name="attachment",
    ),
]
