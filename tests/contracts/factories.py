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


def make_legal(username="leo"):
    """A second legal reviewer, to confirm the waivers of high-severity items."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from apps.core.roles import Role

    user = get_user_model().objects.create_user(
        username=username, password="pw", first_name=username.title()
    )
    user.groups.add(Group.objects.get(name=Role.LEGAL))
    return user


def template_rows(*, high_severity=()):
    """The latest template's items as the API publishes them, ``high_severity`` keys marked."""
    from apps.contracts.models import ChecklistTemplate

    latest = ChecklistTemplate.objects.order_by("-number").first()
    return [
        {
            "key": i.key,
            "title": i.title,
            "sub_points": i.sub_points,
            "guidance": i.guidance,
            "required": i.required,
            "high_severity": i.key in high_severity,
        }
        for i in latest.items.order_by("number")
    ]
