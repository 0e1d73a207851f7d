from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from apps.approvals.models import Approval, Reminder


@admin.register(Approval)
class ApprovalAdmin(SimpleHistoryAdmin):
    list_display = ("case", "offer", "decision", "decided_by", "decided_at", "stale_at")
    list_filter = ("decision",)
    readonly_fields = ("gates", "bound_state", "stale_changes")


@admin.register(Reminder)
class ReminderAdmin(SimpleHistoryAdmin):
    list_display = ("kind", "label", "due_on", "threshold", "created_at")
    list_filter = ("kind", "threshold")
