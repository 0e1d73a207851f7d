"""Writes to criteria sets and scorecards."""

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from apps.core.services import ConcurrentEditError, tracked_create, tracked_update
from apps.scorecards.models import CriteriaPreset, CriteriaSet, Scorecard, ScoreEntry
from apps.scorecards.scoring import DEFAULT_CRITERIA, Criterion, score_errors
from apps.scorecards.selectors import preset_latest


def criteria_set_publish(
    *, actor, case, criteria: list[dict[str, Any]], note: str = ""
) -> CriteriaSet:
    """Publish a new revision; scorecards made against older revisions keep theirs."""
    with transaction.atomic():
        # The case's row is the lock: two publications at once number themselves one
        # after the other, even for the first revision, when no revision row exists.
        type(case).objects.select_for_update().filter(pk=case.pk).exists()
        latest = case.criteria_sets.aggregate(n=Max("revision"))["n"] or 0
        return tracked_create(
            CriteriaSet,
            actor=actor,
            reason=f"Criteria revision {latest + 1} published" + (f": {note}" if note else ""),
            case=case,
            revision=latest + 1,
            criteria=[
                {"key": c["key"], "label": c["label"], "weight": c["weight"]} for c in criteria
            ],
            note=note,
            published_by=actor,
        )


def criteria_set_current(*, actor, case) -> CriteriaSet:
    """The case's latest revision, publishing the default set on first use."""
    current = case.criteria_sets.order_by("-revision").first()
    if current is not None:
        return current
    preset = preset_latest(case.workload)
    criteria = preset.as_criteria() if preset else DEFAULT_CRITERIA
    default = [{"key": c.key, "label": c.label, "weight": c.weight} for c in criteria]
    note = (
        f"From the {preset.get_workload_display()} criteria preset v{preset.number}"
        if preset
        else "Default criteria"
    )
    return criteria_set_publish(actor=actor, case=case, criteria=default, note=note)


def criteria_preset_publish(
    *, actor, workload: str, criteria: list[dict[str, Any]], note: str
) -> CriteriaPreset:
    """Publish the next version of ``workload``'s preset. Earlier versions, and the cases
    that copied one, keep theirs: a version is never rewritten."""
    if not actor.has_perm("scorecards.add_criteriapreset"):
        raise PermissionDenied(_("Only an administrator may publish a criteria preset."))
    if not (note or "").strip():
        raise ValidationError({"note": _("Say why this preset version is published.")})
    with transaction.atomic():
        # The newest version's row is the lock; the first version of a kind is guarded by
        # the unique (workload, number) constraint (a second publisher is answered 409).
        latest = (
            CriteriaPreset.objects.select_for_update()
            .filter(workload=workload)
            .order_by("-number")
            .first()
        )
        number = (latest.number if latest else 0) + 1
        return tracked_create(
            CriteriaPreset,
            actor=actor,
            reason=f"Criteria preset v{number} published: {note.strip()}",
            workload=workload,
            number=number,
            criteria=[
                {"key": c["key"], "label": c["label"], "weight": c["weight"]} for c in criteria
            ],
            note=note.strip(),
            published_by=actor,
        )


def scorecard_save(
    *,
    actor,
    offer,
    scores: dict[str, dict[str, Any]],
    reason: str = "",
    expected_version: int | None = None,
) -> Scorecard:
    """Save the actor's own scorecard for an offer: every criterion in one transaction.

    ``scores`` maps criterion key to ``{"score": int | None, "comment": str}``.
    """
    if not actor.has_perm("scorecards.add_scorecard"):
        raise PermissionDenied(_("You may not score offers."))
    with transaction.atomic():
        criteria_set = criteria_set_current(actor=actor, case=offer.case)
        criteria: tuple[Criterion, ...] = criteria_set.as_criteria()
        errors = score_errors(criteria, {k: v.get("score") for k, v in scores.items()})
        if errors:
            raise ValidationError({f"score_{key}": message for key, message in errors.items()})
        scorecard = Scorecard.objects.filter(
            offer=offer, reviewer=actor, criteria_set=criteria_set
        ).first()
        if scorecard is None:
            scorecard = tracked_create(
                Scorecard,
                actor=actor,
                reason="Scorecard started",
                offer=offer,
                reviewer=actor,
                criteria_set=criteria_set,
            )
        elif expected_version is not None and scorecard.version != expected_version:
            raise ConcurrentEditError(scorecard, expected_version)
        else:
            # Bump the scorecard's version so a second editor's stale form is refused.
            scorecard = tracked_update(
                scorecard, actor=actor, reason=reason or "Scores revised", fields={}
            )
        _entries_save(
            actor=actor,
            scorecard=scorecard,
            criteria=criteria,
            scores=scores,
            reason=reason or "Scored",
        )
    return scorecard


def _entries_save(*, actor, scorecard, criteria, scores, reason: str) -> None:
    existing = {e.criterion_key: e for e in scorecard.entries.all()}
    for criterion in criteria:
        given = scores.get(criterion.key, {})
        fields = {"score": given.get("score"), "comment": (given.get("comment") or "").strip()}
        entry = existing.get(criterion.key)
        if entry is None:
            tracked_create(
                ScoreEntry,
                actor=actor,
                reason=reason,
                scorecard=scorecard,
                criterion_key=criterion.key,
                **fields,
            )
        elif (entry.score, entry.comment) != (fields["score"], fields["comment"]):
            tracked_update(entry, actor=actor, reason=reason, fields=fields)
