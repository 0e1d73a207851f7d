"""The one form of two-factor sign-in: a code."""

from django import forms
from django.utils.translation import gettext_lazy as _


class CodeForm(forms.Form):
    code = forms.CharField(
        label=_("Code"),
        max_length=32,
        help_text=_("The six digits your authenticator app shows now, or one recovery code."),
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "text", "autofocus": True}
        ),
    )

    def clean_code(self) -> str:
        return "".join(self.cleaned_data["code"].split()).lower()


class AppCodeForm(CodeForm):
    """Only the authenticator app's code: to set it up, remove it or renew recovery codes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["code"].help_text = _("The six digits your authenticator app shows now.")
        self.fields["code"].widget.attrs["inputmode"] = "numeric"
