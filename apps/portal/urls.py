from django.urls import path

from apps.portal import questionnaire_views as questionnaires
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
    path(
        "portal/<str:token>/questionnaires/<int:pk>/",
        questionnaires.questionnaire_answer,
        name="questionnaire-answer",
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
    # --- The organisation's questionnaires. ---
    path("questionnaires/", questionnaires.questionnaire_index, name="questionnaires"),
    path("questionnaires/new/", questionnaires.questionnaire_create, name="questionnaire-create"),
    path("questionnaires/<int:pk>/", questionnaires.questionnaire_detail, name="questionnaire"),
    path("questionnaires/<int:pk>/draft/", questionnaires.draft_start, name="questionnaire-draft"),
    path("questionnaires/<int:pk>/questions/", questionnaires.question_add, name="question-add"),
    path(
        "questionnaires/<int:pk>/questions/<int:question_pk>/",
        questionnaires.question_edit,
        name="question-edit",
    ),
    path(
        "questionnaires/<int:pk>/questions/<int:question_pk>/remove/",
        questionnaires.question_remove,
        name="question-remove",
    ),
    path(
        "questionnaires/<int:pk>/publish/",
        questionnaires.version_publish,
        name="questionnaire-publish",
    ),
    path(
        "questionnaires/<int:pk>/versions/<int:number>/",
        questionnaires.version_detail,
        name="questionnaire-version",
    ),
]
