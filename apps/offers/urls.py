from django.urls import path

from apps.offers import views

app_name = "offers"
urlpatterns = [
    path("new/<int:case_pk>/", views.offer_create, name="create"),
    path("<int:pk>/", views.offer_detail, name="detail"),
    path("<int:pk>/edit/", views.offer_edit, name="edit"),
    path("<int:pk>/spec/", views.declared_spec_edit, name="spec"),
]
