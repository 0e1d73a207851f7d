import posixpath

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from apps.assessments import services
from apps.assessments.models import (
    AssessmentAnswer,
    DataExportAssessment,
    ExportedDataset,
    ModelWeightFile,
)
from apps.core.admin import ReadOnlyInline, RecordAdmin, TrackedAdmin


class AttachmentLink:
    """The attachment shown as a link to its download view, never to the storage folder."""

    # The storage folder is not served: an attachment leaves only through the
    # assessment's download view, which checks the reader's access and the digest.
    @admin.display(description=_("attachment"))
    def attachment_download(self, answer: AssessmentAnswer) -> str:
        name = answer.attachment.name
        if not name:
            return "—"
        url = reverse("assessments:attachment", args=[answer.assessment_id, answer.question_key])
        return format_html('<a href="{}">{}</a>', url, posixpath.basename(name))


class AssessmentAnswerInline(AttachmentLink, ReadOnlyInline):
    model = AssessmentAnswer
    fields = ["question_key", "value", "number", "note", "attachment_download"]
    readonly_fields = ["attachment_download"]


class ExportedDatasetInline(ReadOnlyInline):
    model = ExportedDataset
    fields = ["name", "size_gb", "data_format", "sensitivity", "sync_window"]


class ModelWeightFileInline(ReadOnlyInline):
    model = ModelWeightFile
    fields = ["file_name", "sha256", "size_bytes"]


@admin.register(DataExportAssessment)
class DataExportAssessmentAdmin(TrackedAdmin):
    """Jurisdiction and conclusion change through the app's service, which voids a sign-off
    the edit no longer matches; the sign-off itself is shown read-only."""

    list_display = ["case", "offer", "jurisdiction", "signed_off_by", "review_by", "updated_at"]
    list_select_related = ["case", "offer__vendor", "signed_off_by"]
    inlines = [AssessmentAnswerInline, ExportedDatasetInline, ModelWeightFileInline]
    editable_fields = ("jurisdiction", "conclusion")

    def update(self, request, obj, *, fields, reason, version):
        assessment, _voided = services.assessment_save(
            actor=request.user, assessment=obj, reason=reason, expected_version=version, **fields
        )
        return assessment


@admin.register(AssessmentAnswer)
class AssessmentAnswerAdmin(AttachmentLink, RecordAdmin):
    """Answers are saved with their assessment in the app, where a change voids its sign-off."""

    list_display = ["assessment", "question_key", "value", "number", "updated_at"]
    list_select_related = ["assessment__case"]
    exclude = ["attachment"]
    readonly_fields = ["attachment_download"]


@admin.register(ExportedDataset)
class ExportedDatasetAdmin(RecordAdmin):
    """The data inventory is listed in the app (docs/rules/data-export.md#audit-facts), where
    each change is a finding's facts; the admin reads it."""

    list_display = ["assessment", "name", "size_gb", "data_format", "sensitivity", "updated_at"]
    list_select_related = ["assessment__case", "assessment__offer__vendor"]


@admin.register(ModelWeightFile)
class ModelWeightFileAdmin(RecordAdmin):
    """Model-weight files and their SHA-256 are listed in the app; the admin reads them."""

    list_display = ["assessment", "file_name", "sha256", "size_bytes", "updated_at"]
    list_select_related = ["assessment__case", "assessment__offer__vendor"]
