from django.contrib import admin

from apps.assessments import services
from apps.assessments.models import AssessmentAnswer, DataExportAssessment
from apps.core.admin import ReadOnlyInline, RecordAdmin, TrackedAdmin


class AssessmentAnswerInline(ReadOnlyInline):
    model = AssessmentAnswer
    fields = ["question_key", "value", "number", "note", "attachment"]


@admin.register(DataExportAssessment)
class DataExportAssessmentAdmin(TrackedAdmin):
    """Jurisdiction and conclusion change through the app's service, which voids a sign-off
    the edit no longer matches; the sign-off itself is shown read-only."""

    list_display = ["case", "offer", "jurisdiction", "signed_off_by", "review_by", "updated_at"]
    list_select_related = ["case", "offer__vendor", "signed_off_by"]
    inlines = [AssessmentAnswerInline]
    editable_fields = ("jurisdiction", "conclusion")

    def update(self, request, obj, *, fields, reason, version):
        assessment, _voided = services.assessment_save(
            actor=request.user, assessment=obj, reason=reason, expected_version=version, **fields
        )
        return assessment


@admin.register(AssessmentAnswer)
class AssessmentAnswerAdmin(RecordAdmin):
    """Answers are saved with their assessment in the app, where a change voids its sign-off."""

    list_display = ["assessment", "question_key", "value", "number", "updated_at"]
    list_select_related = ["assessment__case"]
