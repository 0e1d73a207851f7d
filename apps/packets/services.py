"""Writes for audit packets: request one, issue it, record a failure.

An issued packet is never changed: there is no update service, and the model
refuses saves of an existing row and deletes. A failed issue leaves neither
an ``AuditPacket`` row nor a stored file; its request says why.
"""

import hashlib
import logging
import tempfile
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.audit.services import chain_head_record
from apps.core.background import dispatch_on_commit
from apps.core.notifications import Event, notify
from apps.core.services import tracked_create, tracked_update
from apps.packets.composition import packet_composer
from apps.packets.document import nothing_to_issue_message, packet_document
from apps.packets.models import (
    ISSUE_PERMISSIONS,
    AuditPacket,
    DocumentKind,
    PacketRequest,
    kind_filter,
    packet_number,
)
from apps.packets.signing import get_signer, sign_pdf

logger = logging.getLogger(__name__)

NUMBER_ATTEMPTS = 5
# A request still "queued" or "running" after this long lost its worker; a new
# request may then be made (the broker re-delivers the old one too: acks_late).
STALE_AFTER = timedelta(hours=1)
STORAGE_DIR = "packets"
# The share of the progress bar the chapters' layout takes, from its start to its end.
LAYOUT_START, LAYOUT_END = 15, 80


def organisation() -> str:
    return settings.ORGANISATION_NAME or "Diligence"


def packet_language(requested: str | None) -> str:
    """The language a packet is written in: the one asked for, or the one the request
    came in, or the site's default; always one the catalogue has."""
    codes = [code for code, _name in settings.LANGUAGES]
    if requested:
        if requested not in codes:
            raise ValidationError(
                {
                    "language": _("Packets are written in %(languages)s.")
                    % {"languages": ", ".join(codes)}
                }
            )
        return requested
    current = translation.get_language() or settings.LANGUAGE_CODE
    return next((code for code in codes if current.startswith(code.split("-")[0])), codes[0])


def document_kind(requested: str | None) -> DocumentKind:
    """The kind of document asked for; the whole-case packet unless another is named."""
    if not requested:
        return DocumentKind.PACKET
    if requested not in DocumentKind.values:
        raise ValidationError(
            {
                "kind": _("Documents are of these kinds: %(kinds)s.")
                % {"kinds": ", ".join(DocumentKind.values)}
            }
        )
    return DocumentKind(requested)


def packet_request_create(
    *,
    actor,
    case,
    queue: bool = True,
    language: str | None = None,
    kind: str | None = None,
) -> PacketRequest:
    """Reserve the next number for a document of ``case`` and queue the task after commit.

    ``kind`` is the whole-case packet by default, or one of the deliverables,
    which only the roles owning its area may issue. A second request for the
    same kind in the same language while one is still in progress returns that
    one, so a double click never issues two documents. ``queue=False`` leaves
    running the task to the caller (the ``issue_packet`` command runs it
    in-process). ``language`` defaults to the language of the request.
    """
    if not actor.has_perm("packets.add_packetrequest"):
        raise PermissionDenied("You may not request audit packets.")
    kind = document_kind(kind)
    if not actor.has_perm(ISSUE_PERMISSIONS[kind]):
        raise PermissionDenied(
            _("Your role may not issue the %(document)s.") % {"document": kind.label.lower()}
        )
    language = packet_language(language)
    if not packet_composer().has_chapters(case, kind):
        raise ValidationError({"kind": nothing_to_issue_message(kind)})
    active = (
        PacketRequest.objects.filter(
            kind_filter(kind),
            case=case,
            language=language,
            status__in=[PacketRequest.Status.QUEUED, PacketRequest.Status.RUNNING],
            created_at__gte=timezone.now() - STALE_AFTER,
        )
        .order_by("-created_at")
        .first()
    )
    if active is not None:
        return active
    from apps.packets.tasks import issue_packet_task

    packet_request = _reserve_number(actor=actor, case=case, language=language, kind=kind)
    if queue:
        dispatch_on_commit(issue_packet_task, packet_request.pk)
    return packet_request


def _reserve_number(
    *,
    actor,
    case,
    language: str = settings.LANGUAGE_CODE,
    kind: str = DocumentKind.PACKET,
) -> PacketRequest:
    org, year = organisation(), timezone.now().year
    of_the_year = PacketRequest.objects.filter(organisation=org, year=year)
    for attempt in range(NUMBER_ATTEMPTS):
        try:
            # Its own savepoint: on PostgreSQL a failed insert would otherwise
            # poison the surrounding transaction.
            with transaction.atomic():
                # Requests made at once wait here for each other: the year's last
                # request is locked, and the next number read once the one before it
                # is taken (on SQLite, write transactions wait for each other).
                list(of_the_year.select_for_update().order_by("-sequence")[:1])
                sequence = (of_the_year.aggregate(last=Max("sequence"))["last"] or 0) + 1
                return tracked_create(
                    PacketRequest,
                    actor=actor,
                    reason=_requested_reason(kind),
                    case=case,
                    requested_by=actor,
                    organisation=org,
                    year=year,
                    sequence=sequence,
                    number=packet_number(year, sequence, kind),
                    language=language,
                    kind=kind,
                )
        except (IntegrityError, ValidationError):
            # Another request took this number between our read and our insert: the
            # year's first, when there was no request yet to wait on.
            if attempt == NUMBER_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


# What a request ends in is history (who asked, and whether it was issued or failed);
# the way there (the step, the percentage, each chapter laid out) is progress, written
# on the request without a history row.
TRACKED_STATUSES = {PacketRequest.Status.DONE, PacketRequest.Status.FAILED}


def packet_request_progress(
    packet_request: PacketRequest, *, percent: int, step: str, status=None, chapters=None
) -> PacketRequest:
    fields = {"progress_pct": percent, "step": step}
    if status is not None:
        fields["status"] = status
    if chapters is not None:
        fields["chapters"] = chapters
    if status in TRACKED_STATUSES:
        return _update_unless_issued(packet_request, reason=step, fields=fields)
    # One statement: never over a request another attempt has already issued.
    # untracked: progress is not history; the request's history keeps its outcome
    PacketRequest.objects.filter(pk=packet_request.pk).exclude(
        status=PacketRequest.Status.DONE
    ).update(**fields, updated_at=timezone.now())
    return PacketRequest.objects.get(pk=packet_request.pk)


def packet_request_fail(packet_request: PacketRequest, *, error: str) -> PacketRequest:
    return _update_unless_issued(
        packet_request,
        reason="Packet could not be issued",
        fields={"status": PacketRequest.Status.FAILED, "error": error[:2000]},
    )


def _update_unless_issued(packet_request: PacketRequest, *, reason: str, fields) -> PacketRequest:
    # A second attempt at the same request (the broker delivered the message
    # again while the first still ran) must not move an issued request back to
    # "running", "failed" or an earlier step once the other attempt issued it.
    with transaction.atomic():
        current = PacketRequest.objects.select_for_update().get(pk=packet_request.pk)
        if current.status == PacketRequest.Status.DONE:
            return current
        return tracked_update(
            current, actor=packet_request.requested_by, reason=reason, fields=fields
        )


def packet_storage_path(packet_request: PacketRequest, sha256: str) -> str:
    # The digest in the name keeps two attempts at the same request (a
    # redelivered task while the first still runs) from touching each other's file.
    return f"{STORAGE_DIR}/{packet_request.number}-{sha256[:16]}.pdf"


def packet_issue(*, packet_request: PacketRequest) -> AuditPacket:
    """Render, sign and store the packet of a request, in its language; idempotent.

    Re-running a request that already issued returns its packet; a failure
    leaves no packet row and removes the file it stored. Each chapter is
    reported on the request as it is laid out.
    """
    with translation.override(packet_request.language_code):
        return _issue(packet_request)


def _issue(packet_request: PacketRequest) -> AuditPacket:
    # WeasyPrint is imported here, not at module level: importing it parses its
    # stylesheets, which every page view and management command would pay for.
    from apps.packets.rendering import render_packet

    existing = AuditPacket.objects.filter(request=packet_request).first()
    if existing is not None:
        return existing
    packet_request = packet_request_progress(
        packet_request,
        percent=5,
        step="Gathering the case records",
        status=PacketRequest.Status.RUNNING,
    )
    with tempfile.TemporaryDirectory(prefix="packet-") as workdir:
        unsigned, signed = Path(workdir) / "unsigned.pdf", Path(workdir) / "signed.pdf"
        packet_signer = get_signer()
        generated_at = timezone.now()
        document = packet_document(
            packet_request.case,
            number=packet_request.number,
            requested_by=packet_request.requested_by,
            packet_signer=packet_signer,
            generated_at=generated_at,
            defer_attachments=True,
            kind=packet_request.document_kind,
        )
        chapters: list[dict] = [{"title": c.title, "pages": None} for c in document.chapters]
        packet_request = packet_request_progress(
            packet_request, percent=LAYOUT_START, step="Laying out the pages", chapters=chapters
        )

        def chapter_laid_out(index: int, pages: int) -> None:
            nonlocal packet_request
            chapters[index] = {**chapters[index], "pages": pages}
            done = sum(1 for chapter in chapters if chapter["pages"] is not None)
            packet_request = packet_request_progress(
                packet_request,
                percent=LAYOUT_START + (LAYOUT_END - LAYOUT_START) * done // len(chapters),
                step="Laying out the pages",
                chapters=[dict(chapter) for chapter in chapters],
            )

        def write_attachments(poll) -> None:
            # The full history is written while the chapters are laid out: none prints
            # a digest of it; the front matter, laid out last, does.
            document.write_attachments(Path(workdir), between=poll)

        page_count = render_packet(
            document, unsigned, on_chapter=chapter_laid_out, meanwhile=write_attachments
        )
        packet_request = packet_request_progress(packet_request, percent=85, step="Signing")
        signed_at = sign_pdf(
            unsigned,
            signed,
            packet_signer,
            reason=f"{_signed_as(packet_request.document_kind)} {packet_request.number}",
            attachments=document.attachments,
        )
        digest, size = _sha256_and_size(signed)
        packet_request = packet_request_progress(packet_request, percent=95, step="Storing")
        return _store(
            packet_request,
            signed,
            sha256=digest,
            size_bytes=size,
            page_count=page_count,
            manifest_sha256=document.manifest_sha256,
            packet_signer=packet_signer,
            chain_head=document.manifest["chain"],
            signed_at=signed_at,
        )


def _issued_tell(packet_request: PacketRequest, packet: AuditPacket) -> None:
    """Whoever asked for the document, and the case's owner, hear it is issued (it is made
    in the background) (docs/notifications.md#who-is-told)."""
    case = packet_request.case
    notify(
        Event.PACKET_ISSUED,
        case=case,
        text=gettext_lazy("%(kind)s %(number)s of %(case)s is signed and issued."),
        params={
            "kind": DocumentKind(packet_request.document_kind).label,
            "number": packet.number,
            "case": case.name,
        },
        path=reverse("packets:list", args=[case.pk]),
        recipients=[packet_request.requested_by, case.owner],
    )


def _signed_as(kind: str) -> str:
    # What the document is, in the signature's reason (every PDF reader shows it) and
    # in the history's reasons: in English, as every reason recorded here.
    if kind == DocumentKind.PACKET:
        return "Audit packet"
    with translation.override("en"):
        return str(DocumentKind(kind).label)


def _requested_reason(kind: str) -> str:
    return "Packet requested" if kind == DocumentKind.PACKET else f"{_signed_as(kind)} requested"


def _sha256_and_size(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest.hexdigest(), path.stat().st_size


def _store(
    packet_request, signed: Path, *, packet_signer, chain_head: dict, **fields
) -> AuditPacket:
    path = packet_storage_path(packet_request, fields["sha256"])
    with open(signed, "rb") as handle:
        stored = default_storage.save(path, File(handle))
    try:
        with transaction.atomic():
            packet = tracked_create(
                AuditPacket,
                actor=packet_request.requested_by,
                reason="Packet issued",
                request=packet_request,
                case=packet_request.case,
                organisation=packet_request.organisation,
                number=packet_request.number,
                issued_by=packet_request.requested_by,
                file=stored,
                signer_subject=packet_signer.subject,
                signer_certificate_sha256=packet_signer.fingerprint_sha256,
                signer_certificate_pem=packet_signer.certificate_pem,
                **fields,
            )
            packet_request_progress(
                packet_request, percent=100, step="Issued", status=PacketRequest.Status.DONE
            )
            # Kept outside the database too, once this commits (apps.audit.heads).
            chain_head_record(
                source="packet",
                reference=packet.number,
                head_seq=chain_head["head_seq"],
                head_hash=chain_head["head_hash"],
            )
            _issued_tell(packet_request, packet)
    except Exception:
        default_storage.delete(stored)
        # A redelivered attempt at the same request may have committed first.
        winner = AuditPacket.objects.filter(request=packet_request).first()
        if winner is None:
            raise
        return winner
    except BaseException:
        default_storage.delete(stored)
        raise
    return packet
