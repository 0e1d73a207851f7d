from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from apps.cases.models import ProcurementCase


@admin.register(ProcurementCase)
class ProcurementCaseAdmin(SimpleHistoryAdmin):
    list_display = ["name", "status", "workload", "owner", "created_at"]
    list_filter = ["status", "workload"]
    search_fields = ["name"]
