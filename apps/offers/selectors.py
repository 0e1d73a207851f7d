"""Reads of offers and declared specs."""

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext_lazy as _

from apps.core.reads import shared_read
from apps.offers.models import DeclaredSpec, Offer
from apps.offers.rules import SPEC_REQUIRED, declared_spec_status


def offer_list_for(actor) -> QuerySet[Offer]:
    if not actor.has_perm("offers.view_offer"):
        return Offer.objects.none()
    return Offer.objects.select_related("vendor", "declared_spec", "case")


def offer_get_for(actor, pk: int) -> Offer:
    return get_object_or_404(offer_list_for(actor), pk=pk)


@shared_read
def offers_of_case(case) -> list[Offer]:
    """Offers of a case with their spec status attached, in two queries at most."""
    return offers_of_cases([case.pk])


def offers_of_cases(case_ids) -> list[Offer]:
    """``offers_of_case`` for many cases at once (one query), in the offers' own order."""
    offers = list(
        Offer.objects.filter(case_id__in=list(case_ids)).select_related("vendor", "declared_spec")
    )
    for offer in offers:
        offer.spec_status = declared_spec_status(offer, _spec_or_none(offer))
    return offers


def _spec_or_none(offer: Offer):
    try:
        return offer.declared_spec
    except Offer.declared_spec.RelatedObjectDoesNotExist:
        return None


def spec_status_for(offer: Offer):
    return declared_spec_status(offer, _spec_or_none(offer))


# What has been reviewed of an offer, as (label, lookup on Offer). Every one of
# these judged the offer as made by its vendor: the contract's clauses, the
# vendor's written claims, measurements on the vendor's machines.
_REVIEWS = (
    (_("clause checklist"), "clause_checklist__isnull"),
    (_("red-flag waiver"), "clause_checklist__items__waivers__isnull"),
    (_("declared spec"), None),
    (_("scores"), "scorecards__isnull"),
    (_("evidence bundle"), "evidence_bundles__isnull"),
    (_("spec verification"), "spec_verifications__isnull"),
    (_("data-export assessment"), "data_export_assessments__isnull"),
    (_("acceptance plan"), "acceptance_plan__isnull"),
    (_("approval decision"), "approvals__isnull"),
)


def offer_reviews(offer: Offer) -> list[str]:
    """The kinds of review already recorded for this offer, in a fixed order, translated."""
    found = []
    for label, lookup in _REVIEWS:
        if lookup is None:
            exists = _declared_spec_stated(offer)
        else:
            exists = Offer.objects.filter(pk=offer.pk, **{lookup: False}).exists()
        if exists:
            found.append(str(label))
    return found


def _declared_spec_stated(offer: Offer) -> bool:
    # Every offer is created with an empty spec; it counts once the vendor's
    # claims were written into it (any edit, even one later blanked again).
    spec = DeclaredSpec.objects.filter(offer_id=offer.pk).first()
    if spec is None:
        return False
    stated = [name for name, _label in SPEC_REQUIRED] + ["source_document"]
    return spec.version > 1 or any(getattr(spec, name) not in (None, "") for name in stated)
