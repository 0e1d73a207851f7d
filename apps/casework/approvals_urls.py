"""The approval pages, under one name (``approvals:``): a case's gates and decisions,
its findings register, and my work (the dashboard of what waits for one person, across
every case)."""

from django.urls import path

from apps.approvals import views as approval_views
from apps.casework import area_views, findings_views, views

app_name = "approvals"
urlpatterns = [
    path("cases/<int:pk>/approval/", area_views.case_approval, name="case"),
    path("cases/<int:pk>/approval/submit/", approval_views.case_submit, name="submit"),
    path("cases/<int:pk>/approval/decide/", approval_views.case_decide, name="decide"),
    path(
        "cases/<int:pk>/approval/chain/decide/",
        approval_views.case_chain_decide,
        name="chain-decide",
    ),
    path("cases/<int:pk>/findings/", findings_views.case_findings, name="findings"),
    path(
        "cases/<int:pk>/findings/accept/",
        findings_views.case_finding_accept,
        name="finding-accept",
    ),
    path(
        "cases/<int:pk>/findings/acceptances/<int:acceptance_pk>/withdraw/",
        findings_views.case_acceptance_withdraw,
        name="acceptance-withdraw",
    ),
    path(
        "cases/<int:pk>/findings/acceptances/<int:acceptance_pk>/document/",
        findings_views.case_acceptance_document,
        name="acceptance-document",
    ),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("dashboard/waiting/", views.waiting, name="waiting"),
    path("dashboard/digest/", views.digest_preference, name="digest"),
    path("dashboard/assign/", views.assign, name="assign"),
]
