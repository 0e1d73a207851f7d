from django.contrib import admin

from apps.approvals.models import Approval, FindingAcceptance, Reminder, WorkAssignment
from apps.core.admin import RecordAdmin


@admin.register(Approval)
class ApprovalAdmin(RecordAdmin):
    """A tech lead's decision, bound to what it judged: only the decider makes it, in the app."""

    list_display = ("case", "offer", "decision", "decided_by", "decided_at", "stale_at")
    list_filter = ("decision",)


@admin.register(Reminder)
class ReminderAdmin(RecordAdmin):
    """A reminder that was sent; its unique key keeps sending idempotent."""

    list_display = ("kind", "label", "due_on", "threshold", "created_at")
    list_filter = ("kind", "threshold")


@admin.register(FindingAcceptance)
class FindingAcceptanceAdmin(RecordAdmin):
    """An owner's acceptance of a finding: accepted and withdrawn in the app, where the
    register is read again under the case's lock."""

    list_display = ("case", "offer", "code", "role", "accepted_by", "expires_on", "withdrawn_at")
    list_filter = ("role",)


@admin.register(WorkAssignment)
class WorkAssignmentAdmin(RecordAdmin):
    """Who has an item of My work, until when: given and given back on My work, where the
    item and who may assign it are worked out."""

    list_display = ("case", "item_key", "role", "assignee", "due_on", "assigned_by")
    list_filter = ("role",)
