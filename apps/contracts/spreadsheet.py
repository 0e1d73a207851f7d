"""An offer's contract clause checklist as a workbook, and that workbook read back.

The columns are listed here; writing, printing and checking are
``apps.core.spreadsheets``. Rows are keyed by the item's key (first column), so
headers may be in English or Chinese; status, clause reference, excerpt and note
are what an import takes, saved through ``checklist_save`` like the page's form.
A status is read from its value or its label in either language; blank is
"not reviewed".
"""

import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from apps.contracts import services
from apps.contracts.models import ClauseChecklist, ItemStatus
from apps.contracts.services import ITEM_FIELDS
from apps.core.spreadsheets import (
    CHOICE,
    INTEGER,
    TEXT,
    Column,
    Imported,
    SheetSpec,
    SpreadsheetRefused,
    Stamp,
    import_reason,
    record_workbook,
    workbook_filename,
    workbook_read,
)

ROW_ERROR = re.compile(r"^items\[(\d+)\]\.(\w+)$")

SPEC = SheetSpec(
    kind="clause-checklist",
    title=_("Clause checklist"),
    columns=(
        Column("key", _("Item key"), width=18),
        Column("number", _("No."), width=6, kind=INTEGER),
        Column("title", _("Clause and what to check"), width=36),
        Column(
            "status",
            _("Status"),
            width=18,
            kind=CHOICE,
            editable=True,
            choices=lambda _key: ItemStatus.choices,
        ),
        Column("clause_reference", _("Clause reference"), width=16, editable=True, max_length=200),
        Column("excerpt", _("Excerpt"), width=48, kind=TEXT, editable=True),
        Column("note", _("Note"), width=36, kind=TEXT, editable=True),
    ),
)


def _stamp(checklist: ClauseChecklist) -> Stamp:
    return Stamp(
        kind=SPEC.kind,
        record=f"clause checklist {checklist.pk}, offer {checklist.offer_id}",
        version=checklist.version,
    )


def _what_to_check(item) -> str:
    return "\n".join([item.title, *(f"• {point}" for point in item.sub_points)])


def checklist_workbook(checklist: ClauseChecklist) -> tuple[bytes, str]:
    """The checklist, one row per item, and its file name."""
    rows = [
        [
            item.key,
            item.number,
            _what_to_check(item),
            item.get_status_display() if item.status else "",
            item.clause_reference,
            item.excerpt,
            item.note,
        ]
        for item in checklist.items.order_by("number")
    ]
    offer = checklist.offer
    content = record_workbook(SPEC, rows, title=str(offer.vendor), stamp=_stamp(checklist))
    return content, workbook_filename("checklist-offer", offer.pk, str(offer.vendor))


def checklist_import(*, actor, checklist: ClauseChecklist, upload) -> Imported:
    """Read the filled-in checklist workbook, checked whole, and save every row together."""
    current = ClauseChecklist.objects.get(pk=checklist.pk)
    items = {item.key: item for item in current.items.order_by("number")}
    imported = workbook_read(upload, SPEC, expected=_stamp(current), keys=list(items))
    keys = list(imported.rows)
    try:
        services.checklist_save(
            actor=actor,
            checklist=current,
            items=[{"id": items[key].pk, **imported.rows[key]} for key in keys],
            reason=import_reason(imported.filename),
            expected_version=current.version,
        )
    except ValidationError as error:
        if not hasattr(error, "error_dict"):
            raise
        raise SpreadsheetRefused(_at_cells(imported, keys, error.message_dict)) from None
    return imported


def _at_cells(imported: Imported, keys: list[str], errors: dict[str, list[str]]) -> list[str]:
    """The service's ``items[<row>].<field>`` refusals, placed at their cells."""
    placed = []
    for name, messages in errors.items():
        match = ROW_ERROR.match(name)
        for message in messages:
            if match and int(match[1]) < len(keys) and match[2] in ITEM_FIELDS:
                placed.append(imported.at(keys[int(match[1])], match[2], message))
            else:
                placed.append(message)
    return placed
