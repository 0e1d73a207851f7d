"""The Celery task that issues a packet (docs/rules/audit.md#audit-packet).

Acknowledged late, so a worker that dies mid-render leaves the message to be
delivered again; ``packet_issue`` is idempotent, so a second delivery either
returns the packet already issued or issues it once. A database outage is
retried with back-off; any other failure marks the request failed (with no
packet row and no stored file) rather than retrying a render that will fail
the same way.
"""

import logging

from celery import shared_task
from django.db import DatabaseError

from apps.packets.models import PacketRequest
from apps.packets.services import packet_issue, packet_request_fail

logger = logging.getLogger(__name__)

MAX_RETRIES = 3


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=MAX_RETRIES)
def issue_packet_task(self, packet_request_pk: int) -> int | None:
    """Issue the packet of one request; returns the ``AuditPacket`` pk, or None on failure."""
    packet_request = PacketRequest.objects.select_related("case", "requested_by").get(
        pk=packet_request_pk
    )
    if packet_request.status == PacketRequest.Status.FAILED:
        return None
    try:
        return packet_issue(packet_request=packet_request).pk
    except DatabaseError as error:
        if self.request.retries < MAX_RETRIES and not self.request.is_eager:
            raise self.retry(exc=error, countdown=2 ** (self.request.retries + 2)) from error
        logger.exception("Packet %s failed after retries", packet_request.number)
        _fail(packet_request_pk, error)
    except Exception as error:  # the request must end "failed", whatever broke
        logger.exception("Packet %s could not be issued", packet_request.number)
        _fail(packet_request_pk, error)
    return None


def _fail(packet_request_pk: int, error: Exception) -> None:
    packet_request = PacketRequest.objects.get(pk=packet_request_pk)
    packet_request_fail(packet_request, error=f"{type(error).__name__}: {error}")
