from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from apps.scorecards.models import CriteriaSet, Scorecard, ScoreEntry


@admin.register(CriteriaSet)
class CriteriaSetAdmin(SimpleHistoryAdmin):
    list_display = ["case", "revision", "published_by", "created_at"]
    list_select_related = ["case", "published_by"]


class ScoreEntryInline(admin.TabularInline):
    model = ScoreEntry
    extra = 0


@admin.register(Scorecard)
class ScorecardAdmin(SimpleHistoryAdmin):
    list_display = ["offer", "reviewer", "criteria_set", "updated_at"]
    list_select_related = ["offer__vendor", "reviewer", "criteria_set"]
    inlines = [ScoreEntryInline]
