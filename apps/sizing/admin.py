from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from apps.sizing.models import ComputeDemand


@admin.register(ComputeDemand)
class ComputeDemandAdmin(SimpleHistoryAdmin):
    list_display = ["case", "mode", "model_preset", "target_concurrency"]
    list_select_related = ["case"]
