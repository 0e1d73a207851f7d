from django import forms
from django.utils.translation import gettext_lazy as _

from apps.approvals.models import Approval


class SubmitForm(forms.Form):
    note = forms.CharField(
        label=_("Note for the tech lead"),
        max_length=1000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
    )


class DecisionForm(forms.Form):
    offer = forms.TypedChoiceField(label=_("Offer"), coerce=int, empty_value=None, required=False)
    decision = forms.ChoiceField(
        label=_("Decision"), choices=Approval.Decision.choices, widget=forms.RadioSelect
    )
    comment = forms.CharField(
        label=_("Comment"),
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_("Kept with the decision, in the history and in the packet."),
    )

    def __init__(self, *args, offers, **kwargs):
        super().__init__(*args, **kwargs)
        self.offers = {offer.pk: offer for offer in offers}
        self.fields["offer"].choices = [("", _("— the case as a whole (reject only) —"))] + [
            (offer.pk, str(offer)) for offer in offers
        ]

    def clean_offer(self):
        pk = self.cleaned_data.get("offer")
        return self.offers.get(pk) if pk is not None else None
