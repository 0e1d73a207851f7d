"""Evidence is received from the harness and tokens are issued in the app: the admin only reads."""

from django.contrib import admin

from apps.core.admin import RecordAdmin
from apps.evidence.models import (
    Baseline,
    EvidenceBundle,
    EvidenceUpload,
    HarnessToken,
    SpecVerification,
)


@admin.register(HarnessToken)
class HarnessTokenAdmin(RecordAdmin):
    list_display = ["prefix", "case", "offer", "created_by", "expires_at", "revoked_at"]
    exclude = ["token_hash"]


@admin.register(EvidenceBundle)
class EvidenceBundleAdmin(RecordAdmin):
    list_display = ["sha256", "case", "offer", "received_at", "size"]


@admin.register(SpecVerification)
class SpecVerificationAdmin(RecordAdmin):
    list_display = ["bundle", "offer", "verdict", "rules_version", "created_at"]


@admin.register(Baseline)
class BaselineAdmin(RecordAdmin):
    """Pinned and unpinned by a tech lead in the app, with a reason each time."""

    list_display = ["bundle", "case", "offer", "pinned_by", "pinned_at", "unpinned_at"]
    list_select_related = ["case", "offer__vendor", "pinned_by"]


@admin.register(EvidenceUpload)
class EvidenceUploadAdmin(admin.ModelAdmin):
    """A receipt, not a record: it keeps no history, and the upload worker alone writes it."""

    list_display = ["sha256", "case", "state", "received_at", "finished_at", "size"]
    list_filter = ["state"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
