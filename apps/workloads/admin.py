"""Sets are uploaded and required in the app; the admin only reads what was recorded (never
the text of a set: that stays with the case's roles)."""

from django.contrib import admin

from apps.core.admin import RecordAdmin
from apps.workloads.models import PlanWorkload, WorkloadSet


@admin.register(WorkloadSet)
class WorkloadSetAdmin(RecordAdmin):
    list_display = ["name", "set_version", "kind", "case", "item_count", "sha256", "created_at"]
    list_select_related = ["case"]


@admin.register(PlanWorkload)
class PlanWorkloadAdmin(RecordAdmin):
    list_display = ["plan", "prompt_set", "sample_set", "updated_at"]
    list_select_related = ["plan", "prompt_set", "sample_set"]
