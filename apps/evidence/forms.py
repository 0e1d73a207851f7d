from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from apps.evidence.services import MAX_TOKEN_TTL_HOURS
from apps.offers.models import Offer


class HarnessTokenForm(forms.Form):
    offer: "forms.ModelChoiceField[Offer]" = forms.ModelChoiceField(
        queryset=None,
        required=False,
        label=_("Offer"),
        help_text=_("The offer whose machine the harness runs on; its declared spec is checked."),
    )
    ttl_hours = forms.IntegerField(
        label=_("Valid for (hours)"),
        min_value=1,
        max_value=MAX_TOKEN_TTL_HOURS,
        initial=lambda: settings.EVIDENCE_TOKEN_TTL_HOURS,
    )
    label = forms.CharField(label=_("Label"), max_length=200, required=False)
    # Only to fill in the command shown with the token; neither is stored.
    endpoint = forms.URLField(
        label=_("Endpoint to test"),
        required=False,
        assume_scheme="https",
        max_length=500,
        help_text=_(
            "The vendor's OpenAI-compatible base URL, e.g. https://host:8000/v1; blank leaves a "
            "placeholder in the command."
        ),
    )
    model = forms.CharField(
        label=_("Model name"),
        required=False,
        max_length=200,
        help_text=_("The model name the endpoint serves; blank leaves a placeholder."),
    )

    def __init__(self, *args, offers, **kwargs):
        super().__init__(*args, **kwargs)
        offer = self.fields["offer"]
        assert isinstance(offer, forms.ModelChoiceField)
        offer.queryset = offers


class RevokeForm(forms.Form):
    change_reason = forms.CharField(
        label=_("Reason for revoking"), max_length=500, initial=_("No longer needed")
    )


class BaselinePinForm(forms.Form):
    offer = forms.TypedChoiceField(
        label=_("Baseline of"),
        coerce=int,
        required=False,
        empty_value=None,
        help_text=_(
            "An offer's baseline is what its later runs are compared with; the case's baseline "
            "(the team's own known-good hardware) serves every offer without one."
        ),
    )
    reason = forms.CharField(
        label=_("Why this run is the baseline"),
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
    )

    def __init__(self, *args, offers=(), **kwargs):
        super().__init__(*args, **kwargs)
        offer = self.fields["offer"]
        assert isinstance(offer, forms.ChoiceField)
        offer.choices = [("", _("the case as a whole"))] + [(o.pk, str(o.vendor)) for o in offers]


class BaselineUnpinForm(forms.Form):
    reason = forms.CharField(
        label=_("Why it is unpinned"), widget=forms.Textarea(attrs={"rows": 3}), max_length=2000
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)
