"""The change history of a case, summarised for its packet: sized by the case, not its history.

- per record type: records, changes (created, changed, deleted), people, first and last change;
- per person: changes, record types touched, first and last change;
- every status change and decision in full: when, who, which record, old → new, why;
- every waiver and sign-off in full: each history row of a waiver, sign-off or
  decision record with every field, and each change of a field that holds one.

What counts as a status, a decision, a waiver or a sign-off is declared here,
by field and record type; ``tests/packets/test_history_summary.py`` fails when a
tracked model grows such a field without it being declared.

Queries are fixed per record type, whatever the length of the history: one
grouped count per history table, one streamed read (``.iterator()``) per table
that has a status, decision, waiver or sign-off, and one for the people named.
Only the rows printed in full are kept.
"""

import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, Max, Min, QuerySet
from django.utils.translation import gettext as _

from apps.audit import history_files
from apps.audit.history_rows import LABEL_FIELDS, record_label

# A field with one of these names, or named ``…_status``, is a status (or a decision):
# every change is printed.
STATUS_FIELDS = frozenset({"status", "state", "outcome", "verdict", "decision"})

DECISION, WAIVER, SIGN_OFF, STATUS = "decision", "waiver", "sign-off", "status"

# Records that are themselves a decision, a waiver or a sign-off: every history row in full.
WHOLE_RECORDS = {
    "approvals.approval": DECISION,
    # One person's decision at one later step of an approval chain.
    "approvals.chaindecision": DECISION,
    "contracts.redflagwaiver": WAIVER,
    # An owner's acceptance of a finding of the register (docs/rules/findings.md).
    "approvals.findingacceptance": WAIVER,
    "acceptance.acceptancesignoff": SIGN_OFF,
}

# Fields of other records that hold a waiver, a sign-off or a reviewer's decision: every
# change in full.
WAIVER_AND_SIGN_OFF_FIELDS = {
    # A reviewer's decision on what a vendor proposed through the portal.
    "portal.proposal": {
        "accepted_value": DECISION,
        "review_note": DECISION,
        "reviewed_by_id": DECISION,
        "reviewed_at": DECISION,
    },
    "portal.vendordocument": {
        "review_note": DECISION,
        "reviewed_by_id": DECISION,
        "reviewed_at": DECISION,
    },
    "cases.procurementcase": {"offer_minimum_waiver": WAIVER},
    "assessments.dataexportassessment": {
        "signed_off_by_id": SIGN_OFF,
        "signed_off_at": SIGN_OFF,
        "voided_sign_off": SIGN_OFF,
        # The transfer mechanism's status, stated at the sign-off.
        "mechanism_status": SIGN_OFF,
        "mechanism_expected_on": SIGN_OFF,
        "mechanism_reference": SIGN_OFF,
        "mechanism_stated_for": SIGN_OFF,
    },
    "access.accessmatrix": {"reviewed_by_id": SIGN_OFF, "reviewed_at": SIGN_OFF},
    # Who was given an item of work, by whom, and until when.
    "approvals.workassignment": {
        "assignee_id": DECISION,
        "assigned_by_id": DECISION,
        "due_on": DECISION,
    },
    # A control not in place whose risk the tech lead accepted: a waiver, until its date.
    "access.accesscontrol": {
        "risk_reason": WAIVER,
        "risk_expires_on": WAIVER,
        "risk_accepted_by_id": WAIVER,
        "risk_accepted_at": WAIVER,
    },
}

# Machine state a decision or a sign-off is bound to (digests of the records it saw), and
# the key that tells apart findings of one rule (the finding's message, printed, names
# what it is about): they travel in the attached files, and are not printed.
NOT_PRINTED = frozenset({"bound_state", "finding_key"})
HISTORY_COLUMNS = frozenset(
    {
        "history_id",
        "history_date",
        "history_change_reason",
        "history_type",
        "history_user_id",
        "id",
        "version",
        "created_at",
        "updated_at",
    }
)
ACTIONS = {"+": "created", "~": "changed", "-": "deleted"}


@dataclass
class FieldChange:
    field: str
    old: str
    new: str


@dataclass
class KeyChange:
    """One status change, decision, waiver or sign-off, printed in full."""

    when: datetime
    history_id: int
    kind: str
    record_type: str
    record: str
    action: str
    user_id: int | None
    reason: str
    changes: list[FieldChange]
    who: str = ""

    @property
    def kind_label(self) -> str:
        return {
            DECISION: _("decision"),
            WAIVER: _("waiver"),
            SIGN_OFF: _("sign-off"),
            STATUS: _("status change"),
        }[self.kind]

    @property
    def action_label(self) -> str:
        return action_label(self.action)


@dataclass
class TypeSummary:
    key: str
    label: str
    records: int = 0
    changes: int = 0
    created: int = 0
    changed: int = 0
    deleted: int = 0
    people: set = field(default_factory=set)
    first: datetime | None = None
    last: datetime | None = None

    @property
    def people_count(self) -> int:
        return len(self.people)


@dataclass
class PersonSummary:
    user_id: int | None
    name: str = ""
    changes: int = 0
    record_types: set = field(default_factory=set)
    first: datetime | None = None
    last: datetime | None = None

    @property
    def record_type_count(self) -> int:
        return len(self.record_types)


@dataclass
class HistorySummary:
    changes: int
    first: datetime | None
    last: datetime | None
    by_type: list[TypeSummary]
    by_person: list[PersonSummary]
    status_changes: list[KeyChange]
    waivers_and_sign_offs: list[KeyChange]


def action_label(action: str) -> str:
    return {"created": _("created"), "changed": _("changed"), "deleted": _("deleted")}.get(
        action, action
    )


def person_name(user) -> str:
    if user is None:
        return _("the system")
    full = user.get_full_name()
    return f"{full} ({user.get_username()})" if full else user.get_username()


def _earliest(a, b):
    return b if a is None or (b is not None and b < a) else a


def _latest(a, b):
    return b if a is None or (b is not None and b > a) else a


def summarise_history(sources, *, record_counts: dict[str, int] | None = None) -> HistorySummary:
    """Summarise ``sources``: ``(HistorySource, history queryset)`` pairs of one case."""
    record_counts = record_counts or {}
    by_type: list[TypeSummary] = []
    people: dict[int | None, PersonSummary] = {}
    key_changes: list[KeyChange] = []
    for source, queryset in sources:
        summary = _count(source, queryset, people)
        summary.records = record_counts.get(source.key, 0)
        if summary.changes:
            by_type.append(summary)
            key_changes.extend(_key_changes(source, queryset))
    user_ids = {p for p in people if p is not None} | {
        c.user_id for c in key_changes if c.user_id is not None
    }
    user_ids |= {int(i) for c in key_changes for i in _user_refs(c)}
    users = {u.pk: u for u in get_user_model().objects.filter(pk__in=user_ids)}
    for person in people.values():
        person.name = person_name(users.get(person.user_id) if person.user_id else None)
    for change in key_changes:
        change.who = person_name(users.get(change.user_id) if change.user_id else None)
        for item in change.changes:
            item.old, item.new = _user_text(item.old, users), _user_text(item.new, users)
    key_changes.sort(key=lambda c: (c.when, c.history_id))
    by_type.sort(key=lambda s: s.label.lower())
    return HistorySummary(
        changes=sum(s.changes for s in by_type),
        first=min((s.first for s in by_type if s.first), default=None),
        last=max((s.last for s in by_type if s.last), default=None),
        by_type=by_type,
        by_person=sorted(people.values(), key=lambda p: (-p.changes, p.name)),
        status_changes=[c for c in key_changes if c.kind in (STATUS, DECISION)],
        waivers_and_sign_offs=[c for c in key_changes if c.kind in (WAIVER, SIGN_OFF)],
    )


def _count(source, queryset: QuerySet, people: dict) -> TypeSummary:
    summary = TypeSummary(key=source.key, label=str(source.model._meta.verbose_name))
    groups = (
        queryset.order_by()
        .values("history_user_id", "history_type")
        .annotate(n=Count("history_id"), first=Min("history_date"), last=Max("history_date"))
    )
    for group in groups:
        user_id, n = group["history_user_id"], group["n"]
        summary.changes += n
        action = ACTIONS.get(group["history_type"], "")
        if action:
            setattr(summary, action, getattr(summary, action) + n)
        summary.people.add(user_id)
        summary.first = _earliest(summary.first, group["first"])
        summary.last = _latest(summary.last, group["last"])
        person = people.setdefault(user_id, PersonSummary(user_id=user_id))
        person.changes += n
        person.record_types.add(source.key)
        person.first = _earliest(person.first, group["first"])
        person.last = _latest(person.last, group["last"])
    return summary


def watched_fields(source) -> dict[str, str]:
    """The history columns of ``source`` whose every change is printed, and what each holds."""
    columns = {f.attname for f in source.history_model._meta.concrete_fields}
    watched = {
        name: STATUS for name in columns if name in STATUS_FIELDS or name.endswith("_status")
    }
    whole = WHOLE_RECORDS.get(source.key)
    if whole is not None:
        watched = dict.fromkeys(_printed_columns(source), whole)
    watched.update(
        {
            name: kind
            for name, kind in WAIVER_AND_SIGN_OFF_FIELDS.get(source.key, {}).items()
            if name in columns
        }
    )
    return watched


def _printed_columns(source) -> list[str]:
    return [
        f.attname
        for f in source.history_model._meta.concrete_fields
        if f.attname not in HISTORY_COLUMNS and f.name not in NOT_PRINTED
    ]


def _key_changes(source, queryset: QuerySet) -> list[KeyChange]:
    watched = watched_fields(source)
    if not watched:
        return []
    whole = WHOLE_RECORDS.get(source.key)
    meta = source.history_model._meta
    fields = {f.attname: f for f in meta.concrete_fields}
    labels = [name for name in LABEL_FIELDS if name in fields]
    columns = list(watched)
    rows = (
        queryset.order_by("id", "history_date", "history_id")
        .values(
            "id",
            "history_id",
            "history_date",
            "history_type",
            "history_user_id",
            "history_change_reason",
            *[name for name in labels if name not in watched],
            *columns,
        )
        .iterator(chunk_size=history_files.FETCH_ROWS)
    )
    record_type = str(source.model._meta.verbose_name)
    previous: dict[Any, tuple] = {}
    found = []
    for row in rows:
        values = tuple(row[name] for name in columns)
        before = previous.get(row["id"])
        previous[row["id"]] = values
        action = ACTIONS.get(row["history_type"], row["history_type"])
        if before is None:
            # A record's first row: a status it starts in is no change; a waiver,
            # sign-off or decision it is created with is.
            changed = [
                (name, None, value)
                for name, value in zip(columns, values, strict=True)
                if watched[name] != STATUS and value not in (None, "", [], {})
            ]
        else:
            changed = [
                (name, old, new)
                for name, old, new in zip(columns, before, values, strict=True)
                if old != new
            ]
        if not changed and not (whole and action == "deleted"):
            continue
        kinds = {watched[name] for name, _old, _new in changed}
        found.append(
            KeyChange(
                when=row["history_date"],
                history_id=row["history_id"],
                kind=whole or (STATUS if STATUS in kinds else sorted(kinds)[0]),
                record_type=record_type,
                record=_label(row, labels),
                action=action,
                user_id=row["history_user_id"],
                reason=row["history_change_reason"] or "",
                changes=[
                    FieldChange(
                        str(fields[name].verbose_name),
                        _display(fields[name], old),
                        _display(fields[name], new),
                    )
                    for name, old, new in changed
                ],
            )
        )
    return found


def _label(row: dict, labels: list[str]) -> str:
    return record_label({name: row.get(name) for name in labels}) or f"#{row['id']}"


USER_REF = "\x00user:"


def _display(model_field, value) -> str:
    if value is None or value == "":
        return "—"
    if model_field.choices:
        return str(dict(model_field.flatchoices).get(value, value))
    related = getattr(model_field, "related_model", None)
    if related is not None and related is get_user_model():
        return f"{USER_REF}{value}"  # resolved to the person's name once users are read
    if related is not None:
        return f"#{value}"
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return value.isoformat()
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def _user_refs(change: KeyChange):
    for item in change.changes:
        for text in (item.old, item.new):
            if text.startswith(USER_REF):
                yield text[len(USER_REF) :]


def _user_text(text: str, users: dict) -> str:
    if not text.startswith(USER_REF):
        return text
    user_id = int(text[len(USER_REF) :])
    return person_name(users[user_id]) if user_id in users else f"#{user_id}"
