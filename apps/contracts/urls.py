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
    path("clause-checklist-templates/", views.template_list, name="templates"),
    path("clause-checklist-templates/new/", views.template_publish, name="template-publish"),
]
