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
    # The facts auditors ask for (docs/rules/data-export.md#audit-facts).
    path("data-export/<int:pk>/audit-facts/", views.audit_facts_edit, name="audit_facts"),
    path("data-export/<int:pk>/datasets/add/", views.dataset_add, name="dataset_add"),
    path("data-export/datasets/<int:pk>/", views.dataset_edit, name="dataset_edit"),
    path("data-export/datasets/<int:pk>/remove/", views.dataset_remove, name="dataset_remove"),
    path("data-export/<int:pk>/weight-files/add/", views.weight_file_add, name="weight_add"),
    path("data-export/weight-files/<int:pk>/", views.weight_file_edit, name="weight_edit"),
    path(
        "data-export/weight-files/<int:pk>/remove/",
        views.weight_file_remove,
        name="weight_remove",
    ),
]
