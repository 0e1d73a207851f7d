from django.urls import path

from apps.approvals import views

app_name = "approvals"
urlpatterns = [
    path("cases/<int:pk>/approval/", views.case_approval, name="case"),
    path("cases/<int:pk>/approval/submit/", views.case_submit, name="submit"),
    path("cases/<int:pk>/approval/decide/", views.case_decide, name="decide"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("dashboard/waiting/", views.waiting, name="waiting"),
    path("dashboard/digest/", views.digest_preference, name="digest"),
]
