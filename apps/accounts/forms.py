"""The forms of a person's own account: the two-factor sign-in code, and how they hear of
events."""

from django import forms
from django.utils.translation import gettext_lazy as _

from apps.core.models import EmailChoice
from apps.core.roles import Role


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


# --- Administration --------------------------------------------------------------------


def _role_choices():
    return Role.choices


class RolesForm(forms.Form):
    roles = forms.MultipleChoiceField(
        label=_("Roles"), choices=_role_choices, widget=forms.CheckboxSelectMultiple, required=False
    )
    reason = forms.CharField(label=_("Why"), max_length=300)


class InviteForm(forms.Form):
    email = forms.EmailField(label=_("E-mail address"), max_length=254)
    first_name = forms.CharField(label=_("First name"), max_length=150)
    last_name = forms.CharField(label=_("Last name"), max_length=150, required=False)
    roles = forms.MultipleChoiceField(
        label=_("Roles"), choices=_role_choices, widget=forms.CheckboxSelectMultiple
    )


class ReasonForm(forms.Form):
    reason = forms.CharField(label=_("Why"), max_length=300)


class SetPasswordForm(forms.Form):
    password1 = forms.CharField(
        label=_("Password"),
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        max_length=200,
    )
    password2 = forms.CharField(
        label=_("The same password again"),
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        max_length=200,
    )

    def clean(self):
        data = super().clean() or {}
        if data.get("password1") and data.get("password1") != data.get("password2"):
            self.add_error("password2", _("The two passwords differ."))
        return data


class ProvisioningTokenForm(forms.Form):
    label = forms.CharField(
        label=_("Identity provider"),
        max_length=200,
        help_text=_("Which provider uses this token, e.g. “Okta production”."),
    )
