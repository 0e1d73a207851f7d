from django.urls import path

from apps.cases import views

app_name = "cases"
urlpatterns = [
    path("", views.case_list, name="list"),
    path("new/", views.case_create, name="create"),
    path("<int:pk>/", views.case_detail, name="detail"),
    path("<int:pk>/edit/", views.case_edit, name="edit"),
    path("<int:pk>/waive-offer-minimum/", views.case_offer_minimum_waive, name="waive"),
    path("<int:pk>/history/", views.case_history, name="history"),
]
