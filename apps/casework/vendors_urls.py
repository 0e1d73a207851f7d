"""The vendor pages, under one name (``vendors:``); a vendor's page shows its offers
across every case the viewer may see."""

from django.urls import path

from apps.casework import views
from apps.vendors import views as vendor_views

app_name = "vendors"
urlpatterns = [
    path("vendors/", vendor_views.vendor_list, name="list"),
    path("vendors/new/", vendor_views.vendor_create, name="create"),
    path("vendors/<int:pk>/", views.vendor_detail, name="detail"),
    path("vendors/<int:pk>/edit/", vendor_views.vendor_edit, name="edit"),
    path("vendors/<int:pk>/stewardship/", vendor_views.vendor_stewardship, name="stewardship"),
    path("vendors/<int:pk>/contacts/new/", vendor_views.contact_create, name="contact-create"),
    path("vendor-contacts/<int:pk>/edit/", vendor_views.contact_edit, name="contact-edit"),
    path(
        "vendors/<int:pk>/sub-processors/new/",
        vendor_views.sub_processor_create,
        name="sub-processor-create",
    ),
    path(
        "vendor-sub-processors/<int:pk>/edit/",
        vendor_views.sub_processor_edit,
        name="sub-processor-edit",
    ),
    path(
        "vendors/<int:pk>/certifications/new/",
        vendor_views.certification_create,
        name="certification-create",
    ),
    path(
        "vendor-certifications/<int:pk>/edit/",
        vendor_views.certification_edit,
        name="certification-edit",
    ),
    path(
        "vendor-certifications/<int:pk>/report/",
        vendor_views.certification_report,
        name="certification-report",
    ),
]
