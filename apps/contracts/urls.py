from django.urls import path

from apps.contracts import views

app_name = "contracts"
urlpatterns = [
    path("offers/<int:offer_pk>/clause-checklist/", views.checklist_edit, name="checklist"),
    path(
        "offers/<int:offer_pk>/clause-checklist/start/",
        views.checklist_create,
        name="checklist-create",
    ),
    path(
        "offers/<int:offer_pk>/clause-checklist/workbook/",
        views.checklist_workbook_download,
        name="checklist-workbook",
    ),
    path(
        "offers/<int:offer_pk>/clause-checklist/import/",
        views.checklist_import,
        name="checklist-import",
    ),
    path("clause-checklist-items/<int:pk>/waive/", views.item_waive, name="waive"),
    path("red-flag-waivers/<int:pk>/confirm/", views.waiver_confirm, name="waiver-confirm"),
    path("red-flag-waivers/<int:pk>/withdraw/", views.waiver_withdraw, name="waiver-withdraw"),
    path("red-flag-waivers/<int:pk>/evidence/", views.waiver_evidence, name="waiver-evidence"),
    path("cases/<int:pk>/clause-checklists/", views.comparison, name="comparison"),
    path("offers/<int:offer_pk>/contract-documents/", views.documents, name="documents"),
    path(
        "offers/<int:offer_pk>/contract-documents/upload/",
        views.document_upload,
        name="document-upload",
    ),
    path("offers/<int:offer_pk>/contract-dates/", views.contract_dates, name="contract-dates"),
    path(
        "contract-documents/<int:pk>/download/",
        views.document_download,
        name="document-download",
    ),
    path("clause-checklist-items/<int:pk>/link/", views.item_link, name="item-link"),
    path("clause-checklist-templates/", views.template_list, name="templates"),
    path("clause-checklist-templates/new/", views.template_publish, name="template-publish"),
]
