"""Invitations and what vendors proposed are made in the app; the admin only reads them."""

from django.contrib import admin

from apps.core.admin import RecordAdmin
from apps.portal.models import InvitationUse, Proposal, VendorDocument, VendorInvitation


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
