"""Admin views: issued packets can be inspected, never edited, reverted or deleted."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from apps.core.admin import RecordAdmin
from apps.packets.models import AuditPacket, PacketRequest


@admin.register(AuditPacket)
class AuditPacketAdmin(RecordAdmin):
    list_display = ["number", "case", "issued_by", "created_at", "page_count", "sha256"]
    list_select_related = ["case", "issued_by"]
    search_fields = ["number", "sha256"]
    # The storage folder is not served: the file leaves only through the download
    # view, which checks the reader's access and the stored digest.
    exclude = ["file"]
    readonly_fields = ["download"]

    @admin.display(description=_("file"))
    def download(self, packet: AuditPacket) -> str:
        url = reverse("packets:download", args=[packet.pk])
        return format_html('<a href="{}">{}</a>', url, _("Download the PDF"))


@admin.register(PacketRequest)
class PacketRequestAdmin(RecordAdmin):
    list_display = ["number", "case", "requested_by", "status", "progress_pct", "created_at"]
    list_select_related = ["case", "requested_by"]
    list_filter = ["status"]
