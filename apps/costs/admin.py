from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from apps.costs.models import Budget, CostImport, CostPeriod, ThresholdAlert


@admin.register(Budget)
class BudgetAdmin(SimpleHistoryAdmin):
    list_display = ("case", "currency", "total_amount", "monthly_amount", "version")
    readonly_fields = ("version",)


@admin.register(CostImport)
class CostImportAdmin(SimpleHistoryAdmin):
    list_display = ("case", "file_name", "sha256", "row_count", "imported_by", "created_at")

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # an import is evidence: it is never edited


@admin.register(CostPeriod)
class CostPeriodAdmin(SimpleHistoryAdmin):
    list_display = ("case", "period", "amount", "superseded_at")

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ThresholdAlert)
class ThresholdAlertAdmin(SimpleHistoryAdmin):
    list_display = ("case", "scope", "period", "threshold_pct", "spent", "limit")

    def has_change_permission(self, request, obj=None) -> bool:
        return False
