"""A reviewer's scorecard of an offer as a workbook, and that workbook read back.

The columns are listed here; writing, printing and checking are
``apps.core.spreadsheets``. Rows are keyed by the criterion's key (first column),
so headers may be in English or Chinese; the score and comment columns are the
ones an import takes, saved through ``scorecard_save`` like the page's form.
"""

from django.utils.translation import gettext_lazy as _

from apps.core.spreadsheets import (
    INTEGER,
    TEXT,
    Column,
    Imported,
    SheetSpec,
    Stamp,
    import_reason,
    record_workbook,
    workbook_filename,
    workbook_read,
)
from apps.scorecards import services
from apps.scorecards.models import Scorecard
from apps.scorecards.scoring import SCORE_MAX, SCORE_MIN
from apps.scorecards.selectors import default_criteria

SPEC = SheetSpec(
    kind="scorecard",
    title=_("Scorecard"),
    columns=(
        Column("key", _("Criterion key"), width=18),
        Column("label", _("Criterion"), width=34),
        Column("weight", _("Weight (points)"), width=10, kind=INTEGER),
        Column(
            "score",
            _("Score (0–5)"),
            width=10,
            kind=INTEGER,
            editable=True,
            minimum=SCORE_MIN,
            maximum=SCORE_MAX,
        ),
        Column("comment", _("Comment"), width=60, kind=TEXT, editable=True, max_length=2000),
    ),
)


def _current(offer):
    """The case's current criteria revision (None: the defaults, not yet published) and criteria."""
    current = offer.case.criteria_sets.order_by("-revision").first()
    return current, (current.as_criteria() if current else default_criteria(offer.case))


def _scorecard(offer, reviewer, criteria_set) -> Scorecard | None:
    if criteria_set is None:
        return None
    return (
        Scorecard.objects.filter(offer=offer, reviewer=reviewer, criteria_set=criteria_set)
        .prefetch_related("entries")
        .first()
    )


def _stamp(offer, reviewer, criteria_set, scorecard) -> Stamp:
    revision = criteria_set.revision if criteria_set else 0
    return Stamp(
        kind=SPEC.kind,
        record=f"offer {offer.pk}, reviewer {reviewer.pk}",
        version=scorecard.version if scorecard else 0,
        revision=f"criteria revision {revision}",
    )


def scorecard_workbook(offer, reviewer) -> tuple[bytes, str]:
    """The reviewer's scorecard of the offer (blank where not scored yet) and its file name."""
    criteria_set, criteria = _current(offer)
    scorecard = _scorecard(offer, reviewer, criteria_set)
    entries = {e.criterion_key: e for e in scorecard.entries.all()} if scorecard else {}
    rows = []
    for criterion in criteria:
        entry = entries.get(criterion.key)
        rows.append(
            [
                criterion.key,
                criterion.label,
                criterion.weight,
                entry.score if entry else None,
                entry.comment if entry else "",
            ]
        )
    title = f"{offer.vendor} — {reviewer.get_full_name() or reviewer.get_username()}"
    content = record_workbook(
        SPEC, rows, title=title, stamp=_stamp(offer, reviewer, criteria_set, scorecard)
    )
    name = workbook_filename(f"scorecard-offer-{offer.pk}-reviewer", reviewer.pk)
    return content, name


def scorecard_import(*, actor, offer, upload) -> Imported:
    """Read the actor's filled-in scorecard workbook, checked whole, and save it."""
    criteria_set, criteria = _current(offer)
    scorecard = _scorecard(offer, actor, criteria_set)
    imported = workbook_read(
        upload,
        SPEC,
        expected=_stamp(offer, actor, criteria_set, scorecard),
        keys=[c.key for c in criteria],
    )
    services.scorecard_save(
        actor=actor,
        offer=offer,
        scores={
            key: {"score": values["score"], "comment": values["comment"]}
            for key, values in imported.rows.items()
        },
        reason=import_reason(imported.filename),
        expected_version=scorecard.version if scorecard else None,
    )
    return imported
