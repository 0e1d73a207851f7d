from django.urls import path

from apps.offers import views

app_name = "offers"
urlpatterns = [
    path("offers/new/<int:case_pk>/", views.offer_create, name="create"),
    path("offers/<int:pk>/", views.offer_detail, name="detail"),
    path("offers/<int:pk>/edit/", views.offer_edit, name="edit"),
    path("offers/<int:pk>/spec/", views.declared_spec_edit, name="spec"),
]
