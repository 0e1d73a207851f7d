"""Form pieces shared by every edit page."""

from decimal import Decimal

from django import forms
from django.core.exceptions import ValidationError
from django.utils.functional import lazy
from django.utils.html import format_html_join
from django.utils.translation import gettext_lazy as _

from apps.core.bounds import CHANGE_REASON_MAX_LENGTH
from apps.core.services import ConcurrentEditError


class EditReasonMixin(forms.Form):
    """Every edit states why, and names the version it was made against."""

    change_reason = forms.CharField(
        label=_("Reason for this change"),
        max_length=CHANGE_REASON_MAX_LENGTH,
        help_text=_("Kept in the audit history with your name and the time."),
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def edit_parts(self) -> tuple[dict, str, int | None]:
        """The record's fields, the reason given and the version edited, for a service."""
        fields = dict(self.cleaned_data)
        return fields, fields.pop("change_reason"), fields.pop("version")


def _bounds_text(low: int, high: int) -> str:
    text = _("Enter a percentage from %(low)s to %(high)s (30 means 30 %%).") % {
        "low": low,
        "high": high,
    }
    # The bounds validators fill in their own parameters afterwards: keep the sign literal.
    return text.replace("%", "%%")


# Built when shown, in the reader's language, not once when the form class is defined.
_bounds_message = lazy(_bounds_text, str)


class PercentField(forms.DecimalField):
    """A share stored as a ratio (0.3) but typed and shown as a percentage (30).

    Pages show shares as "30 %", so a form asking for "0.3" invites 0.3 % typed by
    mistake. The field reads percent, gives the ratio to the service, shows a stored
    ratio back in percent when editing, and states its bounds in percent.
    """

    HUNDRED = Decimal(100)

    def __init__(self, *, min_percent: int = 0, max_percent: int = 100, places: int = 2, **kwargs):
        message = _bounds_message(min_percent, max_percent)
        kwargs.setdefault("error_messages", {})
        kwargs["error_messages"] = {"min_value": message, "max_value": message} | dict(
            kwargs["error_messages"]
        )
        kwargs.setdefault("widget", forms.NumberInput(attrs={"step": "any"}))
        super().__init__(
            min_value=Decimal(min_percent),
            max_value=Decimal(max_percent),
            decimal_places=places,
            **kwargs,
        )

    def prepare_value(self, value):
        # A stored ratio comes as a number; what the editor typed comes back as text.
        if isinstance(value, (Decimal, int, float)) and not isinstance(value, bool):
            return f"{(Decimal(str(value)) * self.HUNDRED).normalize():f}"
        return value

    def to_python(self, value):
        # "30.00" is as exact as "30": trailing zeros do not count against the places.
        percent = super().to_python(value)
        return None if percent is None else percent.normalize()

    def clean(self, value):
        percent = super().clean(value)
        return None if percent is None else percent / self.HUNDRED

    def has_changed(self, initial, data) -> bool:
        try:
            typed = self.to_python(data)
        except ValidationError:
            return True
        shown = None if initial in (None, "") else Decimal(str(initial)) * self.HUNDRED
        return shown != typed


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


def option_tags(choices, selected) -> str:
    """``<option>`` elements for ``(value, label)`` pairs, the one whose value is
    ``selected`` marked so: a long list written at once, where a widget renders a template
    per option."""
    chosen = "" if selected is None else str(selected)
    return format_html_join(
        "",
        '<option value="{}"{}>{}</option>',
        ((value, " selected" if str(value) == chosen else "", label) for value, label in choices),
    )
