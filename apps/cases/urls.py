from django.urls import path

from apps.cases import views

app_name = "cases"
urlpatterns = [
    path("cases/", views.case_list, name="list"),
    path("search/", views.search_page, name="search"),
    path("cases/new/", views.case_create, name="create"),
    path("cases/<int:pk>/", views.case_detail, name="detail"),
    path("cases/<int:pk>/area/<slug:area>/", views.case_area, name="area"),
    path("cases/<int:pk>/edit/", views.case_edit, name="edit"),
    path("cases/<int:pk>/waive-offer-minimum/", views.case_offer_minimum_waive, name="waive"),
    path("cases/<int:pk>/history/", views.case_history, name="history"),
]
