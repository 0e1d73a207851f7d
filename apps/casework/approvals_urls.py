"""The approval pages, under one name (``approvals:``): a case's gates and decisions,
and my work (the dashboard of what waits for one person, across every case)."""

from django.urls import path

from apps.approvals import views as approval_views
from apps.casework import area_views, views

app_name = "approvals"
urlpatterns = [
    path("cases/<int:pk>/approval/", area_views.case_approval, name="case"),
    path("cases/<int:pk>/approval/submit/", approval_views.case_submit, name="submit"),
    path("cases/<int:pk>/approval/decide/", approval_views.case_decide, name="decide"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("dashboard/waiting/", views.waiting, name="waiting"),
    path("dashboard/digest/", views.digest_preference, name="digest"),
]
