from django.contrib import admin

from apps.acceptance import services
from apps.acceptance.models import (
    AcceptanceAttachment,
    AcceptancePlan,
    AcceptanceResult,
    AcceptanceSignOff,
)
from apps.core.admin import RecordAdmin, TrackedAdmin


@admin.register(AcceptancePlan)
class AcceptancePlanAdmin(TrackedAdmin):
    """Edited through the app's service, which voids a sign-off the edit no longer matches."""

    list_display = ("offer", "case", "soak_minutes", "correctness_pass_pct", "fault_minimum")
    editable_fields = services.PLAN_FIELDS

    def update(self, request, obj, *, fields, reason, version):
        return services.acceptance_plan_update(
            actor=request.user, plan=obj, fields=fields, reason=reason, expected_version=version
        )


@admin.register(AcceptanceResult)
class AcceptanceResultAdmin(TrackedAdmin):
    list_display = ("plan", "layer", "fault_kind", "outcome", "performed_at", "recorded_by")
    list_filter = ("layer", "outcome")
    editable_fields = services.RESULT_FIELDS

    def update(self, request, obj, *, fields, reason, version):
        return services.acceptance_result_update(
            actor=request.user, result=obj, fields=fields, reason=reason, expected_version=version
        )


@admin.register(AcceptanceAttachment)
class AcceptanceAttachmentAdmin(RecordAdmin):
    """Stored files are never replaced: the admin shows the digest and storage name only."""

    list_display = ("name", "result", "size_bytes", "sha256", "uploaded_by")


@admin.register(AcceptanceSignOff)
class AcceptanceSignOffAdmin(RecordAdmin):
    """A second tech lead's sign-off, bound to what it saw: only they make it, in the app."""

    list_display = ("plan", "signed_by", "signed_at", "voided_at")
