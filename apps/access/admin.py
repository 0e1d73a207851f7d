from django.contrib import admin

from apps.access import services
from apps.access.models import (
    AccessControl,
    AccessGrant,
    AccessMatrix,
    AccessPermission,
    AccessRole,
    NetworkPlan,
    WorkloadLink,
)
from apps.core.admin import ReadOnlyInline, RecordAdmin, TrackedAdmin


class AccessRoleInline(ReadOnlyInline):
    model = AccessRole


class AccessPermissionInline(ReadOnlyInline):
    model = AccessPermission


class AccessControlInline(ReadOnlyInline):
    model = AccessControl


@admin.register(AccessMatrix)
class AccessMatrixAdmin(RecordAdmin):
    """The matrix is saved whole in the app, where a change clears the quarterly review;
    one row edited here would keep a review that no longer covers it."""

    list_display = ["case", "reviewed_by", "reviewed_at", "review_by", "version"]
    list_select_related = ["case", "reviewed_by"]
    inlines = [AccessRoleInline, AccessPermissionInline, AccessControlInline]


@admin.register(AccessGrant)
class AccessGrantAdmin(RecordAdmin):
    list_display = ["role", "permission", "justification"]
    list_select_related = ["role", "permission"]


class WorkloadLinkInline(ReadOnlyInline):
    model = WorkloadLink


@admin.register(NetworkPlan)
class NetworkPlanAdmin(TrackedAdmin):
    """The plan's own fields go through the app's service; its links are kept as they are."""

    list_display = ["case", "target_latency_ms", "estimated_rtt_ms", "rtt_source"]
    list_select_related = ["case"]
    inlines = [WorkloadLinkInline]
    editable_fields = services.PLAN_FIELDS

    def update(self, request, obj, *, fields, reason, version):
        links = [
            {"workload": link.workload, "key_metric": link.key_metric, "link": link.link,
             "data_sent": link.data_sent, "notes": link.notes}
            for link in obj.links.all()
        ]  # fmt: skip
        return services.network_plan_save(
            actor=request.user,
            case=obj.case,
            fields=fields,
            links=links,
            reason=reason,
            expected_version=version,
        )


for model in (AccessRole, AccessPermission, AccessControl, WorkloadLink):
    admin.site.register(model, RecordAdmin)
