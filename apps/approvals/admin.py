from django.contrib import admin

from apps.approvals import services
from apps.approvals.models import (
    Approval,
    ApprovalChain,
    ApprovalPolicy,
    ChainDecision,
    Delegation,
    FindingAcceptance,
    PolicyStep,
    Reminder,
    WorkAssignment,
)
from apps.core.admin import RecordAdmin, TrackedAdmin


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


class _PolicyRecordAdmin(TrackedAdmin):
    """Set by the administrator; written through the app's service, with a reason."""

    def update(self, request, obj, *, fields, reason, version):
        return services.policy_record_update(
            obj, actor=request.user, fields=fields, reason=reason, expected_version=version
        )

    def create(self, request, *, fields):
        return services.policy_record_create(self.model, actor=request.user, fields=fields)


@admin.register(ApprovalPolicy)
class ApprovalPolicyAdmin(_PolicyRecordAdmin):
    """Who approves after the tech lead; a chain copies it when it starts."""

    list_display = ("name", "in_force", "updated_at")
    editable_fields = ("name", "description", "in_force")


@admin.register(PolicyStep)
class PolicyStepAdmin(_PolicyRecordAdmin):
    """One step of a policy: a role or a named person, its quorum and its conditions."""

    list_display = ("policy", "order", "label", "role", "person", "quorum")
    list_filter = ("policy",)
    editable_fields = (
        "policy",
        "order",
        "label",
        "role",
        "person",
        "quorum",
        "value_above",
        "value_currency",
        "if_prepayment",
        "term_above_months",
        "finding_code",
        "if_personal_data",
    )


@admin.register(Delegation)
class DelegationAdmin(_PolicyRecordAdmin):
    """A person's approvals handed to another between two days."""

    list_display = ("delegator", "delegate", "starts_on", "ends_on")
    editable_fields = ("delegator", "delegate", "starts_on", "ends_on", "note")


@admin.register(ApprovalChain)
class ApprovalChainAdmin(RecordAdmin):
    """A case's chain: started by the tech lead's approval, decided step by step in the app."""

    list_display = ("case", "offer", "state", "tech_lead", "tech_lead_at", "finished_at")
    list_filter = ("state",)


@admin.register(ChainDecision)
class ChainDecisionAdmin(RecordAdmin):
    """One person's decision at one step of a chain: made in the app only."""

    list_display = ("chain", "step", "decision", "decided_by", "on_behalf_of", "decided_at")
    list_filter = ("decision",)
