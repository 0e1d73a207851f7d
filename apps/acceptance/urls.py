from django.urls import path

from apps.acceptance import views

app_name = "acceptance"
urlpatterns = [
    path("cases/<int:pk>/acceptance/", views.case_acceptance, name="case"),
    path("cases/<int:pk>/acceptance/new/", views.plan_create, name="plan_create"),
    path("acceptance/<int:pk>/", views.plan_detail, name="plan"),
    path("acceptance/<int:pk>/edit/", views.plan_edit, name="plan_edit"),
    path("acceptance/<int:pk>/results/new/", views.result_create, name="result_create"),
    path("acceptance/<int:pk>/sign-off/", views.signoff, name="signoff"),
    path("acceptance/results/<int:pk>/edit/", views.result_edit, name="result_edit"),
    path(
        "acceptance/results/<int:pk>/attachments/new/",
        views.attachment_add,
        name="attachment_add",
    ),
    path("acceptance/attachments/<int:pk>/", views.attachment_download, name="attachment_download"),
]
