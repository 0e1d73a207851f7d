from django.urls import path

from apps.workloads import views

app_name = "workloads"
urlpatterns = [
    path("cases/<int:pk>/workloads/", views.case_workloads, name="case"),
    path("cases/<int:pk>/workloads/new/", views.set_upload, name="set_upload"),
    path("workloads/<int:pk>/", views.set_detail, name="set"),
    path("workloads/<int:pk>/download/", views.set_download, name="set_download"),
    path("acceptance/<int:pk>/workloads/", views.plan_sets, name="plan_sets"),
]
