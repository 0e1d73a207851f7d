from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from apps.contracts.models import (
    ChecklistItem,
    ChecklistTemplate,
    ClauseChecklist,
    RedFlagWaiver,
    TemplateItem,
)


class TemplateItemInline(admin.TabularInline):
    model = TemplateItem
    extra = 0


@admin.register(ChecklistTemplate)
class ChecklistTemplateAdmin(SimpleHistoryAdmin):
    list_display = ["number", "published_by", "created_at"]
    list_select_related = ["published_by"]
    inlines = [TemplateItemInline]


class ChecklistItemInline(admin.TabularInline):
    model = ChecklistItem
    extra = 0
    fields = ["number", "title", "status", "clause_reference", "reviewer", "reviewed_at"]


@admin.register(ClauseChecklist)
class ClauseChecklistAdmin(SimpleHistoryAdmin):
    list_display = ["offer", "template", "updated_at"]
    list_select_related = ["offer__vendor", "template"]
    inlines = [ChecklistItemInline]


@admin.register(ChecklistItem)
class ChecklistItemAdmin(SimpleHistoryAdmin):
    list_display = ["checklist", "number", "title", "status", "reviewer"]
    list_select_related = ["checklist", "reviewer"]


@admin.register(RedFlagWaiver)
class RedFlagWaiverAdmin(SimpleHistoryAdmin):
    list_display = ["item", "waived_status", "waived_by", "waived_at", "lapsed_at"]
    list_select_related = ["item", "waived_by"]
