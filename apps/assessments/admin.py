from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from apps.assessments.models import AssessmentAnswer, DataExportAssessment


class AssessmentAnswerInline(admin.TabularInline):
    model = AssessmentAnswer
    extra = 0


@admin.register(DataExportAssessment)
class DataExportAssessmentAdmin(SimpleHistoryAdmin):
    list_display = ["case", "offer", "jurisdiction", "signed_off_by", "review_by", "updated_at"]
    list_select_related = ["case", "offer__vendor", "signed_off_by"]
    inlines = [AssessmentAnswerInline]


@admin.register(AssessmentAnswer)
class AssessmentAnswerAdmin(SimpleHistoryAdmin):
    list_display = ["assessment", "question_key", "value", "number", "updated_at"]
    list_select_related = ["assessment__case"]
