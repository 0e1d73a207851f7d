"""Harness tokens, evidence bundles and their spec verifications (docs/rules/evidence.md)."""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.bounds import REASON_MAX_LENGTH
from apps.core.models import StoredFileRecord, TrackedModel


class HarnessToken(TrackedModel):
    """A scoped upload credential for one case (optionally one offer), stored hashed."""

    case = models.ForeignKey(
        "cases.ProcurementCase", on_delete=models.CASCADE, related_name="harness_tokens"
    )
    offer = models.ForeignKey(
        "offers.Offer",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="harness_tokens",
        verbose_name=_("offer"),
    )
    token_hash = models.CharField(_("token SHA-256"), max_length=64, unique=True, editable=False)
    prefix = models.CharField(_("prefix"), max_length=16, editable=False)
    nonce = models.CharField(_("run nonce"), max_length=64, unique=True, editable=False)
    label = models.CharField(_("label"), max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    expires_at = models.DateTimeField(_("expires at"))
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    last_used_at = models.DateTimeField(_("last used at"), null=True, blank=True)
    history = HistoricalRecords(excluded_fields=["token_hash"])

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("harness token")

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.case})"

    def state(self, now=None) -> str:
        now = now or timezone.now()
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= now:
            return "expired"
        return "active"


class EvidenceBundle(TrackedModel, StoredFileRecord):
    """One uploaded bundle: its raw bytes in file storage, digest, and what the server parsed."""

    case = models.ForeignKey(
        "cases.ProcurementCase", on_delete=models.CASCADE, related_name="evidence_bundles"
    )
    offer = models.ForeignKey(
        "offers.Offer",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="evidence_bundles",
    )
    token = models.ForeignKey(
        HarnessToken, on_delete=models.PROTECT, null=True, related_name="bundles"
    )
    # One bundle per body: a re-sent bundle finds the record it already made.
    sha256 = models.CharField(_("SHA-256"), max_length=64, unique=True)
    size = models.PositiveBigIntegerField(_("size (bytes)"))
    # The evidence tables name their size column ``size``: None drops the base's column
    # (Django allows it; the type stubs cannot say so).
    size_bytes = None  # type: ignore[assignment]
    format_version = models.CharField(_("format version"), max_length=50)
    harness_version = models.CharField(_("harness version"), max_length=50, blank=True)
    bundle_uuid = models.CharField(_("bundle id"), max_length=64, blank=True)
    run_started_at = models.DateTimeField(_("run started (harness clock)"), null=True, blank=True)
    run_finished_at = models.DateTimeField(_("run finished (harness clock)"), null=True, blank=True)
    received_at = models.DateTimeField(_("received (server clock)"))
    host_id = models.CharField(_("host id"), max_length=80, blank=True)
    # The machine a run came from, as composition compares bundles (NULL on bundles
    # stored before it was kept: their machine is not compared).
    host_name = models.CharField(_("host name"), max_length=255, null=True, blank=True)
    gpu_uuids = models.JSONField(_("GPU UUIDs seen"), null=True, blank=True)
    nonce = models.CharField(_("nonce"), max_length=64)
    summary = models.JSONField(_("server-recomputed summary"), default=dict, blank=True)
    client_summary_disagreements = models.JSONField(
        _("client summaries that disagree with the raw data"), default=list, blank=True
    )
    # Set on demo bundles only (apps.evidence.demo): every page and packet showing the
    # bundle prints it, so datasheet values are never read as measurements.
    demo_note = models.CharField(_("demo data"), max_length=300, null=True, blank=True)
    history = HistoricalRecords()
    late_history_columns = ("demo_note", "host_name", "gpu_uuids")

    class Meta:
        ordering = ["-received_at", "-pk"]
        verbose_name = _("evidence bundle")
        # Newest first, as lists and search read bundles: a search stops at its first matches.
        indexes = [models.Index(fields=["-received_at", "-id"], name="bundles_newest")]

    def __str__(self) -> str:
        return f"Evidence {self.sha256[:12]} ({self.case})"


class Verdict(models.TextChoices):
    VERIFIED = "verified", _("Verified")
    FINDINGS = "findings", _("Findings")
    FAILED = "failed", _("Failed")
    INSUFFICIENT = "insufficient", _("Insufficient evidence")


class SpecVerification(TrackedModel):
    """The offer's verification as composed when one bundle arrived
    (docs/rules/evidence.md#composition).

    Each part (inventory, environment, benchmarks, load test, network, soak,
    correctness) comes from the newest bundle that measured it, named in
    ``sources`` and in each check's ``bundle``; ``findings`` holds what keeps the
    composition from being confirmed (bundles from different machines).
    Verifications recorded before composition have ``sources`` NULL: they are
    the checks of their own bundle alone.
    """

    bundle = models.OneToOneField(
        EvidenceBundle, on_delete=models.CASCADE, related_name="verification"
    )
    offer = models.ForeignKey(
        "offers.Offer",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="spec_verifications",
    )
    verdict = models.CharField(_("verdict"), max_length=20, choices=Verdict.choices)
    checks = models.JSONField(_("checks"), default=list, blank=True)
    headline = models.JSONField(_("verified numbers"), default=dict, blank=True)
    rules_version = models.CharField(_("rules version"), max_length=50)
    sources = models.JSONField(_("bundle of each part"), null=True, blank=True)
    findings = models.JSONField(_("findings that block confirmation"), null=True, blank=True)
    measured_at = models.DateTimeField(_("oldest measurement relied on"), null=True, blank=True)
    history = HistoricalRecords()
    late_history_columns = ("sources", "findings", "measured_at")

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("spec verification")

    def __str__(self) -> str:
        return f"{self.get_verdict_display()} — {self.bundle}"


class EvidenceUpload(StoredFileRecord):
    """One received upload: its bytes are stored and their reading runs in a worker.

    The upload endpoint only authenticates, bounds the size, checks the digest
    the harness sent and stores the bytes; reading them (format, schema,
    artifacts, nonce), recomputing and verifying is the worker's task, which
    ends the upload ``verified`` (with its bundle) or ``refused`` (with the
    reason, and the stored bytes removed). A refused or failed upload keeps its
    row, so the harness and the tech lead see why; the same bytes may be sent
    again. Not a regulated record: the bundle it becomes is.
    """

    class State(models.TextChoices):
        RECEIVED = "received", _("Received, being verified")
        VERIFIED = "verified", _("Verified")
        REFUSED = "refused", _("Refused")
        FAILED = "failed", _("Failed on the server")

    token = models.ForeignKey(HarnessToken, on_delete=models.PROTECT, related_name="uploads")
    case = models.ForeignKey(
        "cases.ProcurementCase", on_delete=models.CASCADE, related_name="evidence_uploads"
    )
    size = models.PositiveBigIntegerField(_("size (bytes)"))
    # The evidence tables name their size column ``size``: None drops the base's column
    # (Django allows it; the type stubs cannot say so).
    size_bytes = None  # type: ignore[assignment]
    state = models.CharField(
        _("state"), max_length=20, choices=State.choices, default=State.RECEIVED
    )
    received_at = models.DateTimeField(_("received"), default=timezone.now)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    bundle = models.OneToOneField(
        EvidenceBundle,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="upload",
    )
    refusal = models.TextField(_("why it was refused"), blank=True)
    refusal_field = models.CharField(_("refused field"), max_length=300, blank=True)
    refusal_status = models.PositiveSmallIntegerField(_("refusal HTTP status"), null=True)

    class Meta:
        ordering = ["-received_at", "-pk"]
        verbose_name = _("evidence upload")
        constraints = [
            # One live upload per body: a re-send finds it; a refused one may be sent again.
            models.UniqueConstraint(
                fields=["sha256"],
                condition=models.Q(state__in=["received", "verified"]),
                name="evidence_upload_one_live_per_sha256",
            )
        ]

    def __str__(self) -> str:
        return f"Upload {self.sha256[:12]} ({self.get_state_display()})"

    @property
    def finished(self) -> bool:
        return self.state != self.State.RECEIVED


class Baseline(TrackedModel):
    """A verified bundle a tech lead pinned as the known-good run of an offer, or of the case.

    Later runs are compared with it metric by metric (docs/rules/evidence.md#baseline, "equal
    or better than the baseline"). Never deleted: unpinning or replacing one sets
    ``unpinned_at``, so the history shows every baseline a comparison ever used.
    ``offer`` empty: the case's baseline (the team's own known-good hardware),
    which every offer without its own is compared with.
    """

    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.PROTECT,
        related_name="evidence_baselines",
        verbose_name=_("case"),
    )
    offer = models.ForeignKey(
        "offers.Offer",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="evidence_baselines",
        verbose_name=_("offer"),
    )
    bundle = models.ForeignKey(
        EvidenceBundle,
        on_delete=models.PROTECT,
        related_name="baselines",
        verbose_name=_("evidence bundle"),
    )
    pin_reason = models.TextField(_("why this run is the baseline"), max_length=REASON_MAX_LENGTH)
    pinned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("pinned by"),
    )
    pinned_at = models.DateTimeField(_("pinned at"))
    unpinned_at = models.DateTimeField(_("unpinned at"), null=True, blank=True)
    unpinned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("unpinned by"),
    )
    # A replaced baseline's reason quotes the new one's: a little longer than what is typed.
    unpin_reason = models.TextField(
        _("why it was unpinned"), max_length=REASON_MAX_LENGTH + 100, blank=True
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["-pinned_at", "-pk"]
        verbose_name = _("baseline")
        verbose_name_plural = _("baselines")
        constraints = [
            # One baseline in force per offer, and one for the case as a whole.
            models.UniqueConstraint(
                fields=["offer"],
                condition=models.Q(unpinned_at__isnull=True, offer__isnull=False),
                name="evidence_baseline_one_per_offer",
            ),
            models.UniqueConstraint(
                fields=["case"],
                condition=models.Q(unpinned_at__isnull=True, offer__isnull=True),
                name="evidence_baseline_one_per_case",
            ),
        ]

    def __str__(self) -> str:
        return f"Baseline {self.bundle.sha256[:12]} ({self.offer or self.case})"

    @property
    def in_force(self) -> bool:
        return self.unpinned_at is None
