from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from apps.acceptance.models import (
    AcceptanceAttachment,
    AcceptancePlan,
    AcceptanceResult,
    AcceptanceSignOff,
)


@admin.register(AcceptancePlan)
class AcceptancePlanAdmin(SimpleHistoryAdmin):
    list_display = ("offer", "case", "soak_minutes", "correctness_pass_pct", "fault_minimum")


@admin.register(AcceptanceResult)
class AcceptanceResultAdmin(SimpleHistoryAdmin):
    list_display = ("plan", "layer", "fault_kind", "outcome", "performed_at", "recorded_by")
    list_filter = ("layer", "outcome")


@admin.register(AcceptanceAttachment)
class AcceptanceAttachmentAdmin(SimpleHistoryAdmin):
    list_display = ("name", "result", "size_bytes", "sha256", "uploaded_by")
    # Stored files are never replaced: the digest and storage name are not editable.
    readonly_fields = ("sha256", "size_bytes", "storage_name")


@admin.register(AcceptanceSignOff)
class AcceptanceSignOffAdmin(SimpleHistoryAdmin):
    list_display = ("plan", "signed_by", "signed_at", "voided_at")
    readonly_fields = ("layers", "bound_state")
