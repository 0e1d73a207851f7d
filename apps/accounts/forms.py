"""The forms of a person's own account: the two-factor sign-in code, and how they hear of
events."""

from django import forms
from django.utils.translation import gettext_lazy as _

from apps.core.models import EmailChoice


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


class NotificationChoiceForm(forms.Form):
    email = forms.ChoiceField(
        label=_("E-mail me about events on cases"),
        choices=EmailChoice.choices,
        widget=forms.RadioSelect,
        help_text=_(
            "Events your role acts on: a vendor's answers to review, a finding open again or "
            "accepted, an approval decided, a packet issued. Your own acts are never sent to you."
        ),
    )
