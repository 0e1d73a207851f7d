from django.urls import path

from apps.evidence import views

app_name = "evidence"
urlpatterns = [
    path("cases/<int:pk>/evidence/", views.case_evidence, name="case"),
    path("cases/<int:pk>/evidence/bundles/", views.case_bundle_list, name="bundles"),
    path("cases/<int:pk>/harness-tokens/", views.harness_tokens, name="tokens"),
    path("harness-tokens/<int:pk>/revoke/", views.token_revoke, name="token-revoke"),
    path("evidence/<int:pk>/", views.bundle_detail, name="detail"),
    path("evidence/<int:pk>/raw/", views.bundle_raw, name="raw"),
    path("evidence/<int:pk>/baseline/", views.baseline_pin, name="baseline-pin"),
    path("baselines/<int:pk>/unpin/", views.baseline_unpin, name="baseline-unpin"),
    path("harness/diligence-harness.pyz", views.harness_zipapp, name="zipapp"),
]
