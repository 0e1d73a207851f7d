"""Reads of packets and packet requests, through the case access rule."""

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from apps.cases.selectors import case_list_for
from apps.core.downloads import StoredFile
from apps.packets.models import AuditPacket, PacketRequest


def packets_of_case(case) -> QuerySet[AuditPacket]:
    return (
        AuditPacket.objects.filter(case=case)
        .select_related("issued_by", "request")
        .order_by("-created_at")
    )


def packet_requests_of_case(case) -> QuerySet[PacketRequest]:
    return PacketRequest.objects.filter(case=case).order_by("-created_at")


def packet_get_for(actor, pk: int) -> AuditPacket:
    if not actor.has_perm("packets.view_auditpacket"):
        return get_object_or_404(AuditPacket.objects.none(), pk=pk)
    visible = AuditPacket.objects.filter(case__in=case_list_for(actor).values("pk"))
    return get_object_or_404(visible.select_related("case", "issued_by", "request"), pk=pk)


def packet_stored_file(packet: AuditPacket) -> StoredFile:
    """The signed PDF as a download sends it, checked against the digest it was issued with."""
    assert packet.file.name is not None  # the file column is not nullable: issued with its PDF
    return StoredFile(
        case_id=packet.case_id,
        record=f"Audit packet {packet.number}",
        name=packet.file.name,
        sha256=packet.sha256,
        filename=f"{packet.number}.pdf",
        content_type="application/pdf",
        storage=packet.file.storage,
    )


def packet_request_get_for(actor, pk: int) -> PacketRequest:
    if not actor.has_perm("packets.view_auditpacket"):
        return get_object_or_404(PacketRequest.objects.none(), pk=pk)
    visible = PacketRequest.objects.filter(case__in=case_list_for(actor).values("pk"))
    return get_object_or_404(visible.select_related("case", "requested_by", "packet"), pk=pk)
