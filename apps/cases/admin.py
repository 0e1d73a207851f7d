from django.contrib import admin

from apps.cases import services
from apps.cases.models import ProcurementCase
from apps.core.admin import TrackedAdmin


@admin.register(ProcurementCase)
class ProcurementCaseAdmin(TrackedAdmin):
    """Status moves only through the workflow, and the three-offer waiver only through its
    service: both are shown read-only here, with the owner."""

    list_display = ["name", "status", "workload", "owner", "created_at"]
    list_filter = ["status", "workload"]
    search_fields = ["name"]
    editable_fields = services.EDITABLE_FIELDS

    def update(self, request, obj, *, fields, reason, version):
        return services.case_update(
            actor=request.user, case=obj, fields=fields, reason=reason, expected_version=version
        )
