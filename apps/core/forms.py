"""Form pieces shared by every edit page."""

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from apps.core.services import ConcurrentEditError


class EditReasonMixin(forms.Form):
    """Every edit states why, and names the version it was made against."""

    change_reason = forms.CharField(
        label=_("Reason for this change"),
        max_length=500,
        help_text=_("Kept in the audit history with your name and the time."),
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def edit_parts(self) -> tuple[dict, str, int | None]:
        """The record's fields, the reason given and the version edited, for a service."""
        fields = dict(self.cleaned_data)
        return fields, fields.pop("change_reason"), fields.pop("version")


def stale_edit_message(current: int, expected: int | None) -> str:
    """What an editor reads when the record changed since they loaded it."""
    return _(
        "Someone else saved this record while you were editing it (now version "
        "%(current)s, you started from %(expected)s). Reload the page to see "
        "their changes, then apply yours again."
    ) % {"current": current, "expected": expected}


def apply_service_errors(form: forms.BaseForm, error: Exception) -> None:
    """Show a service's refusal on the form, next to the field it names."""
    if isinstance(error, ConcurrentEditError):
        form.add_error(None, stale_edit_message(error.current.version, error.expected_version))
        return
    if isinstance(error, ValidationError) and hasattr(error, "error_dict"):
        for field, messages in error.message_dict.items():
            target = field if field in form.fields else None
            for message in messages:
                form.add_error(target, message)
        return
    form.add_error(None, "; ".join(getattr(error, "messages", [str(error)])))
