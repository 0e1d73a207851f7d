"""Admin views: issued packets can be inspected, never edited or deleted."""

from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from apps.packets.models import AuditPacket, PacketRequest


class ReadOnlyAdmin(SimpleHistoryAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(AuditPacket)
class AuditPacketAdmin(ReadOnlyAdmin):
    list_display = ["number", "case", "issued_by", "created_at", "page_count", "sha256"]
    list_select_related = ["case", "issued_by"]
    search_fields = ["number", "sha256"]


@admin.register(PacketRequest)
class PacketRequestAdmin(ReadOnlyAdmin):
    list_display = ["number", "case", "requested_by", "status", "progress_pct", "created_at"]
    list_select_related = ["case", "requested_by"]
    list_filter = ["status"]
