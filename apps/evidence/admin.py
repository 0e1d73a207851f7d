from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from apps.evidence.models import EvidenceBundle, EvidenceUpload, HarnessToken, SpecVerification


class ReadOnly:
    """Evidence is immutable and tokens are issued through the app; the admin only reads."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(ReadOnly, SimpleHistoryAdmin):
    pass


@admin.register(HarnessToken)
class HarnessTokenAdmin(ReadOnlyAdmin):
    list_display = ["prefix", "case", "offer", "created_by", "expires_at", "revoked_at"]
    exclude = ["token_hash"]


@admin.register(EvidenceBundle)
class EvidenceBundleAdmin(ReadOnlyAdmin):
    list_display = ["sha256", "case", "offer", "received_at", "size"]


@admin.register(SpecVerification)
class SpecVerificationAdmin(ReadOnlyAdmin):
    list_display = ["bundle", "offer", "verdict", "rules_version", "created_at"]


@admin.register(EvidenceUpload)
class EvidenceUploadAdmin(ReadOnly, admin.ModelAdmin):  # no history: a receipt, not a record
    list_display = ["sha256", "case", "state", "received_at", "finished_at", "size"]
    list_filter = ["state"]
