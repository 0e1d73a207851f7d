"""Reassessments are started by the schedule or by hand in the app; the admin only reads them."""

from django.contrib import admin

from apps.casework.models import Reassessment
from apps.core.admin import RecordAdmin


@admin.register(Reassessment)
class ReassessmentAdmin(RecordAdmin):
    list_display = ["vendor", "offer", "due_on", "started_at", "completed_at", "lapsed_at"]
    list_select_related = ["vendor", "offer__vendor"]
