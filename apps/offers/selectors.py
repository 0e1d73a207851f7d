"""Reads of offers and declared specs."""

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from apps.cases.reads import shared_read
from apps.offers.models import Offer
from apps.offers.rules import declared_spec_status


def offer_list_for(actor) -> QuerySet[Offer]:
    if not actor.has_perm("offers.view_offer"):
        return Offer.objects.none()
    return Offer.objects.select_related("vendor", "declared_spec", "case")


def offer_get_for(actor, pk: int) -> Offer:
    return get_object_or_404(offer_list_for(actor), pk=pk)


@shared_read
def offers_of_case(case) -> list[Offer]:
    """Offers of a case with their spec status attached, in two queries at most."""
    offers = list(Offer.objects.filter(case=case).select_related("vendor", "declared_spec"))
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
