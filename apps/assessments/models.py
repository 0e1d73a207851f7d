"""Data-export self-assessments and their answers (docs/rules/data-export.md)."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.assessments.audit_facts import ENCRYPTION_CHOICES, SENSITIVITY_CHOICES
from apps.assessments.questions import INDIVIDUALS_MAX, QUESTIONNAIRE_VERSION, QUESTIONS_BY_KEY
from apps.assessments.rules import MECHANISM_STATUS_CHOICES
from apps.core.bounds import DAYS_MAX, REASON_MAX_LENGTH, TEXT_MAX_LENGTH
from apps.core.models import TrackedModel

# A model's weight file, at most a petabyte.
WEIGHT_FILE_BYTES_MAX = 10**15

# Evidence attachments are scans and letters, not datasets.
MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024


def validate_attachment_size(file) -> None:
    # Files already in storage were checked when they were uploaded.
    if getattr(file, "_committed", False):
        return
    if file.size > MAX_ATTACHMENT_BYTES:
        raise ValidationError(
            _("The attachment is %(size)s MiB; the limit is %(limit)s MiB."),
            params={
                "size": round(file.size / 1024 / 1024, 1),
                "limit": MAX_ATTACHMENT_BYTES // 1024 // 1024,
            },
        )


class DataExportAssessment(TrackedModel):
    """A legal reviewer's data-export self-assessment for a case, or for one offer of it."""

    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.CASCADE,
        related_name="data_export_assessments",
        verbose_name=_("case"),
    )
    offer = models.ForeignKey(
        "offers.Offer",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="data_export_assessments",
        verbose_name=_("offer"),
        help_text=_(
            "Only where this offer's vendor sits in a jurisdiction the case one does not cover."
        ),
    )
    jurisdiction = models.CharField(
        _("jurisdiction assessed"),
        max_length=100,
        blank=True,
        help_text=_("Where the data would go, e.g. 'Singapore'. Blank: every vendor of the case."),
    )
    questionnaire_version = models.CharField(
        _("questionnaire version"), max_length=20, default=QUESTIONNAIRE_VERSION, editable=False
    )
    conclusion = models.TextField(
        _("legal and compliance conclusion"), max_length=TEXT_MAX_LENGTH, blank=True
    )
    signed_off_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("signed off by"),
    )
    signed_off_at = models.DateTimeField(_("signed off at"), null=True, blank=True)
    review_by = models.DateField(_("review by"), null=True, blank=True)
    voided_sign_off = models.TextField(
        _("voided sign-off"),
        blank=True,
        help_text=_("Set when an edit voided the last sign-off: whose it was and who voided it."),
    )
    # The status of the mechanism the PRC decision aid names, stated at sign-off
    # (Personal Information Protection Law of the PRC, Art. 38–40). Added after
    # history rows were chained: nullable, and NULL where nothing was stated.
    mechanism_status = models.CharField(
        _("mechanism status"),
        max_length=20,
        choices=MECHANISM_STATUS_CHOICES,
        null=True,
        blank=True,
    )
    mechanism_expected_on = models.DateField(
        _("mechanism expected on"),
        null=True,
        blank=True,
        help_text=_("When a mechanism in progress is expected to be done."),
    )
    mechanism_reference = models.CharField(
        _("mechanism reference"),
        max_length=200,
        null=True,
        blank=True,
        help_text=_("E.g. the standard-contract filing number or the assessment's approval."),
    )
    mechanism_stated_for = models.CharField(
        _("mechanism the status was stated for"),
        max_length=40,
        null=True,
        blank=True,
        editable=False,
    )
    # The facts auditors ask for (docs/rules/data-export.md#audit-facts), recorded beside
    # the questionnaire. Added after history rows were chained: nullable, and NULL where
    # nothing was recorded (read as "not stated").
    encryption_at_rest = models.CharField(
        _("encrypted at rest"), max_length=20, choices=ENCRYPTION_CHOICES, null=True, blank=True
    )
    encryption_at_rest_mechanism = models.CharField(
        _("how it is encrypted at rest"),
        max_length=300,
        null=True,
        blank=True,
        help_text=_("E.g. 'AES-256 volume encryption, keys in our own key management'."),
    )
    encryption_in_transit = models.CharField(
        _("encrypted in transit"), max_length=20, choices=ENCRYPTION_CHOICES, null=True, blank=True
    )
    encryption_in_transit_mechanism = models.CharField(
        _("how it is encrypted in transit"),
        max_length=300,
        null=True,
        blank=True,
        help_text=_("E.g. 'TLS 1.3 on every link; WireGuard tunnel to the cluster'."),
    )
    log_retention_days = models.PositiveIntegerField(
        _("log retention (days)"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(DAYS_MAX)],
        help_text=_("How many days the vendor keeps its access and operation logs."),
    )
    history = HistoricalRecords()
    late_history_columns = (
        "mechanism_status",
        "mechanism_expected_on",
        "mechanism_reference",
        "mechanism_stated_for",
        "encryption_at_rest",
        "encryption_at_rest_mechanism",
        "encryption_in_transit",
        "encryption_in_transit_mechanism",
        "log_retention_days",
    )

    class Meta:
        ordering = ["case_id", "offer_id"]
        verbose_name = _("data-export assessment")
        verbose_name_plural = _("data-export assessments")
        permissions = [("sign_off_dataexportassessment", _("Can sign off data-export assessments"))]
        constraints = [
            models.UniqueConstraint(
                fields=["case"],
                condition=models.Q(offer__isnull=True),
                name="assessment_one_per_case",
            ),
            models.UniqueConstraint(
                fields=["offer"],
                condition=models.Q(offer__isnull=False),
                name="assessment_one_per_offer",
            ),
        ]

    def __str__(self) -> str:
        scope = str(self.offer.vendor) if self.offer is not None else _("whole case")
        return f"{_('Data-export assessment')} — {self.case} ({scope})"

    def clean(self) -> None:
        if self.offer is not None and self.offer.case_id != self.case_id:
            raise ValidationError({"offer": _("This offer belongs to another case.")})
        if self.signed_off_at and not (self.signed_off_by_id and self.review_by):
            raise ValidationError(
                {"review_by": _("A sign-off names who signed and a review-by date.")}
            )

    def answer_map(self) -> dict:
        """Answers keyed by question; uses prefetched answers when present."""
        return {answer.question_key: answer for answer in self.answers.all()}


class AssessmentAnswer(TrackedModel):
    """One typed answer (yes / no / n.a., a choice or a count), with a note and an attachment."""

    assessment = models.ForeignKey(
        DataExportAssessment, on_delete=models.CASCADE, related_name="answers"
    )
    question_key = models.CharField(_("question"), max_length=50)
    value = models.CharField(_("answer"), max_length=30, blank=True)
    number = models.PositiveIntegerField(
        _("number"),
        null=True,
        blank=True,
        validators=[MinValueValidator(0), MaxValueValidator(INDIVIDUALS_MAX)],
    )
    note = models.TextField(_("note"), max_length=REASON_MAX_LENGTH, blank=True)
    # Stored under names the storage generates from a sanitised basename;
    # uploads never choose their own path.
    attachment = models.FileField(
        _("attachment"),
        upload_to="assessments/%Y/%m/",
        blank=True,
        max_length=255,
        validators=[validate_attachment_size],
    )
    # Recorded when the attachment is stored; every download re-checks it. Kept out of
    # history: a new history column would change the digest of every older history row
    # (apps.audit.chain), and the attachment's own name is in history already.
    attachment_sha256 = models.CharField(
        _("attachment SHA-256"), max_length=64, blank=True, editable=False
    )
    history = HistoricalRecords(excluded_fields=["attachment_sha256"])

    class Meta:
        ordering = ["assessment_id", "pk"]
        verbose_name = _("assessment answer")
        verbose_name_plural = _("assessment answers")
        constraints = [
            models.UniqueConstraint(
                fields=["assessment", "question_key"], name="answer_one_per_question"
            )
        ]

    def __str__(self) -> str:
        return f"{self.question_key}: {self.value or self.number or '—'}"

    @property
    def question(self):
        return QUESTIONS_BY_KEY.get(self.question_key)

    def clean(self) -> None:
        from apps.assessments.rules import answers_errors

        errors = answers_errors({self.question_key: {"value": self.value, "number": self.number}})
        if errors:
            raise ValidationError(
                {("number" if k.endswith("__number") else "value"): v for k, v in errors.items()}
            )


class ExportedDataset(TrackedModel):
    """One dataset that leaves for the rented compute: the data inventory auditors ask for
    (docs/rules/data-export.md#audit-facts)."""

    assessment = models.ForeignKey(
        DataExportAssessment,
        on_delete=models.CASCADE,
        related_name="datasets",
        verbose_name=_("assessment"),
    )
    name = models.CharField(_("dataset"), max_length=200)
    size_gb = models.DecimalField(
        _("size (GB)"), max_digits=12, decimal_places=2, validators=[MinValueValidator(0)]
    )
    data_format = models.CharField(
        _("format"), max_length=100, help_text=_("E.g. Parquet, JSON Lines, WebDataset.")
    )
    sensitivity = models.CharField(_("sensitivity"), max_length=30, choices=SENSITIVITY_CHOICES)
    sync_window = models.CharField(
        _("sync window"),
        max_length=200,
        help_text=_("How often and when it syncs, e.g. 'nightly, 01:00–03:00 UTC'."),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["assessment_id", "pk"]
        verbose_name = _("exported dataset")
        verbose_name_plural = _("exported datasets")

    def __str__(self) -> str:
        return self.name


class ModelWeightFile(TrackedModel):
    """One model-weight file deployed on the rented compute, with its SHA-256
    (docs/rules/data-export.md#audit-facts)."""

    assessment = models.ForeignKey(
        DataExportAssessment,
        on_delete=models.CASCADE,
        related_name="weight_files",
        verbose_name=_("assessment"),
    )
    file_name = models.CharField(_("file name"), max_length=300)
    sha256 = models.CharField(
        _("SHA-256"),
        max_length=64,
        validators=[
            RegexValidator(
                r"^[0-9a-f]{64}$", _("A SHA-256 is 64 hexadecimal characters (0–9, a–f).")
            )
        ],
    )
    size_bytes = models.PositiveBigIntegerField(
        _("size (bytes)"), validators=[MaxValueValidator(WEIGHT_FILE_BYTES_MAX)]
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["assessment_id", "pk"]
        verbose_name = _("model-weight file")
        verbose_name_plural = _("model-weight files")

    def __str__(self) -> str:
        return self.file_name
