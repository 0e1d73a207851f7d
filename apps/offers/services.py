"""Writes to offers and declared specs."""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from apps.cases.services import case_evaluation_start
from apps.core.services import ConcurrentEditError, tracked_create, tracked_update
from apps.offers.models import DeclaredSpec, Offer
from apps.offers.selectors import offer_reviews

OFFER_FIELDS = (
    "vendor",
    "accelerator_model",
    "accelerator_count",
    "unit_price",
    "currency",
    "billing_basis",
    "prepayment_ratio",
    "contract_term_months",
    "notes",
)
SPEC_FIELDS = (
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
    "source_document",
    "rate_limit_rps",
    "tokens_scoped",
    "throughput_tokens_per_s",
    "throughput_requests_per_s",
)


def _reject_unknown(fields: dict[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = set(fields) - set(allowed)
    if unknown:
        raise ValidationError(
            {name: _("This field cannot be set here.") for name in sorted(unknown)}
        )


def offer_create(*, actor, case, **fields: Any) -> Offer:
    """Add a vendor's offer to a case, with an empty declared spec to fill in."""
    _reject_unknown(fields, OFFER_FIELDS)
    vendor = fields.get("vendor")
    if vendor is not None and Offer.objects.filter(case=case, vendor=vendor).exists():
        raise ValidationError(
            {"vendor": _("%(vendor)s already has an offer on this case.") % {"vendor": vendor}}
        )
    with transaction.atomic():
        offer = tracked_create(Offer, actor=actor, reason="Offer added", case=case, **fields)
        tracked_create(DeclaredSpec, actor=actor, reason="Declared spec opened", offer=offer)
        case_evaluation_start(actor=actor, case=case)
    return offer


def offer_update(
    *, actor, offer: Offer, fields: dict[str, Any], reason: str, expected_version=None
) -> Offer:
    _reject_unknown(fields, OFFER_FIELDS)
    with transaction.atomic():
        # Compare with the stored row, not with ``offer``: a bound ModelForm has
        # already written the submitted vendor onto the instance it was given.
        current = Offer.objects.select_for_update().get(pk=offer.pk)
        if expected_version is not None and current.version != expected_version:
            raise ConcurrentEditError(current, expected_version)
        vendor = fields.get("vendor")
        if vendor is not None and getattr(vendor, "pk", vendor) != current.vendor_id:
            _vendor_change_check(current, vendor)
        return tracked_update(
            current, actor=actor, reason=reason, fields=fields, expected_version=expected_version
        )


def _vendor_change_check(offer: Offer, vendor) -> None:
    # Checklists, waivers, claims, scores and measurements judged this offer as
    # made by its vendor; under another vendor they would vouch for an offer
    # nobody reviewed.
    reviews = offer_reviews(offer)
    if reviews:
        raise ValidationError(
            {
                "vendor": _(
                    "This offer already has reviews (%(kinds)s); its vendor cannot change. "
                    "Create a new offer for the other vendor."
                )
                % {"kinds": ", ".join(reviews)}
            }
        )
    clash = Offer.objects.filter(case_id=offer.case_id, vendor=vendor).exclude(pk=offer.pk)
    if clash.exists():
        raise ValidationError({"vendor": _("That vendor already has an offer on this case.")})


def declared_spec_update(
    *, actor, spec: DeclaredSpec, fields: dict[str, Any], reason: str, expected_version=None
) -> DeclaredSpec:
    _reject_unknown(fields, SPEC_FIELDS)
    return tracked_update(
        spec, actor=actor, reason=reason, fields=fields, expected_version=expected_version
    )
