"""The case pages, under one name (``cases:``): the case's own pages and those that
show the whole case (the cockpit, an area in full, search) or cut across cases (the
portfolio)."""

from django.urls import path

from apps.cases import views as case_views
from apps.casework import portfolio_views, reassessment_views, views

app_name = "cases"
urlpatterns = [
    path("cases/", case_views.case_list, name="list"),
    path("search/", views.search_page, name="search"),
    path("portfolio/", portfolio_views.portfolio, name="portfolio"),
    path("reassessments/", reassessment_views.reassessment_list, name="reassessments"),
    path(
        "reassessments/vendors/<int:pk>/start/",
        reassessment_views.reassessment_start,
        name="reassessment-start",
    ),
    path("cases/new/", case_views.case_create, name="create"),
    path("cases/<int:pk>/", views.case_detail, name="detail"),
    path("cases/<int:pk>/area/<slug:area>/", views.case_area, name="area"),
    path("cases/<int:pk>/edit/", case_views.case_edit, name="edit"),
    path("cases/<int:pk>/waive-offer-minimum/", case_views.case_offer_minimum_waive, name="waive"),
    path("cases/<int:pk>/history/", case_views.case_history, name="history"),
]
