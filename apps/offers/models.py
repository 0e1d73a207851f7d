"""Offers (one per vendor per case) and the vendor's declared spec."""

from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.bounds import (
    CARDS_MAX,
    CARDS_PER_NODE_MAX,
    CURRENCY_CHOICES,
    MONTHS_MAX,
    TEXT_MAX_LENGTH,
)
from apps.core.models import TrackedModel
from apps.offers.rules import SpecStatus


class BillingBasis(models.TextChoices):
    PER_SECOND = "per_second", _("Per second")
    PER_HOUR = "per_hour", _("Per hour")
    PER_MONTH = "per_month", _("Per month")
    RESERVED = "reserved", _("Reserved (whole term)")


class Offer(TrackedModel):
    """A vendor's commercial offer within one case."""

    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.CASCADE,
        related_name="offers",
        verbose_name=_("case"),
    )
    vendor = models.ForeignKey(
        "vendors.Vendor", on_delete=models.PROTECT, related_name="offers", verbose_name=_("vendor")
    )
    accelerator_model = models.CharField(
        _("accelerator model"), max_length=100, help_text=_("e.g. 'NVIDIA H200 SXM 141GB'")
    )
    accelerator_count = models.PositiveIntegerField(
        _("accelerator count"), validators=[MinValueValidator(1), MaxValueValidator(CARDS_MAX)]
    )
    # Price of one GPU for one billing unit; for "reserved", the whole
    # reservation's price (apps.scorecards.pricing defines the normalisation).
    unit_price = models.DecimalField(
        _("unit price"),
        max_digits=14,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0"))],
        help_text=_("Per GPU per billing unit; for a reservation, the total for the term."),
    )
    # An ISO 4217 code; one saved before the list was enforced reads as stored.
    currency = models.CharField(
        _("currency"), max_length=3, choices=CURRENCY_CHOICES, default="USD"
    )
    billing_basis = models.CharField(
        _("billing basis"), max_length=20, choices=BillingBasis.choices, blank=True
    )
    prepayment_ratio = models.DecimalField(
        _("prepayment ratio"),
        max_digits=5,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("1"))],
        help_text=_("Share of the contract value paid in advance, 0 to 1."),
    )
    contract_term_months = models.PositiveIntegerField(
        _("contract term (months)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(MONTHS_MAX)],
    )
    notes = models.TextField(_("notes"), max_length=TEXT_MAX_LENGTH, blank=True)
    history = HistoricalRecords()
    # Not a column: attached by offers_of_case to the offers it reads.
    spec_status: SpecStatus

    class Meta:
        ordering = ["case_id", "vendor__name"]
        verbose_name = _("offer")
        verbose_name_plural = _("offers")
        # Newest first, as search reads offers: it stops at its first matches.
        indexes = [models.Index(fields=["-created_at", "-id"], name="offers_newest")]
        constraints = [
            models.UniqueConstraint(fields=["case", "vendor"], name="offer_one_per_vendor_per_case")
        ]

    def __str__(self) -> str:
        return f"{self.vendor} — {self.accelerator_count}× {self.accelerator_model}"


class Interconnect(models.TextChoices):
    NVLINK = "nvlink", _("NVLink / NVSwitch")
    PCIE = "pcie", _("PCIe")
    OTHER = "other", _("Other")


class InterNodeNetwork(models.TextChoices):
    INFINIBAND = "infiniband", _("InfiniBand (RDMA)")
    ROCE = "roce", _("RoCE (RDMA over Ethernet)")
    ETHERNET = "ethernet", _("Ethernet / TCP (no RDMA)")
    NONE = "none", _("None (single node)")


class DeclaredSpec(TrackedModel):
    """What the vendor claims in writing (docs/rules/offers.md#declared-spec)."""

    offer = models.OneToOneField(
        Offer, on_delete=models.CASCADE, related_name="declared_spec", verbose_name=_("offer")
    )
    memory_per_card_gib = models.DecimalField(
        _("memory per card (GiB)"),
        max_digits=7,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("1"))],
    )
    cards_per_node = models.PositiveIntegerField(
        _("cards per node"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(CARDS_PER_NODE_MAX)],
    )
    intra_node_interconnect = models.CharField(
        _("intra-node interconnect"), max_length=20, choices=Interconnect.choices, blank=True
    )
    intra_node_bandwidth_gbps = models.DecimalField(
        _("intra-node bandwidth (GB/s per card)"),
        max_digits=8,
        decimal_places=1,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0"))],
    )
    inter_node_network = models.CharField(
        _("inter-node network"), max_length=20, choices=InterNodeNetwork.choices, blank=True
    )
    inter_node_bandwidth_gbit = models.DecimalField(
        _("inter-node bandwidth floor (Gbit/s per node)"),
        max_digits=8,
        decimal_places=1,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0"))],
    )
    local_nvme_tb = models.DecimalField(
        _("local NVMe per node (TB)"),
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0"))],
    )
    driver_version = models.CharField(_("driver version"), max_length=50, blank=True)
    cuda_version = models.CharField(_("CUDA version"), max_length=50, blank=True)
    runtime_versions = models.CharField(
        _("runtime versions"),
        max_length=300,
        blank=True,
        help_text=_("Framework and serving runtime, e.g. 'PyTorch 2.5, vLLM 0.6.3'."),
    )
    source_document = models.CharField(
        _("source document"),
        max_length=300,
        blank=True,
        help_text=_("Where the vendor states this in writing (quote number, annex)."),
    )
    rate_limit_rps = models.DecimalField(
        _("endpoint rate limit (requests/s)"),
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0.01"))],
        help_text=_(
            "The inference endpoint's rate limit as the vendor states it; requests over it "
            "must be refused with HTTP 429."
        ),
    )
    # Least privilege on the endpoint: a token can be limited to some models or operations.
    # When the vendor says so, the endpoint security gate requires the probe of a token
    # without the permission (docs/rules/evidence.md#endpoint-security).
    tokens_scoped = models.BooleanField(
        _("API tokens scoped"),
        null=True,
        blank=True,
        choices=[(True, _("yes")), (False, _("no"))],
        help_text=_(
            "Whether the vendor states its API tokens can be limited to some models or "
            "operations; then a token without the permission must be refused with HTTP 403."
        ),
    )
    # What the vendor claims the offer serves at the case's service-level objectives,
    # checked against the case's requirement spec (apps.sizing.requirement).
    throughput_tokens_per_s = models.DecimalField(
        _("serving throughput (output tokens/s)"),
        max_digits=12,
        decimal_places=1,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0.1"))],
        help_text=_("As the vendor states it, at the case's service-level objectives."),
    )
    throughput_requests_per_s = models.DecimalField(
        _("serving throughput (requests/s)"),
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0.01"))],
        help_text=_("As the vendor states it, at the case's service-level objectives."),
    )
    history = HistoricalRecords()
    late_history_columns = (
        "rate_limit_rps",
        "throughput_tokens_per_s",
        "throughput_requests_per_s",
        "tokens_scoped",
    )

    class Meta:
        verbose_name = _("declared spec")
        verbose_name_plural = _("declared specs")

    def __str__(self) -> str:
        return f"Declared spec of {self.offer}"
