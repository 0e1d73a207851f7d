"""The offer pages, under one name (``offers:``); an offer's page gathers what every
app records about it."""

from django.urls import path

from apps.casework import area_views, views
from apps.offers import views as offer_views

app_name = "offers"
urlpatterns = [
    path("offers/new/<int:case_pk>/", offer_views.offer_create, name="create"),
    path("offers/<int:pk>/", views.offer_detail, name="detail"),
    path("offers/<int:pk>/edit/", offer_views.offer_edit, name="edit"),
    path("offers/<int:pk>/spec/", area_views.declared_spec_edit, name="spec"),
]
