from django.urls import path

from apps.portal import views

app_name = "portal"
urlpatterns = [
    # --- The vendor's side: every path starts with the invitation's link secret. ---
    path("portal/<str:token>/", views.start, name="start"),
    path("portal/<str:token>/answers/", views.home, name="home"),
    path("portal/<str:token>/sign-out/", views.sign_out, name="sign_out"),
    path("portal/<str:token>/answers/documents/", views.documents, name="documents"),
    path("portal/<str:token>/answers/<slug:section>/", views.section, name="section"),
    path(
        "portal/<str:token>/answers/<slug:section>/replies/<int:pk>/",
        views.reply,
        name="reply",
    ),
    # --- The organisation's side: invitations and the review of what vendors proposed. ---
    path("offers/<int:offer_pk>/vendor/", views.invitations, name="invitations"),
    path(
        "offers/<int:offer_pk>/vendor/<int:pk>/revoke/",
        views.invitation_revoke_view,
        name="invitation-revoke",
    ),
    path("offers/<int:offer_pk>/vendor/answers/", views.answers, name="answers"),
    path(
        "offers/<int:offer_pk>/vendor/answers/<int:pk>/decide/",
        views.proposal_decide,
        name="proposal-decide",
    ),
    path(
        "offers/<int:offer_pk>/vendor/answers/<slug:section>/decide/",
        views.section_decide,
        name="section-decide",
    ),
    path(
        "offers/<int:offer_pk>/vendor/documents/<int:pk>/decide/",
        views.document_decide,
        name="document-decide",
    ),
    path(
        "offers/<int:offer_pk>/vendor/documents/<int:pk>/file/",
        views.document_download,
        name="document-download",
    ),
    path("offers/<int:offer_pk>/vendor/claims/", views.claims, name="claims"),
]
