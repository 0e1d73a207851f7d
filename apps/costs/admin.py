"""Imported bills, their months and the alerts sent are records; a budget changes as in the app."""

from typing import Any

from django import forms
from django.contrib import admin

from apps.core.admin import RecordAdmin, TrackedAdmin, TrackedChangeForm
from apps.costs import services
from apps.costs.bill_rows import MAX_MONEY
from apps.costs.models import Budget, CostImport, CostPeriod, SpendCharge, ThresholdAlert

# Bounded as on the budget page (see MAX_MONEY): larger amounts do not read back exactly.
MONEY_FIELDS = ("total_amount", "monthly_amount", "daily_amount", "training_max_spend")


class BudgetChangeForm(TrackedChangeForm):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        offer = self.fields["offer"]
        assert isinstance(offer, forms.ModelChoiceField)  # the model's foreign key
        offer.queryset = self.instance.case.offers.select_related("vendor")


@admin.register(Budget)
class BudgetAdmin(TrackedAdmin):
    """Edits go through ``budget_save``: thresholds, the offer's case and currency, and the
    monthly-below-total rule are checked as in the app. A budget is set up in the app."""

    form = BudgetChangeForm
    list_display = ("case", "currency", "total_amount", "monthly_amount", "version")
    list_select_related = ("case",)
    editable_fields = services.BUDGET_FIELDS

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name in MONEY_FIELDS:
            kwargs["max_value"] = MAX_MONEY
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def update(self, request, obj, *, fields, reason, version):
        return services.budget_save(
            actor=request.user,
            case=obj.case,
            fields=fields,
            reason=reason,
            expected_version=version,
        )


@admin.register(CostImport)
class CostImportAdmin(RecordAdmin):
    """An import is evidence, kept byte for byte: it is never edited or deleted."""

    list_display = (
        "case",
        "file_name",
        "kind",
        "sha256",
        "row_count",
        "imported_by",
        "created_at",
    )
    list_select_related = ("case", "imported_by")


@admin.register(CostPeriod)
class CostPeriodAdmin(RecordAdmin):
    """A month is replaced only by a later import, which marks it superseded."""

    list_display = ("case", "period", "amount", "superseded_at")
    list_select_related = ("case",)


@admin.register(SpendCharge)
class SpendChargeAdmin(RecordAdmin):
    """A charge of a daily-spend file, kept as imported; a later file cannot repeat it."""

    list_display = ("case", "charged_at", "amount", "description", "cost_import")
    list_select_related = ("case", "cost_import")


@admin.register(ThresholdAlert)
class ThresholdAlertAdmin(RecordAdmin):
    """An alert records that the owner was told; it is sent once and kept."""

    list_display = ("case", "scope", "period", "threshold_pct", "spent", "limit")
    list_select_related = ("case",)
