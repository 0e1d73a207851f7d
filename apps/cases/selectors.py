"""Reads of procurement cases, with the access rule applied in one place."""

from django.db.models import Count, QuerySet
from django.shortcuts import get_object_or_404

from apps.cases.models import MINIMUM_COMPARED_OFFERS, ProcurementCase


def _visible_cases(actor) -> QuerySet[ProcurementCase]:
    # One organisation per deployment: every role that may view cases sees all
    # of them; what each role may change is decided by its permissions.
    if not actor.has_perm("cases.view_procurementcase"):
        return ProcurementCase.objects.none()
    return ProcurementCase.objects.select_related("owner")


def case_list_for(actor) -> QuerySet[ProcurementCase]:
    return _visible_cases(actor).annotate(offer_count=Count("offers"))


def case_ids_for(actor) -> QuerySet:
    """The ids of the cases the actor may read: a subquery, so that whatever belongs to a
    case is filtered by the same rule in the query that reads it (search does)."""
    return _visible_cases(actor).values("pk")


def case_get_for(actor, pk: int, *, offer_count: bool = True) -> ProcurementCase:
    """One visible case; ``offer_count=False`` spares the count where nothing shows it."""
    cases = case_list_for(actor) if offer_count else _visible_cases(actor)
    return get_object_or_404(cases, pk=pk)


def offer_minimum_status(
    *, offer_count: int, waiver: str, not_counted: tuple[str, ...] = ()
) -> dict:
    """docs/rules/offers.md#offer-minimum: at least three compared offers, or a recorded waiver with
    a reason.

    ``offer_count`` counts compared offers only; ``not_counted`` says which others
    were left out and why.
    """
    met = offer_count >= MINIMUM_COMPARED_OFFERS
    return {
        "required": MINIMUM_COMPARED_OFFERS,
        "count": offer_count,
        "not_counted": not_counted,
        "met": met,
        "waived": not met and bool(waiver.strip()),
        "holds": met or bool(waiver.strip()),
        "waiver": waiver,
    }
