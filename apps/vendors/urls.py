from django.urls import path

from apps.vendors import views

app_name = "vendors"
urlpatterns = [
    path("vendors/", views.vendor_list, name="list"),
    path("vendors/new/", views.vendor_create, name="create"),
    path("vendors/<int:pk>/", views.vendor_detail, name="detail"),
    path("vendors/<int:pk>/edit/", views.vendor_edit, name="edit"),
]
