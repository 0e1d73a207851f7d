from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from apps.access.models import (
    AccessControl,
    AccessGrant,
    AccessMatrix,
    AccessPermission,
    AccessRole,
    NetworkPlan,
    WorkloadLink,
)


class AccessRoleInline(admin.TabularInline):
    model = AccessRole
    extra = 0


class AccessPermissionInline(admin.TabularInline):
    model = AccessPermission
    extra = 0


class AccessControlInline(admin.TabularInline):
    model = AccessControl
    extra = 0


@admin.register(AccessMatrix)
class AccessMatrixAdmin(SimpleHistoryAdmin):
    list_display = ["case", "reviewed_by", "reviewed_at", "review_by", "version"]
    list_select_related = ["case", "reviewed_by"]
    inlines = [AccessRoleInline, AccessPermissionInline, AccessControlInline]


@admin.register(AccessGrant)
class AccessGrantAdmin(SimpleHistoryAdmin):
    list_display = ["role", "permission", "justification"]
    list_select_related = ["role", "permission"]


class WorkloadLinkInline(admin.TabularInline):
    model = WorkloadLink
    extra = 0


@admin.register(NetworkPlan)
class NetworkPlanAdmin(SimpleHistoryAdmin):
    list_display = ["case", "target_latency_ms", "measured_rtt_ms", "rtt_source"]
    list_select_related = ["case"]
    inlines = [WorkloadLinkInline]


for model in (AccessRole, AccessPermission, AccessControl, WorkloadLink):
    admin.site.register(model, SimpleHistoryAdmin)
