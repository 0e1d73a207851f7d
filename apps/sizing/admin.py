from django.contrib import admin

from apps.core.admin import TrackedAdmin
from apps.sizing import services
from apps.sizing.inputs import INPUT_MAX
from apps.sizing.models import ComputeDemand, RequirementSpec
from apps.sizing.requirement import SPEC_FIELDS


@admin.register(ComputeDemand)
class ComputeDemandAdmin(TrackedAdmin):
    """Edits go through ``compute_demand_save``, which refuses inputs that do not compute.
    A demand is saved from the case's calculator."""

    list_display = ["case", "mode", "model_preset", "target_concurrency"]
    list_select_related = ["case"]
    editable_fields = services.DEMAND_FIELDS

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        # The calculator's bounds, as on the page and in the API: past them the
        # byte figures outgrow Decimal's precision.
        if db_field.name in INPUT_MAX:
            kwargs.update(min_value=1, max_value=INPUT_MAX[db_field.name])
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def update(self, request, obj, *, fields, reason, version):
        return services.compute_demand_save(
            actor=request.user,
            case=obj.case,
            fields=fields,
            reason=reason,
            expected_version=version,
        )


@admin.register(RequirementSpec)
class RequirementSpecAdmin(TrackedAdmin):
    """Edits go through ``requirement_spec_save``; a spec is written on the case's sizing."""

    list_display = ["case", "card_count", "memory_per_card_gib", "card_tier"]
    list_select_related = ["case"]
    editable_fields = SPEC_FIELDS

    def update(self, request, obj, *, fields, reason, version):
        return services.requirement_spec_save(
            actor=request.user,
            case=obj.case,
            fields=fields,
            reason=reason,
            expected_version=version,
        )
