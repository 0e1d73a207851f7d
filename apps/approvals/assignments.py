"""Giving one item of My work to one person, and giving it back to its role
(docs/rules/my-work.md#assignments).

The item is worked out from the case's records (``apps.casework.worklist``); what is
stored is who has it, by when, and who gave it (a tracked record: the history says
every change). The caller names the item's roles, read from the list itself.

- Who may assign: the procurement reviewers and administrators, who run the cases, and
  the holders of the item's own roles (for their role's items).
- Who may be assigned: an active person holding one of the item's roles.
- A role's lead: the people ``settings.ROLE_LEADS`` names for it; where it names none,
  the administrators. An assignment past its date is shown to the lead as well.
"""

from dataclasses import dataclass
from datetime import date, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.approvals.models import WorkAssignment
from apps.cases.models import ProcurementCase
from apps.core import formats
from apps.core.notifications import Event, notify
from apps.core.roles import Role, roles_of
from apps.core.services import tracked_create, tracked_update

# An assignment is due at most this far ahead.
LONGEST_DAYS = 365
# The assignment form offers this many days ahead.
DEFAULT_DAYS = 7


def is_admin(person) -> bool:
    return Role.ADMIN in roles_of(person)


def may_assign(actor, roles, *, held: set[str] | None = None) -> bool:
    """Procurement and the administrators assign any item; the holders of a role, its
    own items. ``held``: the actor's roles, where the caller read them already."""
    held = roles_of(actor) if held is None else held
    return bool(held & {Role.ADMIN, Role.PROCUREMENT} or held & set(roles))


@dataclass(frozen=True)
class Assignable:
    pk: int
    name: str


def people_by_role() -> dict[str, list[Assignable]]:
    """The active people of each role (their role groups), by name (1 query)."""
    rows = (
        get_user_model()
        .objects.filter(is_active=True, groups__name__in=Role.values)
        .order_by("first_name", "last_name", "username")
        .values_list("pk", "first_name", "last_name", "username", "groups__name")
    )
    found: dict[str, list[Assignable]] = {}
    for pk, first, last, username, role in rows:
        name = f"{first} {last}".strip() or username
        found.setdefault(role, []).append(Assignable(pk, name))
    return found


def assignable_people(roles, by_role: dict[str, list[Assignable]]) -> list[Assignable]:
    """The people who may take an item of ``roles``, each once, by name."""
    seen: dict[int, Assignable] = {}
    for role in roles:
        for person in by_role.get(str(role), []):
            seen.setdefault(person.pk, person)
    return sorted(seen.values(), key=lambda person: person.name)


def leads_of(role: str) -> set[int]:
    """The people who lead ``role``: those ``ROLE_LEADS`` names for it, else the
    administrators (their group, and every superuser)."""
    named = settings.ROLE_LEADS.get(str(role)) or []
    people = get_user_model().objects.filter(is_active=True)
    if named:
        found = set(people.filter(username__in=list(named)).values_list("pk", flat=True))
        if found:
            return found
    return set(
        people.filter(Q(is_superuser=True) | Q(groups__name=Role.ADMIN))
        .distinct()
        .values_list("pk", flat=True)
    )


def assignment_set(
    *,
    actor,
    case: ProcurementCase,
    item_key: str,
    roles,
    label: str,
    path: str,
    assignee=None,
    due_on: date | None = None,
) -> WorkAssignment:
    """Give the item to ``assignee`` until ``due_on``, or (``assignee`` None) give it back
    to its role. ``label`` names the item in the notice the assignee gets; ``path`` is
    where the item is mended."""
    roles = tuple(roles)
    if not roles:
        raise ValidationError(_("This item belongs to no role, so nobody is assigned it."))
    if not may_assign(actor, roles):
        raise PermissionDenied(
            _("Only procurement, an administrator or a holder of the item's role may assign it.")
        )
    role = ""
    if assignee is not None:
        held = roles_of(assignee) & set(roles)
        if not assignee.is_active or not held:
            raise ValidationError(
                {"assignee": _("Choose someone who holds the role this item waits for.")}
            )
        role = next(r for r in roles if r in held)
        today = timezone.localdate()
        if due_on is None or not today <= due_on <= today + timedelta(days=LONGEST_DAYS):
            raise ValidationError(
                {
                    "due_on": _("Choose a date from today up to %(n)s days ahead.")
                    % {"n": LONGEST_DAYS}
                }
            )
    with transaction.atomic():
        current = (
            WorkAssignment.objects.select_for_update().filter(case=case, item_key=item_key).first()
        )
        if current is None:
            if assignee is None:
                raise ValidationError(_("This item is not assigned to anyone."))
            saved = tracked_create(
                WorkAssignment,
                actor=actor,
                reason=f"Assigned to {assignee.get_username()}",
                case=case,
                item_key=item_key,
                role=role,
                assignee=assignee,
                due_on=due_on,
                assigned_by=actor,
            )
        else:
            if assignee is None and current.assignee_id is None:
                raise ValidationError(_("This item is not assigned to anyone."))
            saved = tracked_update(
                current,
                actor=actor,
                reason=(
                    f"Assigned to {assignee.get_username()}"
                    if assignee is not None
                    else "Given back to the role"
                ),
                fields={
                    "role": role or current.role,
                    "assignee": assignee,
                    "due_on": due_on if assignee is not None else None,
                    "assigned_by": actor,
                },
            )
        if assignee is not None:
            notify(
                Event.ASSIGNMENT,
                case=case,
                text=gettext_lazy("%(who)s assigned you on %(case)s, due %(due)s: %(item)s"),
                params={
                    "who": actor.get_full_name() or actor.get_username(),
                    "case": case.name,
                    "due": formats.date(due_on),
                    "item": label,
                },
                path=path,
                recipients=[assignee],
                actor=actor,
            )
    return saved


def assignments_of_cases(case_ids) -> dict[tuple[int, str], WorkAssignment]:
    """The assignments in force (with an assignee) of the cases, by (case, item key)."""
    rows = WorkAssignment.objects.filter(
        case_id__in=list(case_ids), assignee__isnull=False
    ).select_related("assignee", "assigned_by")
    return {(row.case_id, row.item_key): row for row in rows}
