from django.contrib import admin

from apps.contracts import services
from apps.contracts.models import (
    ChecklistItem,
    ChecklistTemplate,
    ClauseChecklist,
    ContractDocument,
    ContractTerms,
    RedFlagWaiver,
    TemplateItem,
)
from apps.core.admin import ReadOnlyInline, RecordAdmin, TrackedAdmin


class TemplateItemInline(ReadOnlyInline):
    model = TemplateItem


@admin.register(ChecklistTemplate)
class ChecklistTemplateAdmin(RecordAdmin):
    """A published template version: the app publishes the next one, never edits it."""

    list_display = ["number", "published_by", "created_at"]
    list_select_related = ["published_by"]
    inlines = [TemplateItemInline]


class ChecklistItemInline(ReadOnlyInline):
    model = ChecklistItem
    fields = ["number", "title", "status", "clause_reference", "reviewer", "reviewed_at"]


class ContractTermsInline(ReadOnlyInline):
    """The terms are saved with the items on the checklist page, under its version."""

    model = ContractTerms


@admin.register(ClauseChecklist)
class ClauseChecklistAdmin(RecordAdmin):
    """Nothing of its own to edit: its items are edited one by one, through the app's service."""

    list_display = ["offer", "template", "updated_at"]
    list_select_related = ["offer__vendor", "template"]
    inlines = [ChecklistItemInline, ContractTermsInline]


@admin.register(ChecklistItem)
class ChecklistItemAdmin(TrackedAdmin):
    """Saved as the checklist page saves it: the editor becomes the reviewer, and a status
    change lapses the item's waiver."""

    list_display = ["checklist", "number", "title", "status", "reviewer"]
    list_select_related = ["checklist", "reviewer"]
    editable_fields = services.ITEM_FIELDS

    def update(self, request, obj, *, fields, reason, version):
        return services.checklist_item_update(
            actor=request.user, item=obj, fields=fields, reason=reason, expected_version=version
        )


@admin.register(RedFlagWaiver)
class RedFlagWaiverAdmin(RecordAdmin):
    """A legal reviewer's acceptance of one risk: only they make it, in the app."""

    list_display = [
        "item",
        "waived_status",
        "waived_by",
        "waived_at",
        "expires_on",
        "confirmed_by",
        "lapsed_at",
    ]
    list_select_related = ["item", "waived_by", "confirmed_by"]


@admin.register(ContractDocument)
class ContractDocumentAdmin(RecordAdmin):
    """A signed contract document's version: uploaded in the app, stored once, never replaced."""

    list_display = ["offer", "kind", "number", "name", "uploaded_by", "created_at"]
    list_select_related = ["offer__vendor", "uploaded_by"]
