"""What a vendor may claim through the portal, and how each claim is read.

A claim is one field of a record of the offer (the declared spec, the offer's
commercial terms, the contract's exit and data-handling terms) or one item of the
offer's clause checklist. The portal's forms, the reviewers' pages and the code
that writes an accepted claim into its record all read this one list, and the
permission that decides each section's answers.

What the vendor types is kept as text, exactly, except for a share: the offer's
prepayment is typed in percent (30 for 30 %), as on the staff's offer form, and kept
in the record's unit, a share of 1 ("0.3"), so every answer kept reads the same
whenever it was given. ``stored_text`` turns what is typed into what is kept,
``typed_text`` the other way; ``parse`` reads a kept text as the record's field would
(the same validators), so a claim the record would refuse is refused when it is
proposed, not when it is accepted.
"""

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from apps.contracts.models import ChecklistItem, ContractTerms
from apps.core.forms import PercentField
from apps.offers.models import DeclaredSpec, Offer
from apps.portal.models import ClaimSection, Proposal


@dataclass(frozen=True)
class Claim:
    """One field the vendor may state, on the record that holds it."""

    section: str
    model: type[models.Model]
    name: str
    # A share of 1 on the record, typed and shown in percent.
    percent: bool = False
    # What the vendor reads instead of the record field's own label and help.
    typed_label: Promise | None = None
    typed_help: Promise | None = None

    @property
    def field(self) -> models.Field:
        return self.model._meta.get_field(self.name)  # type: ignore[return-value]

    @property
    def label(self) -> str:
        return str(self.typed_label or self.field.verbose_name)

    @property
    def help_text(self) -> str:
        return str(self.typed_help or self.field.help_text)

    def form_field(self) -> forms.Field:
        """The form field of the record's field, never required (the vendor may skip it)."""
        field = self.field.formfield(required=False)
        assert field is not None
        return field

    def typed_field(self) -> forms.Field:
        """The form field a person types the claim into (in percent for a share)."""
        if self.percent:
            return PercentField(required=False)
        return self.form_field()

    def stored_text(self, typed: str) -> str:
        """What is kept for ``typed``: a share typed in percent is kept as a share of 1.

        A ValidationError says what is wrong with a share, in percent."""
        typed = typed.strip()
        if not self.percent or not typed:
            return typed
        return self.as_text(self.typed_field().clean(typed))

    def typed_text(self, stored: str) -> str:
        """A kept text as the person would type it (a share of 1 back in percent)."""
        if not self.percent:
            return stored
        percent = _in_percent(stored)
        return stored if percent is None else percent

    def parse(self, text: str) -> Any:
        """The record's value for ``text``, or a ValidationError saying what is wrong."""
        value = self.form_field().clean(text.strip())
        if value in (None, ""):
            raise ValidationError(self.field.error_messages["blank"], code="blank")
        self.field.run_validators(value)
        return value

    def as_text(self, value: Any) -> str:
        """A record's value as the vendor would type it ("" when none is stated)."""
        if value is None:
            return ""
        if isinstance(value, Decimal):  # without its column's trailing zeros (2.950000 → 2.95)
            return format(value.normalize(), "f")
        return str(value)

    def text_on(self, record: models.Model | None) -> str:
        """What ``record`` holds for this claim, as text ("" with no record)."""
        return "" if record is None else self.as_text(getattr(record, self.name))

    def display(self, text: str) -> str:
        """A proposed or accepted value as a reader sees it (choices by their label)."""
        if self.percent:
            percent = _in_percent(text)
            return text if percent is None else f"{percent} %"
        # By the value as text: a yes/no claim is kept as "True" / "False".
        choices = {str(value): label for value, label in self.field.flatchoices}
        return str(choices.get(text, text))

    def record_of(self, offer: Offer) -> models.Model | None:
        if self.model is Offer:
            return offer
        if self.model is DeclaredSpec:
            return DeclaredSpec.objects.filter(offer=offer).first()
        return ContractTerms.objects.filter(checklist__offer=offer).first()

    def current(self, offer: Offer) -> str:
        return self.text_on(self.record_of(offer))


def _in_percent(stored: str) -> str | None:
    """A share of 1 kept as text, in percent ("0.3" → "30"); None for anything else."""
    try:
        share = Decimal(stored.strip())
    except ArithmeticError:
        return None
    return format((share * 100).normalize(), "f") if share.is_finite() else None


def _claims(section: str, model: type[models.Model], *names: str) -> tuple[Claim, ...]:
    return tuple(Claim(section, model, name) for name in names)


SPEC_CLAIMS = _claims(ClaimSection.SPEC, Offer, "accelerator_model", "accelerator_count") + _claims(
    ClaimSection.SPEC,
    DeclaredSpec,
    "memory_per_card_gib",
    "cards_per_node",
    "intra_node_interconnect",
    "intra_node_bandwidth_gbps",
    "inter_node_network",
    "inter_node_bandwidth_gbit",
    "local_nvme_tb",
    "driver_version",
    "cuda_version",
    "runtime_versions",
    "rate_limit_rps",
    "tokens_scoped",
    "throughput_tokens_per_s",
    "throughput_requests_per_s",
    "source_document",
)
COMMERCIAL_CLAIMS = _claims(
    ClaimSection.COMMERCIAL,
    Offer,
    "billing_basis",
    "unit_price",
    "currency",
    "contract_term_months",
) + (
    # Typed in percent, as on the staff's offer form (docs/rules/portal.md#what-the-vendor-types).
    Claim(
        ClaimSection.COMMERCIAL,
        Offer,
        "prepayment_ratio",
        percent=True,
        typed_label=_("Prepayment (%)"),
        typed_help=_("Share of the contract value paid in advance, in percent: 30 means 30 %."),
    ),
)
EXIT_CLAIMS = _claims(
    ClaimSection.EXIT,
    ContractTerms,
    "sla_availability_pct",
    "maintenance_notice_hours",
    "data_deletion_days",
    "data_export_days",
    "image_format",
    "exit_penalty_pct",
    "ordinary_prepayment_pct",
)
BY_SECTION: dict[str, tuple[Claim, ...]] = {
    ClaimSection.SPEC: SPEC_CLAIMS,
    ClaimSection.COMMERCIAL: COMMERCIAL_CLAIMS,
    ClaimSection.EXIT: EXIT_CLAIMS,
}
_BY_KEY = {(claim.section, claim.name): claim for claims in BY_SECTION.values() for claim in claims}


def claim_named(section: str, name: str) -> Claim:
    """The field claim of ``section`` called ``name``; KeyError for any other."""
    return _BY_KEY[(section, name)]


def clause_items(offer: Offer) -> list[ChecklistItem]:
    """The offer's checklist items, the clause claims the vendor answers (none without one)."""
    return list(ChecklistItem.objects.filter(checklist__offer=offer).order_by("number"))


# Who decides each section: the role that edits the record the answer goes into.
SECTION_PERMISSION: dict[str, str] = {
    ClaimSection.SPEC: "offers.change_declaredspec",
    ClaimSection.COMMERCIAL: "offers.change_offer",
    ClaimSection.CLAUSE: "contracts.change_checklistitem",
    ClaimSection.EXIT: "contracts.change_contractterms",
}


def may_decide(actor, section: str) -> bool:
    return actor.has_perm(SECTION_PERMISSION[section])


def claim_label(proposal: Proposal, items_by_key: dict[str, ChecklistItem] | None = None) -> str:
    """How a reader names the claim: the field's label, or the checklist item's title."""
    if proposal.section == ClaimSection.CLAUSE:
        if items_by_key is None:
            items_by_key = {
                item.key: item
                for item in ChecklistItem.objects.filter(
                    checklist__offer_id=proposal.invitation.offer_id, key=proposal.claim
                )
            }
        item = items_by_key.get(proposal.claim)
        return f"{item.number}. {item.title}" if item else proposal.claim
    try:
        return claim_named(proposal.section, proposal.claim).label
    except KeyError:
        return proposal.claim
