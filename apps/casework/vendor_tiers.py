"""The vendor's tier, kept from its cases after the tracked writes that can change it
(docs/rules/vendors.md#tier).

The rule itself is the vendor's (``apps.vendors.rules.derive_tier``, on plain values);
reading what it weighs takes the cases, their budgets and their data-export assessments,
so the whole-case layer gathers it. A write of one of those records, or of an offer (a
vendor gains or loses a case), asks, once it commits, for the tiers of the vendors with
an offer in the touched cases; a tier is written, tracked, only when it changed.
"""

import logging
import threading
from collections.abc import Iterable

from django.db import transaction

from apps.assessments.models import ExportedDataset
from apps.audit.chain import history_linked
from apps.cases.models import ProcurementCase
from apps.cases.records import cases_of
from apps.casework.standing import refresh_after_write
from apps.offers.models import Offer
from apps.vendors.models import Vendor
from apps.vendors.rules import CaseFacts, derive_tier
from apps.vendors.services import vendor_derived_tier_keep

logger = logging.getLogger(__name__)

# The records the tier weighs: the case (its availability need), its budget, its data
# sent, and the offers that make a case the vendor's.
TIER_KINDS = frozenset(
    {
        "cases.procurementcase",
        "costs.budget",
        "assessments.dataexportassessment",
        "assessments.exporteddataset",
        "offers.offer",
    }
)
# A case rejected is over: it no longer weighs on the vendor's tier.
CASE_STATES_NOT_WEIGHED = (ProcurementCase.Status.REJECTED,)
# The fields of a case the tier weighs; an edit of any other (its name, its requirements)
# reads none of the vendor's cases again, however many it has.
CASE_FIELDS_WEIGHED = frozenset({"availability_need_pct", "status"})

_pending = threading.local()


def vendor_case_facts(vendor_ids: Iterable[int]) -> dict[int, list[CaseFacts]]:
    """What each vendor's cases record that its tier weighs (three queries)."""
    ids = list(set(vendor_ids))
    pairs = set(
        Offer.objects.filter(vendor_id__in=ids)
        .exclude(case__status__in=CASE_STATES_NOT_WEIGHED)
        .values_list("vendor_id", "case_id")
    )
    case_ids = {case_id for _vendor, case_id in pairs}
    cases = {
        case.pk: case
        for case in ProcurementCase.objects.filter(pk__in=case_ids).select_related("budget")
    }
    sensitivities: dict[int, set[str]] = {}
    for case_id, sensitivity in ExportedDataset.objects.filter(
        assessment__case_id__in=case_ids
    ).values_list("assessment__case_id", "sensitivity"):
        sensitivities.setdefault(case_id, set()).add(sensitivity)
    facts: dict[int, list[CaseFacts]] = {pk: [] for pk in ids}
    for vendor_id, case_id in sorted(pairs):
        case = cases[case_id]
        budget = getattr(case, "budget", None)
        facts[vendor_id].append(
            CaseFacts(
                sensitivities=tuple(sorted(sensitivities.get(case_id, ()))),
                budget_total=budget.total_amount if budget is not None else None,
                availability_need_pct=case.availability_need_pct,
            )
        )
    return facts


def keep_vendor_tiers(vendor_ids: Iterable[int]) -> bool:
    """Derive and keep the tier of each of these vendors; whether one changed."""
    facts = vendor_case_facts(vendor_ids)
    changed = False
    for vendor in Vendor.objects.filter(pk__in=list(facts)):
        tier = derive_tier(facts[vendor.pk])
        changed |= tier != vendor.derived_tier
        vendor_derived_tier_keep(vendor=vendor, tier=tier)
    return changed


def keep_tiers_of_cases(case_ids: Iterable[int]) -> bool:
    vendor_ids = set(
        Offer.objects.filter(case_id__in=list(case_ids)).values_list("vendor_id", flat=True)
    )
    return keep_vendor_tiers(vendor_ids) if vendor_ids else False


def _flush() -> None:
    case_ids: set[int] = getattr(_pending, "cases", set())
    _pending.cases = set()
    if not case_ids:
        return
    try:
        if keep_tiers_of_cases(case_ids):
            # A vendor written hangs from no case, so it raised every case's mark after
            # the write's own refresh may have run: the touched cases are computed again
            # (the others when next opened).
            for case_pk in sorted(case_ids):
                refresh_after_write(case_pk)
    except Exception:  # the write is committed: a tier kept late is read again next write
        logger.warning("Vendor tiers not kept after a write", exc_info=True)


def on_history_linked(sender, history_row, seq: int, **kwargs) -> None:
    """A tracked write of what the tier weighs: once it commits, keep the tiers of the
    vendors of the cases it touched (the work done once per transaction)."""
    try:
        if sender.instance_type._meta.label_lower not in TIER_KINDS:
            return
        if sender.instance_type is ProcurementCase:
            changed = getattr(history_row, "standing_changed_fields", None)
            if changed is not None and not changed & CASE_FIELDS_WEIGHED:
                return
            touched = {history_row.id}
        else:
            touched = cases_of(history_row.instance) or set()
    except Exception:  # never fail the write
        logger.warning("Cases of a written record not found for the tiers", exc_info=True)
        return
    if not touched:
        return
    pending = getattr(_pending, "cases", None)
    if pending is None:
        pending = _pending.cases = set()
    pending.update(touched)
    # Each write asks; the first callback to run takes every case pending, the others
    # find none and return at once.
    transaction.on_commit(_flush)


history_linked.connect(on_history_linked, dispatch_uid="casework.vendor_tiers")
