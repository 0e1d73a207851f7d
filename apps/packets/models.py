"""Signed audit packets (docs/rules/audit.md#audit-packet): the request that tracks one, and the
issued PDF.

Besides the whole-case packet, each of the four deliverables the procurement
ends in (docs/rules/audit.md#deliverables: the compute spec sheet, the compliance and risk
self-check record, the network and access-control plan, the acceptance and
load-test report) is issued the same way as a document of its own kind.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.models import StoredFileRecord, TrackedModel

NUMBER_PREFIX = "DIL"


class DocumentKind(models.TextChoices):
    """What a signed document is: the whole-case packet, or one of the four deliverables."""

    PACKET = "packet", _("Whole-case audit packet")
    SPEC_SHEET = "spec_sheet", _("Compute spec sheet")
    COMPLIANCE_RECORD = "compliance_record", _("Compliance and risk self-check record")
    NETWORK_PLAN = "network_plan", _("Network and access-control plan")
    ACCEPTANCE_REPORT = "acceptance_report", _("Acceptance and load-test report")


# The code a deliverable's number carries after the prefix; the whole-case packet has none,
# so its numbers read as they always have.
KIND_CODES: dict[str, str] = {
    DocumentKind.PACKET: "",
    DocumentKind.SPEC_SHEET: "SPEC",
    DocumentKind.COMPLIANCE_RECORD: "CMPL",
    DocumentKind.NETWORK_PLAN: "NET",
    DocumentKind.ACCEPTANCE_REPORT: "ACPT",
}

# Who may issue each kind: every reviewing role the whole-case packet; a deliverable,
# the roles that own its area (``apps.packets.roles``).
ISSUE_PERMISSIONS: dict[str, str] = {
    DocumentKind.PACKET: "packets.add_packetrequest",
    DocumentKind.SPEC_SHEET: "packets.issue_spec_sheet",
    DocumentKind.COMPLIANCE_RECORD: "packets.issue_compliance_record",
    DocumentKind.NETWORK_PLAN: "packets.issue_network_plan",
    DocumentKind.ACCEPTANCE_REPORT: "packets.issue_acceptance_report",
}


def packet_number(year: int, sequence: int, kind: str = DocumentKind.PACKET) -> str:
    """The printed number, e.g. ``DIL-2026-000001`` for a whole-case packet or
    ``DIL-NET-2026-000002`` for a network and access-control plan.

    One sequence per organisation and year runs through every kind, so a gap is
    always a failed request; the code after the prefix says which kind it is.
    """
    code = KIND_CODES[DocumentKind(kind)]
    prefix = f"{NUMBER_PREFIX}-{code}" if code else NUMBER_PREFIX
    return f"{prefix}-{year}-{sequence:06d}"


def kind_filter(kind: str, *, prefix: str = "") -> models.Q:
    """Requests (or, with ``prefix="request__"``, packets) of ``kind``; requests made before
    documents had kinds are whole-case packets."""
    same = models.Q(**{f"{prefix}kind": kind})
    if kind == DocumentKind.PACKET:
        same |= models.Q(**{f"{prefix}kind__isnull": True})
    return same


def kinds_issuable_by(actor) -> list[str]:
    """The kinds of document ``actor`` may issue, in the order they are listed."""
    return [kind for kind in DocumentKind.values if actor.has_perm(ISSUE_PERMISSIONS[kind])]


class PacketRequest(TrackedModel):
    """One request to issue a packet: reserves its number and tracks the task's progress."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        FAILED = "failed", _("Failed")
        DONE = "done", _("Done")

    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.PROTECT,
        related_name="packet_requests",
        verbose_name=_("case"),
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("requested by"),
    )
    organisation = models.CharField(_("organisation"), max_length=200)
    year = models.PositiveSmallIntegerField(_("year"))
    sequence = models.PositiveIntegerField(_("sequence"))
    number = models.CharField(_("packet number"), max_length=40)
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.QUEUED
    )
    progress_pct = models.PositiveSmallIntegerField(
        _("progress (%)"), default=0, validators=[MaxValueValidator(100)]
    )
    step = models.CharField(_("step"), max_length=200, blank=True)
    # Each chapter as it is laid out: [{"title": …, "pages": n or null}, …]; null
    # before the layout starts (and for requests made before chapters were reported).
    chapters = models.JSONField(_("chapters"), null=True, blank=True)
    error = models.TextField(_("error"), blank=True)
    # The language the packet is written in; null for requests made before packets
    # could be issued in another language than the default (they are in English).
    language = models.CharField(
        _("language"), max_length=10, choices=settings.LANGUAGES, null=True, blank=True
    )
    # What the document is; null for requests made before the deliverables could be
    # issued on their own (they are whole-case packets).
    kind = models.CharField(
        _("document"), max_length=20, choices=DocumentKind.choices, null=True, blank=True
    )
    history = HistoricalRecords()
    late_history_columns = ("chapters", "language", "kind")
    # Written without a history row while the task runs (``services.packet_request_progress``);
    # the row that records how the request ended carries them, and the timeline leaves them out.
    progress_fields = ("progress_pct", "step", "chapters")

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("packet request")
        verbose_name_plural = _("packet requests")
        permissions = [
            ("issue_spec_sheet", _("Can issue compute spec sheets")),
            ("issue_compliance_record", _("Can issue compliance and risk self-check records")),
            ("issue_network_plan", _("Can issue network and access-control plans")),
            ("issue_acceptance_report", _("Can issue acceptance and load-test reports")),
        ]
        constraints = [
            # A failed request keeps its number, so a gap in the sequence is explained.
            models.UniqueConstraint(
                fields=["organisation", "year", "sequence"], name="packetrequest_sequence"
            ),
            models.UniqueConstraint(fields=["organisation", "number"], name="packetrequest_number"),
        ]

    def __str__(self) -> str:
        return f"{self.number} ({self.get_status_display()})"

    @property
    def language_code(self) -> str:
        return self.language or settings.LANGUAGE_CODE

    @property
    def document_kind(self) -> DocumentKind:
        return DocumentKind(self.kind or DocumentKind.PACKET)

    @property
    def is_packet(self) -> bool:
        return self.document_kind == DocumentKind.PACKET

    @property
    def finished(self) -> bool:
        return self.status in {self.Status.DONE, self.Status.FAILED}

    @property
    def chapters_laid_out(self) -> int:
        return sum(1 for chapter in self.chapters or [] if chapter.get("pages") is not None)


class IssuedPacketError(Exception):
    """An issued packet is immutable: it is never changed, regenerated or deleted."""


class AuditPacket(TrackedModel, StoredFileRecord):
    """An issued, signed PDF packet; stored once with its digest and never changed."""

    request = models.OneToOneField(
        PacketRequest,
        on_delete=models.PROTECT,
        related_name="packet",
        verbose_name=_("request"),
    )
    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.PROTECT,
        related_name="audit_packets",
        verbose_name=_("case"),
    )
    organisation = models.CharField(_("organisation"), max_length=200)
    number = models.CharField(_("packet number"), max_length=40)
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("issued by"),
    )
    file = models.FileField(_("file"), max_length=300)
    # The signed PDF is kept in ``file``, with its storage: None drops the base's column
    # (Django allows it; the type stubs cannot say so).
    storage_name = None  # type: ignore[assignment]
    sha256 = models.CharField(_("SHA-256"), max_length=64, unique=True)
    page_count = models.PositiveIntegerField(_("pages"))
    manifest_sha256 = models.CharField(_("manifest SHA-256"), max_length=64)
    signer_subject = models.CharField(_("signer"), max_length=500)
    signer_certificate_sha256 = models.CharField(_("signer certificate SHA-256"), max_length=64)
    signer_certificate_pem = models.TextField(_("signer certificate (PEM)"))
    signed_at = models.DateTimeField(_("signed at"))
    history = HistoricalRecords()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("audit packet")
        verbose_name_plural = _("audit packets")
        constraints = [
            models.UniqueConstraint(fields=["organisation", "number"], name="auditpacket_number"),
        ]

    def __str__(self) -> str:
        return self.number

    @property
    def document_kind(self) -> DocumentKind:
        return self.request.document_kind

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise IssuedPacketError(f"Packet {self.number} is issued and cannot be changed.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise IssuedPacketError(f"Packet {self.number} is issued and cannot be deleted.")

    def clean(self) -> None:
        if self.request_id and self.number and self.request.number != self.number:
            raise ValidationError({"number": _("The number must be the one its request reserved.")})
