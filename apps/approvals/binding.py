"""Bind a decision to the exact records it judged, and find what changed since.

A ``Scope`` names a record (``field="id"``) or a group of child records
(``field="checklist_id"`` …) by a column of its history table. Binding stores
the newest history id of each scope; a later history row in any of them (an
edit, an addition, a deletion) is a material change and makes the approval
stale. Reads are one query per (record type, column), however many
approvals are checked together.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.apps import apps as django_apps
from django.db.models import Max
from django.utils.translation import gettext

from apps.evidence import selectors as evidence_selectors
from apps.evidence.rules.composition import value_changes
from apps.evidence.wording import in_words


@dataclass(frozen=True)
class Scope:
    model: str  # "app_label.modelname"
    field: str  # a column of the history table
    value: int
    label: str = ""


@dataclass(frozen=True)
class Change:
    """One material change since a decision: which record, and the newest edit to it."""

    model: str
    record: str
    label: str
    when: datetime | None
    user: str
    action: str
    reason: str

    def as_dict(self) -> dict:
        return {
            "model": self.model,
            "record": self.record,
            "label": self.label,
            "when": self.when.isoformat() if self.when else None,
            "user": self.user,
            "action": self.action,
            "reason": self.reason,
        }

    def __str__(self) -> str:
        text = f"{self.label}: {self.action}"
        if self.user:
            text += f" by {self.user}"
        if self.reason:
            text += f" ({self.reason})"
        return text


ACTIONS = {"+": "added", "~": "changed", "-": "deleted"}

# Columns whose change alone is not a change to what was judged: the case's own status
# moves (approved → accepted, and back when an acceptance sign-off is voided) are the
# workflow's consequences of the decision, not edits to the case.
NOT_MATERIAL = {
    "cases.procurementcase": frozenset({"status", "updated_at", "version"}),
    # Where a clause stands in the signed document, and the contract's dates (recorded
    # once it is signed, after the decision): they change no verdict the decision rests on.
    "contracts.checklistitem": frozenset(
        {"document_id", "document_page", "document_quote", "updated_at", "version"}
    ),
    "contracts.contractterms": frozenset(
        {"effective_date", "renewal_date", "notice_deadline", "end_date", "updated_at", "version"}
    ),
}


def _history_model(label: str):
    try:
        return django_apps.get_model(label).history.model
    except LookupError:
        return None


def capture(scopes: list[Scope]) -> list[dict]:
    """The newest history id of every scope, as stored in ``Approval.bound_state``."""
    latest = _latest({(s.model, s.field): {s.value for s in scopes} for s in scopes})
    return [
        {
            "model": s.model,
            "field": s.field,
            "value": s.value,
            "label": s.label,
            "history_id": latest.get((s.model, s.field, s.value), 0),
        }
        for s in scopes
    ]


def _latest(groups: dict[tuple[str, str], set[int]]) -> dict[tuple[str, str, int], int]:
    found: dict[tuple[str, str, int], int] = {}
    for (model, field), values in groups.items():
        history = _history_model(model)
        if history is None:
            continue
        rows = (
            history.objects.filter(**{f"{field}__in": values})
            .values(field)
            .annotate(latest=Max("history_id"))
            .order_by()
        )
        for row in rows:
            found[(model, field, row[field])] = row["latest"]
    return found


def changes_for(approvals) -> dict[int, list[Change]]:
    """For each approval, the records changed since it was decided (empty: still current)."""
    groups: dict[tuple[str, str], set[int]] = defaultdict(set)
    for approval in approvals:
        for record in approval.bound_state.get("records", []):
            groups[(record["model"], record["field"])].add(record["value"])
    latest = _latest(groups)
    moved = [
        (approval.pk, record)
        for approval in approvals
        for record in approval.bound_state.get("records", [])
        if latest.get((record["model"], record["field"], record["value"]), 0)
        != record["history_id"]
    ]
    immaterial = _immaterial([record for _pk, record in moved])
    changed: dict[int, list[dict]] = {}
    for approval_pk, record in moved:
        if id(record) not in immaterial:
            changed.setdefault(approval_pk, []).append(record)
    details = _describe(changed)
    evidence = _evidence_changes(approvals)
    verification = _verification_changes(approvals)
    result = {}
    for approval in approvals:
        found = [details[(approval.pk, i)] for i, _r in enumerate(changed.get(approval.pk, []))]
        found += evidence.get(approval.pk, []) + verification.get(approval.pk, [])
        result[approval.pk] = found
    return result


def _immaterial(records: list[dict]) -> set[int]:
    """``id()`` of the records whose rows after the bound one change only ``NOT_MATERIAL``
    columns (one query per record type, like the rest of the binding)."""
    by_type: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for record in records:
        if record["model"] in NOT_MATERIAL:
            by_type[(record["model"], record["field"])].append(record)
    found: set[int] = set()
    for (model, field), wanted in by_type.items():
        history = _history_model(model)
        if history is None:
            continue
        columns = [
            f.attname
            for f in history._meta.concrete_fields
            if not f.attname.startswith("history_") and f.attname not in NOT_MATERIAL[model]
        ]
        rows_of: dict[int, list[dict]] = defaultdict(list)
        for row in (
            history.objects.filter(
                **{
                    f"{field}__in": {r["value"] for r in wanted},
                    "history_id__gte": min(r["history_id"] for r in wanted),
                }
            )
            .order_by("history_id")
            .values("history_id", "history_type", *dict.fromkeys([field, *columns]))
        ):
            rows_of[row[field]].append(row)
        for record in wanted:
            rows = [r for r in rows_of[record["value"]] if r["history_id"] >= record["history_id"]]
            if not rows or rows[0]["history_id"] != record["history_id"]:
                continue  # the bound row itself is gone: something was rewritten
            bound = {c: rows[0][c] for c in columns}
            later = rows[1:]
            if all(r["history_type"] == "~" and {c: r[c] for c in columns} == bound for r in later):
                found.add(id(record))
    return found


def _describe(changed: dict[int, list[dict]]) -> dict[tuple[int, int], Change]:
    """The newest history row after the bound one, per changed scope (one query per type)."""
    by_group: dict[tuple[str, str], list[tuple[int, int, dict]]] = defaultdict(list)
    for approval_pk, records in changed.items():
        for index, record in enumerate(records):
            by_group[(record["model"], record["field"])].append((approval_pk, index, record))
    details: dict[tuple[int, int], Change] = {}
    for (model, field), entries in by_group.items():
        history = _history_model(model)
        newest: dict[int, object] = {}
        if history is not None:
            values = {record["value"] for _a, _i, record in entries}
            rows = (
                history.objects.filter(**{f"{field}__in": values})
                .select_related("history_user")
                .order_by("-history_id")
            )
            for row in rows:
                newest.setdefault(getattr(row, field), row)
        for approval_pk, index, record in entries:
            row = newest.get(record["value"])
            details[(approval_pk, index)] = _change(model, record, row)
    return details


def _change(model: str, record: dict, row) -> Change:
    if row is None:
        return Change(model, str(record["value"]), record["label"], None, "", "removed", "")
    user = row.history_user.get_username() if row.history_user_id else ""
    return Change(
        model=model,
        record=str(record["value"]),
        label=record["label"],
        when=row.history_date,
        user=user,
        action=ACTIONS.get(row.history_type, row.history_type),
        reason=row.history_change_reason or "",
    )


def _evidence_changes(approvals) -> dict[int, list[Change]]:
    wanted = {e["bundle"] for a in approvals for e in a.bound_state.get("evidence", [])}
    if not wanted:
        return {}
    try:
        bundle_model = django_apps.get_model("evidence.EvidenceBundle")
    except LookupError:
        return {}
    digests = dict(bundle_model.objects.filter(pk__in=wanted).values_list("pk", "sha256"))
    result: dict[int, list[Change]] = {}
    for approval in approvals:
        for entry in approval.bound_state.get("evidence", []):
            now = digests.get(entry["bundle"])
            if now != entry["sha256"]:
                result.setdefault(approval.pk, []).append(
                    Change(
                        "evidence.evidencebundle",
                        str(entry["bundle"]),
                        f"evidence {entry['sha256'][:12]}",
                        None,
                        "",
                        "removed" if now is None else "digest changed",
                        "",
                    )
                )
    return result


def _verification_changes(approvals) -> dict[int, list[Change]]:
    """An offer's verification is composed anew with every bundle; a decision bound to it
    (``bound_state["verification"]``) goes stale only where a value it relied on differs
    in the offer's verification now (one query for all approvals)."""
    bound = [(a, a.bound_state.get("verification")) for a in approvals]
    bound = [(a, entry) for a, entry in bound if entry]
    if not bound:
        return {}
    now = evidence_selectors.current_verifications({entry["offer"] for _a, entry in bound})
    result: dict[int, list[Change]] = {}
    for approval, entry in bound:
        current = now.get(entry["offer"])
        if current is None:
            change = Change(
                "evidence.specverification",
                str(entry["verification"]),
                gettext("spec verification"),
                None,
                "",
                "removed",
                "",
            )
        else:
            if current.pk == entry["verification"]:
                continue
            titles = {
                check["key"]: in_words(check["title"])
                for check in current.checks or []
                if check.get("key") and check.get("title")
            }
            differences = value_changes(
                entry["values"], evidence_selectors.verification_values(current), titles
            )
            if not differences:
                continue
            shown = "; ".join(differences[:5])
            if len(differences) > 5:
                shown += f"; and {len(differences) - 5} more"
            change = Change(
                "evidence.specverification",
                str(current.pk),
                gettext("spec verification"),
                current.created_at,
                "",
                "changed",
                shown,
            )
        result.setdefault(approval.pk, []).append(change)
    return result
