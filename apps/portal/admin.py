"""Invitations and what vendors proposed are made in the app; the admin only reads them."""

from django.contrib import admin

from apps.core.admin import RecordAdmin
from apps.portal.models import (
    InvitationUse,
    Proposal,
    Question,
    Questionnaire,
    QuestionnaireAnswer,
    QuestionnaireVersion,
    SentQuestionnaire,
    VendorDocument,
    VendorInvitation,
)


@admin.register(VendorInvitation)
class VendorInvitationAdmin(RecordAdmin):
    list_display = ["contact_name", "email", "offer", "expires_at", "revoked_at", "created_at"]
    list_select_related = ["offer__vendor"]
    exclude = ["link_digest"]


@admin.register(InvitationUse)
class InvitationUseAdmin(RecordAdmin):
    list_display = ["invitation", "kind", "detail", "created_at"]
    list_select_related = ["invitation__offer__vendor"]


@admin.register(Proposal)
class ProposalAdmin(RecordAdmin):
    list_display = ["invitation", "section", "claim", "status", "reviewed_by", "updated_at"]
    list_select_related = ["invitation__offer__vendor", "reviewed_by"]


@admin.register(VendorDocument)
class VendorDocumentAdmin(RecordAdmin):
    list_display = ["invitation", "kind", "name", "size_bytes", "status", "created_at"]
    list_select_related = ["invitation__offer__vendor"]


@admin.register(Questionnaire)
class QuestionnaireAdmin(RecordAdmin):
    list_display = ["title", "owner", "created_at"]
    list_select_related = ["owner"]


@admin.register(QuestionnaireVersion)
class QuestionnaireVersionAdmin(RecordAdmin):
    list_display = ["questionnaire", "number", "published_at", "published_by"]
    list_select_related = ["questionnaire", "published_by"]


@admin.register(Question)
class QuestionAdmin(RecordAdmin):
    list_display = ["questionnaire_version", "position", "text", "kind"]
    list_select_related = ["questionnaire_version__questionnaire"]


@admin.register(SentQuestionnaire)
class SentQuestionnaireAdmin(RecordAdmin):
    list_display = ["invitation", "questionnaire_version", "submitted_at"]
    list_select_related = ["invitation__offer__vendor", "questionnaire_version__questionnaire"]


@admin.register(QuestionnaireAnswer)
class QuestionnaireAnswerAdmin(RecordAdmin):
    list_display = ["sent", "question", "value"]
    list_select_related = ["question"]
