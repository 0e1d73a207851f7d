"""Contract clause checklists per offer, made from versioned templates (docs/rules/contracts.md)."""

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.contracts.rules import RED_STATUSES
from apps.contracts.terms import IMAGE_FORMATS, WHOLE_MAX
from apps.core.bounds import CHANGE_REASON_MAX_LENGTH, REASON_MAX_LENGTH, TEXT_MAX_LENGTH
from apps.core.models import StoredFileRecord, TrackedModel
from apps.offers.models import BillingBasis

# A clause link's bounds: the words quoted, and the highest page number taken.
QUOTE_MAX_LENGTH = 500
PAGE_MAX = 100_000


class ItemStatus(models.TextChoices):
    # A blank status means "not reviewed yet" (see apps.contracts.rules).
    ACCEPTABLE = "acceptable", _("Acceptable")
    NEEDS_NEGOTIATION = "needs_negotiation", _("Needs negotiation")
    MISSING = "missing", _("Missing")
    NOT_APPLICABLE = "not_applicable", _("Not applicable")


class ChecklistTemplate(TrackedModel):
    """One published version of the organisation's must-check clause list."""

    number = models.PositiveIntegerField(_("template version"), unique=True)
    note = models.TextField(_("note"), max_length=CHANGE_REASON_MAX_LENGTH, blank=True)
    # Null only for the default version the data migration publishes.
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("published by"),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["-number"]
        verbose_name = _("checklist template")
        verbose_name_plural = _("checklist templates")

    def __str__(self) -> str:
        return f"Clause checklist template v{self.number}"


class BilingualItem:
    """A clause's text in English and, where given, in Chinese: a page in Chinese shows
    the Chinese text, and the English where no Chinese was given."""

    title: str
    sub_points: list
    guidance: str
    title_zh: str | None
    sub_points_zh: list | None
    guidance_zh: str | None

    @staticmethod
    def _in_chinese() -> bool:
        return (translation.get_language() or "").startswith("zh")

    @property
    def title_shown(self) -> str:
        return (self._in_chinese() and self.title_zh) or self.title

    @property
    def sub_points_shown(self) -> list:
        return (self._in_chinese() and self.sub_points_zh) or self.sub_points

    @property
    def guidance_shown(self) -> str:
        return (self._in_chinese() and self.guidance_zh) or self.guidance


class TemplateItem(BilingualItem, TrackedModel):
    """One must-check clause of a template version, with the points to look for."""

    template = models.ForeignKey(ChecklistTemplate, on_delete=models.CASCADE, related_name="items")
    number = models.PositiveSmallIntegerField(_("number"))
    key = models.SlugField(_("key"), max_length=50)
    title = models.CharField(_("title"), max_length=200)
    sub_points = models.JSONField(_("sub-points"), default=list, blank=True)
    guidance = models.TextField(_("guidance"), max_length=TEXT_MAX_LENGTH, blank=True)
    required = models.BooleanField(
        _("required"),
        default=True,
        help_text=_("A required item may not be marked not applicable."),
    )
    # Added after history rows were chained: nullable, and NULL means not high-severity.
    high_severity = models.BooleanField(
        _("high severity"),
        null=True,
        blank=True,
        help_text=_(
            "A waiver of a high-severity item counts only once a second legal reviewer confirms it."
        ),
    )
    # Added after history rows were chained: nullable, and NULL means "no Chinese text".
    title_zh = models.CharField(_("title in Chinese"), max_length=200, null=True, blank=True)
    sub_points_zh = models.JSONField(_("sub-points in Chinese"), null=True, blank=True)
    guidance_zh = models.TextField(
        _("guidance in Chinese"), max_length=TEXT_MAX_LENGTH, null=True, blank=True
    )
    history = HistoricalRecords()
    late_history_columns = ("high_severity", "title_zh", "sub_points_zh", "guidance_zh")

    class Meta:
        ordering = ["template_id", "number"]
        verbose_name = _("template item")
        verbose_name_plural = _("template items")
        constraints = [
            models.UniqueConstraint(fields=["template", "key"], name="templateitem_key_once"),
            models.UniqueConstraint(fields=["template", "number"], name="templateitem_number_once"),
        ]

    def __str__(self) -> str:
        return f"{self.number}. {self.title}"


class ClauseChecklist(TrackedModel):
    """The legal review of one offer's contract, item by item."""

    offer = models.OneToOneField(
        "offers.Offer",
        on_delete=models.CASCADE,
        related_name="clause_checklist",
        verbose_name=_("offer"),
    )
    # PROTECT: a template version that a checklist was made from is never deleted.
    template = models.ForeignKey(
        ChecklistTemplate,
        on_delete=models.PROTECT,
        related_name="checklists",
        verbose_name=_("template version"),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["offer_id"]
        verbose_name = _("clause checklist")
        verbose_name_plural = _("clause checklists")

    def __str__(self) -> str:
        return f"Clause checklist for offer #{self.offer_id}"


class ChecklistItem(BilingualItem, TrackedModel):
    """One clause of one offer's checklist.

    Number, key, title, sub-points and ``required`` are copied from the
    template item, so a later template version never changes a checklist.
    """

    checklist = models.ForeignKey(ClauseChecklist, on_delete=models.CASCADE, related_name="items")
    template_item = models.ForeignKey(
        TemplateItem, on_delete=models.PROTECT, related_name="+", verbose_name=_("template item")
    )
    number = models.PositiveSmallIntegerField(_("number"))
    key = models.SlugField(_("key"), max_length=50)
    title = models.CharField(_("title"), max_length=200)
    sub_points = models.JSONField(_("sub-points"), default=list, blank=True)
    guidance = models.TextField(_("guidance"), max_length=TEXT_MAX_LENGTH, blank=True)
    required = models.BooleanField(_("required"), default=True)
    # Copied from the template item like the fields above; NULL (older checklists): not high.
    high_severity = models.BooleanField(_("high severity"), null=True, blank=True)
    status = models.CharField(_("status"), max_length=20, choices=ItemStatus.choices, blank=True)
    clause_reference = models.CharField(_("clause reference"), max_length=200, blank=True)
    excerpt = models.TextField(_("excerpt"), max_length=TEXT_MAX_LENGTH, blank=True)
    note = models.TextField(_("note"), max_length=TEXT_MAX_LENGTH, blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("reviewer"),
    )
    reviewed_at = models.DateTimeField(_("reviewed at"), null=True, blank=True)
    # Copied from the template item like the English text.
    title_zh = models.CharField(_("title in Chinese"), max_length=200, null=True, blank=True)
    sub_points_zh = models.JSONField(_("sub-points in Chinese"), null=True, blank=True)
    guidance_zh = models.TextField(
        _("guidance in Chinese"), max_length=TEXT_MAX_LENGTH, null=True, blank=True
    )
    # The clause's place in a signed contract document: a stored version, a page (PDF
    # only) and the words quoted from it. Added after history rows were chained: nullable.
    document = models.ForeignKey(
        "contracts.ContractDocument",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("contract document"),
    )
    document_page = models.PositiveIntegerField(
        _("page"), null=True, blank=True, validators=[MaxValueValidator(PAGE_MAX)]
    )
    document_quote = models.TextField(
        _("quoted text"), max_length=QUOTE_MAX_LENGTH, null=True, blank=True
    )
    history = HistoricalRecords()
    late_history_columns = (
        "high_severity",
        "title_zh",
        "sub_points_zh",
        "guidance_zh",
        "document_id",
        "document_page",
        "document_quote",
    )

    class Meta:
        ordering = ["checklist_id", "number"]
        verbose_name = _("checklist item")
        verbose_name_plural = _("checklist items")
        constraints = [
            models.UniqueConstraint(fields=["checklist", "key"], name="checklistitem_key_once"),
        ]

    def __str__(self) -> str:
        return f"{self.number}. {self.title}"


class RedFlagWaiver(TrackedModel):
    """A legal reviewer's recorded acceptance of one red flag, bound to the status waived.

    When the item's status later changes, or a legal reviewer withdraws it, the
    waiver lapses (``lapsed_at``) and the item is judged afresh; the waiver
    stays on record. It is in force up to and including ``expires_on``; on a
    high-severity item it counts only once a second legal reviewer confirmed it.
    Its evidence file, if any, is stored once with its SHA-256 and never replaced.

    The columns after ``lapse_note`` came after history rows were chained, so
    they are nullable; a waiver recorded before them has no ``expires_on`` and
    expires ``rules.WAIVER_DAYS`` after it was granted.
    """

    item = models.ForeignKey(ChecklistItem, on_delete=models.CASCADE, related_name="waivers")
    waived_status = models.CharField(_("status waived"), max_length=20, choices=ItemStatus.choices)
    justification = models.TextField(_("reason for the waiver"), max_length=REASON_MAX_LENGTH)
    waived_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("waived by"),
    )
    waived_at = models.DateTimeField(_("waived at"))
    lapsed_at = models.DateTimeField(_("lapsed at"), null=True, blank=True)
    lapse_note = models.CharField(_("why it lapsed"), max_length=300, blank=True)
    expires_on = models.DateField(_("expires on"), null=True, blank=True)
    evidence_name = models.CharField(_("evidence file"), max_length=200, null=True, blank=True)
    evidence_content_type = models.CharField(
        _("evidence type"), max_length=100, null=True, blank=True
    )
    evidence_size_bytes = models.PositiveBigIntegerField(
        _("evidence size (bytes)"), null=True, blank=True
    )
    evidence_sha256 = models.CharField(_("evidence SHA-256"), max_length=64, null=True, blank=True)
    evidence_storage_name = models.CharField(
        _("evidence stored as"), max_length=300, null=True, blank=True
    )
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("confirmed by"),
    )
    confirmed_at = models.DateTimeField(_("confirmed at"), null=True, blank=True)
    confirmation_note = models.TextField(
        _("confirmation note"), max_length=REASON_MAX_LENGTH, null=True, blank=True
    )
    history = HistoricalRecords()
    late_history_columns = (
        "expires_on",
        "evidence_name",
        "evidence_content_type",
        "evidence_size_bytes",
        "evidence_sha256",
        "evidence_storage_name",
        "confirmed_by_id",
        "confirmed_at",
        "confirmation_note",
    )

    class Meta:
        ordering = ["item_id", "-waived_at"]
        verbose_name = _("red-flag waiver")
        verbose_name_plural = _("red-flag waivers")
        permissions = [
            ("confirm_redflagwaiver", _("Can confirm a waiver as the second legal reviewer")),
            ("withdraw_redflagwaiver", _("Can withdraw a red-flag waiver")),
        ]

    def __str__(self) -> str:
        return f"Waiver of item #{self.item_id} ({self.waived_status})"

    def clean(self) -> None:
        if not (self.justification or "").strip():
            raise ValidationError({"justification": _("A waiver needs a reason.")})
        if self.waived_status not in RED_STATUSES:
            raise ValidationError(
                {"waived_status": _("Only a missing or needs-negotiation item can be waived.")}
            )


def _percent(label):
    return models.DecimalField(
        label,
        max_digits=6,
        decimal_places=3,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("100"))],
    )


class ContractTerms(TrackedModel):
    """The quantities one offer's contract commits to, beside the checklist's items.

    Blank means the contract states none. ``apps.contracts.terms`` names the item
    each term stands beside and checks the terms against the case.
    """

    checklist = models.OneToOneField(
        ClauseChecklist,
        on_delete=models.CASCADE,
        related_name="terms",
        verbose_name=_("clause checklist"),
    )
    sla_availability_pct = _percent(_("SLA availability (%)"))
    maintenance_notice_hours = models.PositiveIntegerField(
        _("maintenance notice (hours)"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(WHOLE_MAX["hours"])],
    )
    data_deletion_days = models.PositiveIntegerField(
        _("data deletion deadline (days)"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(WHOLE_MAX["days"])],
    )
    data_export_days = models.PositiveIntegerField(
        _("data export window (days)"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(WHOLE_MAX["days"])],
    )
    image_format = models.CharField(
        _("image delivery format"),
        max_length=20,
        choices=list(IMAGE_FORMATS.items()),
        blank=True,
    )
    exit_penalty_pct = _percent(_("lock-in or early-exit penalty (% of the remaining contract)"))
    prepayment_pct = _percent(_("prepayment (%)"))
    ordinary_prepayment_pct = _percent(_("prepayment asked of ordinary customers (%)"))
    billing_basis = models.CharField(
        _("billing basis"), max_length=20, choices=BillingBasis.choices, blank=True
    )
    # The contract's dates (docs/rules/contracts.md#contract-dates); added after history
    # rows were chained, so nullable like every blank term.
    effective_date = models.DateField(_("effective date"), null=True, blank=True)
    renewal_date = models.DateField(_("renewal date"), null=True, blank=True)
    notice_deadline = models.DateField(
        _("notice deadline"),
        null=True,
        blank=True,
        help_text=_("The last day to give notice against the renewal."),
    )
    end_date = models.DateField(_("end date"), null=True, blank=True)
    history = HistoricalRecords()
    late_history_columns = ("effective_date", "renewal_date", "notice_deadline", "end_date")

    class Meta:
        ordering = ["checklist_id"]
        verbose_name = _("contract terms")
        verbose_name_plural = _("contract terms")

    def __str__(self) -> str:
        return f"Contract terms of checklist #{self.checklist_id}"


class DocumentKind(models.TextChoices):
    ORDER_FORM = "order_form", _("Order form")
    MSA = "msa", _("Master services agreement (MSA)")
    DPA = "dpa", _("Data processing agreement (DPA)")
    OTHER = "other", _("Other contract document")


# How a document is named in a clause link: "MSA v2".
KIND_SHORT = {
    DocumentKind.ORDER_FORM: _("Order form"),
    DocumentKind.MSA: _("MSA"),
    DocumentKind.DPA: _("DPA"),
    DocumentKind.OTHER: _("Document"),
}


class ContractDocument(TrackedModel, StoredFileRecord):
    """One version of one signed contract document of an offer, stored once with its SHA-256.

    Uploading the same kind again makes the next version; earlier versions stay,
    listed and downloadable. Never replaced, never deleted.
    """

    offer = models.ForeignKey(
        "offers.Offer",
        on_delete=models.PROTECT,
        related_name="contract_documents",
        verbose_name=_("offer"),
    )
    kind = models.CharField(_("kind"), max_length=20, choices=DocumentKind.choices)
    number = models.PositiveIntegerField(_("version"))
    name = models.CharField(_("file name"), max_length=200)
    content_type = models.CharField(_("type"), max_length=100)
    storage_name = models.CharField(_("stored as"), max_length=300, unique=True)
    # PDF only: the pages a clause link may point at.
    page_count = models.PositiveIntegerField(_("pages"), null=True, blank=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("uploaded by"),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["offer_id", "kind", "-number"]
        verbose_name = _("contract document")
        verbose_name_plural = _("contract documents")
        constraints = [
            models.UniqueConstraint(
                fields=["offer", "kind", "number"], name="contractdocument_version_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{KIND_SHORT[DocumentKind(self.kind)]} v{self.number}"

    @property
    def is_pdf(self) -> bool:
        return self.content_type == "application/pdf"
