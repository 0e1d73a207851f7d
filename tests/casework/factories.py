"""A vendor in use, for the reassessment tests: an approved offer whose vendor has an owner,
a contact who answered the portal, and two other cases with an offer from it (one open,
one closed)."""

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from apps.cases.models import ProcurementCase
from apps.casework.models import Reassessment
from apps.core.services import tracked_create, tracked_update
from apps.vendors.reassessment import add_months
from tests.acceptance.factories import approved_offer
from tests.factories import make_case, make_offer
from tests.portal.factories import make_invitation
from tests.portal.review_factories import make_proposal


@dataclass
class InUse:
    case: ProcurementCase
    offer: object
    vendor: object
    open_case: ProcurementCase
    closed_case: ProcurementCase
    due_on: date


def with_emails(people) -> dict:
    model = get_user_model()
    for name in ("priya", "pablo", "tariq", "lena", "fiona", "aude"):
        model.objects.filter(username=name).update(email=f"{name}@example.org")
    return {name: model.objects.get(pk=person.pk) for name, person in people.items()}


def vendor_in_use(people, *, cycle_months: int = 6) -> InUse:
    case, offer = approved_offer(people)
    vendor = tracked_update(
        offer.vendor,
        actor=people["priya"],
        reason="Owner and cycle named",
        fields={"owner": people["pablo"], "review_cycle_months": cycle_months},
    )
    invitation, _secret = make_invitation(people["priya"], offer)
    make_proposal(invitation, "spec", "cards_per_node", "8")
    open_case = make_case(people["priya"])
    make_offer(people["priya"], open_case, vendor=vendor)
    closed_case = make_case(people["priya"])
    make_offer(people["priya"], closed_case, vendor=vendor)
    closed_case = tracked_update(
        closed_case,
        actor=people["priya"],
        reason="Rejected",
        fields={"status": ProcurementCase.Status.REJECTED},
    )
    approved_on = timezone.localdate(offer.approvals.get().decided_at)
    return InUse(
        case=case,
        offer=offer,
        vendor=vendor,
        open_case=open_case,
        closed_case=closed_case,
        due_on=add_months(approved_on, cycle_months),
    )


def at(day: date, hour: int = 9) -> datetime:
    """``day`` at ``hour`` in the site's time zone: what the frozen clock says."""
    return timezone.make_aware(datetime.combine(day, time(hour)))


def lapsed_reassessment(offer, *, days_ago: int = 31) -> Reassessment:
    """A reassessment of the offer's vendor started ``days_ago`` and never completed."""
    started = timezone.now() - timedelta(days=days_ago)
    return tracked_create(
        Reassessment,
        actor=None,
        reason="Reassessment due, started by the schedule",
        vendor=offer.vendor,
        offer=offer,
        case=offer.case,
        due_on=timezone.localdate(started),
        tier=offer.vendor.tier,
        cycle_months=offer.vendor.review_cycle,
        started_at=started,
        sections=["spec"],
    )
