from django.contrib import admin

from apps.core.admin import ReadOnlyInline, RecordAdmin
from apps.scorecards.models import CriteriaPreset, CriteriaSet, Scorecard, ScoreEntry


@admin.register(CriteriaSet)
class CriteriaSetAdmin(RecordAdmin):
    """A published revision of the criteria; the app publishes the next one, never edits."""

    list_display = ["case", "revision", "published_by", "created_at"]
    list_select_related = ["case", "published_by"]


@admin.register(CriteriaPreset)
class CriteriaPresetAdmin(RecordAdmin):
    """A published version of a workload kind's preset; the app publishes the next one."""

    list_display = ["workload", "number", "published_by", "created_at"]
    list_select_related = ["published_by"]


class ScoreEntryInline(ReadOnlyInline):
    model = ScoreEntry


@admin.register(Scorecard)
class ScorecardAdmin(RecordAdmin):
    """One reviewer's own scores: only that reviewer revises them, in the app."""

    list_display = ["offer", "reviewer", "criteria_set", "updated_at"]
    list_select_related = ["offer__vendor", "reviewer", "criteria_set"]
    inlines = [ScoreEntryInline]
