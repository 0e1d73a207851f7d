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
]
