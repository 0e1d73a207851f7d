"""The whole questionnaire as one form, saved together, errors shown next to each answer."""

from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile
from django.utils.translation import gettext_lazy as _

from apps.assessments.audit_facts import ENCRYPTION_CHOICES, normal_sha256
from apps.assessments.models import ExportedDataset, ModelWeightFile, validate_attachment_size
from apps.assessments.questions import EXIT_READINESS_KEYS, QUESTIONS, YES, blocks
from apps.assessments.rules import HARDWARE_HARD_KEYS, MECHANISM_STATUS_CHOICES
from apps.core.bounds import DAYS_MAX, REASON_MAX_LENGTH, TEXT_MAX_LENGTH
from apps.core.formats import number
from apps.core.storage import StoredFileInput
from apps.core.uploads import EVIDENCE_DOCUMENTS

# The answers whose "yes" counts for the approval only with its evidence, a note or an
# attachment (docs/rules/data-export.md#hard-requirements): asked for here, on saving,
# rather than found missing at the approval.
EVIDENCE_KEYS = frozenset(EXIT_READINESS_KEYS + HARDWARE_HARD_KEYS)


class AssessmentForm(forms.Form):
    evidence_keys = EVIDENCE_KEYS
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)
    jurisdiction = forms.CharField(
        label=_("Jurisdiction assessed"),
        max_length=100,
        required=False,
        help_text=_("Where the data would go, e.g. 'Singapore'. Blank: every vendor of the case."),
    )
    conclusion = forms.CharField(
        label=_("Written legal and compliance conclusion"),
        required=False,
        max_length=TEXT_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text=_("Required before sign-off."),
    )
    change_reason = forms.CharField(
        label=_("Reason for this change"),
        max_length=500,
        required=False,
        help_text=_("Kept in the audit history with your name and the time."),
    )

    def __init__(self, *args, editing: bool, signed_off: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.editing = editing
        self.signed_off = signed_off
        for q in QUESTIONS:
            if q.takes_value:
                self.fields[q.key] = forms.ChoiceField(
                    label=q.label,
                    choices=[("", _("— not answered —")), *q.choices],
                    required=False,
                    help_text=q.help,
                )
            if q.takes_number:
                self.fields[f"{q.key}__number"] = forms.IntegerField(
                    label=_("Number of days") if q.takes_value else q.label,
                    min_value=0,
                    max_value=q.number_max,
                    required=False,
                    help_text="" if q.takes_value else q.help,
                )
            self.fields[f"{q.key}__note"] = forms.CharField(
                label=_("Note"),
                required=False,
                max_length=REASON_MAX_LENGTH,
                widget=forms.Textarea(attrs={"rows": 1, "cols": 40}),
            )
            self.fields[f"{q.key}__attachment"] = forms.FileField(
                label=_("Attachment"),
                required=False,
                max_length=200,
                validators=[validate_attachment_size],
                widget=StoredFileInput(attrs={"accept": ",".join(EVIDENCE_DOCUMENTS)}),
                help_text=_("%(types)s; at most 10 MiB.")
                % {"types": ", ".join(EVIDENCE_DOCUMENTS)},
            )
        if not editing:
            del self.fields["change_reason"]

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if self.editing and not (cleaned.get("change_reason") or "").strip():
            self.add_error("change_reason", _("Say why you are changing this assessment."))
        for key in sorted(EVIDENCE_KEYS):
            if self._evidence_missing(key):
                self.add_error(
                    f"{key}__note",
                    _(
                        "The approval counts this yes only with its evidence: write it here "
                        "or attach the document."
                    ),
                )
        return cleaned

    def _evidence_missing(self, key: str) -> bool:
        cleaned = self.cleaned_data
        if cleaned.get(key) != YES or (cleaned.get(f"{key}__note") or "").strip():
            return False
        upload = cleaned.get(f"{key}__attachment")
        if isinstance(upload, UploadedFile):
            return False
        return upload is False or not self.initial.get(f"{key}__attachment")

    def blocks(self):
        """(block title, [(question, value, number, note, attachment) bound fields])."""

        def field(name):
            return self[name] if name in self.fields else None

        return [
            (
                title,
                [
                    (
                        q,
                        field(q.key),
                        field(f"{q.key}__number"),
                        self[f"{q.key}__note"],
                        self[f"{q.key}__attachment"],
                    )
                    for q in questions
                ],
            )
            for title, questions in blocks()
        ]

    def answers(self) -> dict:
        data = self.cleaned_data
        result = {}
        for q in QUESTIONS:
            answer = {"note": data.get(f"{q.key}__note", "")}
            if q.takes_value:
                answer["value"] = data.get(q.key, "")
            if q.takes_number:
                answer["number"] = data.get(f"{q.key}__number")
            result[q.key] = answer
        return result

    def attachments(self) -> dict:
        result = {}
        for q in QUESTIONS:
            value = self.cleaned_data.get(f"{q.key}__attachment")
            if value is False or isinstance(value, UploadedFile):
                result[q.key] = value
        return result


def initial_for(assessment) -> dict:
    initial = {
        "version": assessment.version,
        "jurisdiction": assessment.jurisdiction,
        "conclusion": assessment.conclusion,
    }
    for answer in assessment.answers.all():
        initial[answer.question_key] = answer.value
        initial[f"{answer.question_key}__number"] = answer.number
        initial[f"{answer.question_key}__note"] = answer.note
        initial[f"{answer.question_key}__attachment"] = answer.attachment or None
    return initial


class SignOffForm(forms.Form):
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)
    review_by = forms.DateField(
        label=_("Review by"),
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text=_("Defaults to 90 days from today; after this date the assessment expires."),
    )
    # Asked only where the decision aid names a mechanism; the service says what each
    # status needs, so the messages match the API's.
    mechanism_status = forms.ChoiceField(
        label=_("Status of the export mechanism"),
        choices=[("", _("— not stated —")), *MECHANISM_STATUS_CHOICES],
        required=False,
        help_text=_(
            "Personal Information Protection Law of the PRC, Art. 38–40: not needed, in "
            "progress (with an expected date) or done (with a reference)."
        ),
    )
    mechanism_expected_on = forms.DateField(
        label=_("Expected to be done on"),
        widget=forms.DateInput(attrs={"type": "date"}),
        required=False,
        help_text=_("For a mechanism in progress."),
    )
    mechanism_reference = forms.CharField(
        label=_("Reference"),
        max_length=200,
        required=False,
        help_text=_("For a mechanism done: e.g. the filing number or the approval's reference."),
    )

    MECHANISM_FIELDS = ("mechanism_status", "mechanism_expected_on", "mechanism_reference")

    def __init__(self, *args, mechanism_named: bool, **kwargs):
        super().__init__(*args, **kwargs)
        if not mechanism_named:
            for name in self.MECHANISM_FIELDS:
                del self.fields[name]

    def mechanism(self) -> dict:
        """The stated status, as the sign-off service takes it."""
        return {name: self.cleaned_data.get(name) or None for name in self.MECHANISM_FIELDS}


def sign_off_initial(assessment, check) -> dict:
    """The status recorded at the last sign-off, offered again when it still applies."""
    if not check.applies:
        return {}
    return {
        "mechanism_status": assessment.mechanism_status,
        "mechanism_expected_on": assessment.mechanism_expected_on,
        "mechanism_reference": assessment.mechanism_reference,
    }


# --- The facts auditors ask for (docs/rules/data-export.md#audit-facts) ----------------


class _EditedRow:
    """On an edit: the version edited and why; the service checks both."""

    def add_edit_fields(self, editing: bool) -> None:
        if not editing:
            return
        fields = self.fields  # type: ignore[attr-defined]
        fields["version"] = forms.IntegerField(widget=forms.HiddenInput, required=False)
        fields["change_reason"] = forms.CharField(
            label=_("Reason for this change"),
            max_length=500,
            help_text=_("Kept in the audit history with your name and the time."),
        )

    def values(self) -> dict[str, Any]:
        data = self.cleaned_data  # type: ignore[attr-defined]
        return {name: data[name] for name in self.Meta.fields}  # type: ignore[attr-defined]


class DatasetForm(_EditedRow, forms.ModelForm):
    """A dataset leaving for the rented compute; the service checks its name is not listed."""

    class Meta:
        model = ExportedDataset
        fields = ["name", "size_gb", "data_format", "sensitivity", "sync_window"]

    def __init__(self, *args, editing: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_edit_fields(editing)


class WeightFileForm(_EditedRow, forms.ModelForm):
    """A model-weight file deployed, with its SHA-256 (upper-case hex is taken as well)."""

    class Meta:
        model = ModelWeightFile
        fields = ["file_name", "sha256", "size_bytes"]

    def __init__(self, *args, editing: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_edit_fields(editing)

    def clean_sha256(self) -> str:
        return normal_sha256(self.cleaned_data["sha256"])


class RemoveForm(forms.Form):
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)
    change_reason = forms.CharField(
        label=_("Why is it removed?"),
        max_length=500,
        help_text=_("Kept in the audit history with your name and the time."),
    )


class AuditFactsForm(forms.Form):
    """Encryption at rest and in transit, and the days the vendor keeps its logs."""

    version = forms.IntegerField(widget=forms.HiddenInput, required=False)
    encryption_at_rest = forms.ChoiceField(
        label=_("Is the data encrypted at rest?"),
        choices=[("", _("— not recorded —")), *ENCRYPTION_CHOICES],
        required=False,
    )
    encryption_at_rest_mechanism = forms.CharField(
        label=_("How, at rest"),
        max_length=300,
        required=False,
        help_text=_(
            "With a yes: e.g. 'AES-256 volume encryption, keys in our own key management'."
        ),
    )
    encryption_in_transit = forms.ChoiceField(
        label=_("Is the data encrypted in transit?"),
        choices=[("", _("— not recorded —")), *ENCRYPTION_CHOICES],
        required=False,
    )
    encryption_in_transit_mechanism = forms.CharField(
        label=_("How, in transit"),
        max_length=300,
        required=False,
        help_text=_("With a yes: e.g. 'TLS 1.3 on every link; WireGuard tunnel to the cluster'."),
    )
    log_retention_days = forms.IntegerField(
        label=_("Days the vendor keeps its logs"),
        min_value=0,
        max_value=DAYS_MAX,
        required=False,
    )
    change_reason = forms.CharField(
        label=_("Reason for this change"),
        max_length=500,
        help_text=_("Kept in the audit history with your name and the time."),
    )

    FACTS = (
        "encryption_at_rest",
        "encryption_at_rest_mechanism",
        "encryption_in_transit",
        "encryption_in_transit_mechanism",
        "log_retention_days",
    )

    def __init__(self, *args, minimum_days: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["log_retention_days"].help_text = _(
            "The organisation's minimum is %(days)s days."
        ) % {"days": number(minimum_days)}

    def facts(self) -> dict[str, Any]:
        """The facts as the service takes them: nothing recorded is None."""
        data = self.cleaned_data
        return {name: (None if data.get(name) in ("", None) else data[name]) for name in self.FACTS}


def audit_facts_initial(assessment) -> dict[str, Any]:
    return {
        "version": assessment.version,
        **{name: getattr(assessment, name) for name in AuditFactsForm.FACTS},
    }
