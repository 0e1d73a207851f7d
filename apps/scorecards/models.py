"""Scorecards: weighted criteria per case, scores per reviewer per offer
(docs/rules/offers.md#scorecard)."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.cases.models import ProcurementCase
from apps.core.bounds import CHANGE_REASON_MAX_LENGTH, REASON_MAX_LENGTH
from apps.core.models import TrackedModel
from apps.scorecards.scoring import SCORE_MAX, Criterion, criterion_label, weights_errors


class CriteriaSet(TrackedModel):
    """One published revision of a case's weighted criteria; weights sum to 100."""

    case = models.ForeignKey(
        "cases.ProcurementCase", on_delete=models.CASCADE, related_name="criteria_sets"
    )
    revision = models.PositiveIntegerField(_("revision"))
    criteria = models.JSONField(_("criteria"), help_text=_("[{key, label, weight}] in order"))
    note = models.TextField(_("note"), max_length=CHANGE_REASON_MAX_LENGTH, blank=True)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["case_id", "-revision"]
        verbose_name = _("criteria set")
        verbose_name_plural = _("criteria sets")
        constraints = [
            models.UniqueConstraint(fields=["case", "revision"], name="criteriaset_case_revision")
        ]

    def __str__(self) -> str:
        return f"{self.case} — criteria r{self.revision}"

    def as_criteria(self) -> tuple[Criterion, ...]:
        return tuple(Criterion(c["key"], c["label"], int(c["weight"])) for c in self.criteria)

    def clean(self) -> None:
        try:
            criteria = self.as_criteria()
        except (KeyError, TypeError, ValueError):
            message = _("Each criterion needs a key, label and weight.")
            raise ValidationError({"criteria": message}) from None
        errors = weights_errors(criteria)
        if errors:
            raise ValidationError({"criteria": errors})


class CriteriaPreset(TrackedModel):
    """One published version of the criteria a new case of one workload kind starts with.

    Each edit publishes the next version; a version is never rewritten. A case copies the
    newest version of its kind into its first criteria revision, and keeps that copy.
    """

    workload = models.CharField(_("workload"), max_length=20, choices=ProcurementCase.Workload)
    number = models.PositiveIntegerField(_("preset version"))
    criteria = models.JSONField(_("criteria"), help_text=_("[{key, label, weight}] in order"))
    note = models.TextField(_("note"), max_length=CHANGE_REASON_MAX_LENGTH, blank=True)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("published by"),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["workload", "-number"]
        verbose_name = _("criteria preset")
        verbose_name_plural = _("criteria presets")
        constraints = [
            models.UniqueConstraint(
                fields=["workload", "number"], name="criteriapreset_workload_number"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_workload_display()} — criteria preset v{self.number}"

    def as_criteria(self) -> tuple[Criterion, ...]:
        return tuple(Criterion(c["key"], c["label"], int(c["weight"])) for c in self.criteria)

    def clean(self) -> None:
        try:
            criteria = self.as_criteria()
        except (KeyError, TypeError, ValueError):
            message = _("Each criterion needs a key, label and weight.")
            raise ValidationError({"criteria": message}) from None
        errors = weights_errors(criteria)
        if errors:
            raise ValidationError({"criteria": errors})


class Scorecard(TrackedModel):
    """One reviewer's scores for one offer against one criteria revision."""

    offer = models.ForeignKey("offers.Offer", on_delete=models.CASCADE, related_name="scorecards")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="scorecards"
    )
    criteria_set = models.ForeignKey(
        CriteriaSet, on_delete=models.PROTECT, related_name="scorecards"
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["offer_id", "reviewer_id"]
        verbose_name = _("scorecard")
        verbose_name_plural = _("scorecards")
        constraints = [
            models.UniqueConstraint(
                fields=["offer", "reviewer", "criteria_set"], name="scorecard_one_per_reviewer"
            )
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} on {self.offer}"


class ScoreEntry(TrackedModel):
    """A 0–5 score and comment for one criterion; blank means not answered."""

    scorecard = models.ForeignKey(Scorecard, on_delete=models.CASCADE, related_name="entries")
    criterion_key = models.CharField(_("criterion"), max_length=50)
    score = models.PositiveSmallIntegerField(
        _("score"), null=True, blank=True, validators=[MaxValueValidator(SCORE_MAX)]
    )
    comment = models.TextField(_("comment"), max_length=REASON_MAX_LENGTH, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["scorecard_id", "pk"]
        verbose_name = _("score")
        verbose_name_plural = _("scores")
        constraints = [
            models.UniqueConstraint(
                fields=["scorecard", "criterion_key"], name="scoreentry_one_per_criterion"
            ),
            models.CheckConstraint(
                condition=models.Q(score__isnull=True) | models.Q(score__lte=SCORE_MAX),
                name="scoreentry_score_0_to_5",
            ),
        ]

    @property
    def criterion_label(self) -> str:
        return criterion_label(self.criterion_key) if self.criterion_key else ""

    def __str__(self) -> str:
        return f"{self.criterion_key}: {self.score}"
