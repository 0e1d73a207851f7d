"""Checklists built through the services, as Lena would build them."""

from apps.contracts.services import checklist_create, checklist_save
from tests.factories import FULL_SPEC, make_case, make_offer


def make_checklist(lena, *, offer=None, creator=None, statuses=None):
    """A checklist for ``offer`` (a new one if not given), with ``statuses`` by item key."""
    if offer is None:
        offer = make_offer(creator or lena, make_case(creator or lena), spec=FULL_SPEC)
    checklist = checklist_create(actor=lena, offer=offer)
    if statuses:
        set_statuses(lena, checklist, statuses)
    checklist.refresh_from_db()
    return checklist


def set_statuses(lena, checklist, statuses, reason="Reviewed"):
    items = {item.key: item for item in checklist.items.all()}
    return checklist_save(
        actor=lena,
        checklist=checklist,
        items=[{"id": items[key].pk, "status": status} for key, status in statuses.items()],
        reason=reason,
    )


def all_acceptable(checklist):
    return {item.key: "acceptable" for item in checklist.items.all()}


def item(checklist, key):
    return checklist.items.get(key=key)
