from django.urls import path

from apps.audit import views

app_name = "audit"
urlpatterns = [
    path("cases/<int:pk>/timeline/", views.case_timeline, name="case-timeline"),
    path(
        "cases/<int:pk>/timeline.csv",
        views.case_timeline_export,
        {"fmt": "csv"},
        name="case-timeline-csv",
    ),
    path(
        "cases/<int:pk>/timeline.json",
        views.case_timeline_export,
        {"fmt": "json"},
        name="case-timeline-json",
    ),
    path("cases/<int:pk>/export/", views.case_export, name="case-export"),
    path(
        "audit/<str:content_type>/<int:object_id>/timeline/",
        views.record_timeline,
        name="record-timeline",
    ),
    path("audit/chain/", views.chain_page, name="chain"),
    path("audit/chain/verify/", views.chain_verify, name="chain-verify"),
    path("audit/verify-export/", views.export_verify, name="verify-export"),
]
