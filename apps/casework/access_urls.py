"""The access pages, under one name (``access:``): the access matrix and network plan,
and their history."""

from django.urls import path

from apps.access import views
from apps.casework import area_views

app_name = "access"
urlpatterns = [
    path("cases/<int:pk>/access-matrix/", views.matrix_detail, name="matrix"),
    path(
        "cases/<int:pk>/access-matrix/workbook/",
        views.matrix_workbook_download,
        name="matrix_workbook",
    ),
    path("cases/<int:pk>/access-matrix/edit/", views.matrix_edit, name="matrix_edit"),
    path("cases/<int:pk>/access-matrix/review/", views.matrix_review, name="matrix_review"),
    path(
        "cases/<int:pk>/access-matrix/controls/<slug:control_key>/accept-risk/",
        views.control_accept_risk,
        name="control_accept_risk",
    ),
    path("cases/<int:pk>/network-plan/", views.plan_detail, name="plan"),
    path("cases/<int:pk>/network-plan/edit/", views.plan_edit, name="plan_edit"),
    path("cases/<int:pk>/access-history/", area_views.access_history, name="history"),
]
