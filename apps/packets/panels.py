"""The "Audit packets" panel of the case page: two queries, whatever the number of packets."""

from django.urls import reverse
from django.utils.translation import gettext as _

from apps.core.contributions import CasePanel
from apps.packets.models import DocumentKind, PacketRequest, kinds_issuable_by
from apps.packets.selectors import packet_requests_of_case, packets_of_case

SHOWN = 10

# Shows tracked records only: a packet request's progress is written without history
# (``services.packet_request_progress``), so the panel says only that one is being
# prepared; its status page follows the progress.


def case_panel(case, *, actor) -> CasePanel:
    packets = list(packets_of_case(case)[:SHOWN])
    in_progress = (
        packet_requests_of_case(case)
        .filter(status__in=[PacketRequest.Status.QUEUED, PacketRequest.Status.RUNNING])
        .first()
    )
    return CasePanel(
        title=_("Audit packets"),
        template="packets/panel.html",
        context={
            "case": case,
            "packets": packets,
            "in_progress": in_progress,
            "can_request": actor.has_perm("packets.add_packetrequest"),
            # The deliverables this person's role owns, each issued on its own.
            "deliverables": [
                DocumentKind(kind)
                for kind in kinds_issuable_by(actor)
                if kind != DocumentKind.PACKET
            ],
        },
        order=90,
        fix_url=reverse("packets:list", args=[case.pk]),
        fix_permission="packets.add_packetrequest",
        started=bool(packets) or in_progress is not None,
    )
