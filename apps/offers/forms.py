from django import forms
from django.utils.translation import gettext_lazy as _

from apps.core.forms import EditReasonMixin, PercentField
from apps.offers.models import DeclaredSpec, Offer
from apps.offers.services import OFFER_FIELDS, SPEC_FIELDS


class OfferForm(forms.ModelForm):
    # Stored as a share of 1 (the API takes 0.3); typed here as the pages show it, 30 %.
    prepayment_ratio = PercentField(
        label=_("Prepayment (%)"),
        required=False,
        help_text=_("Share of the contract value paid in advance, in percent: 30 means 30 %."),
    )

    class Meta:
        model = Offer
        fields = OFFER_FIELDS
        widgets = {"notes": forms.Textarea(attrs={"rows": 3})}


class OfferEditForm(EditReasonMixin, OfferForm):
    pass


# A claim the vendor has not made reads "not stated", never a default yes or no.
NOT_STATED = _("not stated")


class DeclaredSpecForm(EditReasonMixin, forms.ModelForm):
    class Meta:
        model = DeclaredSpec
        fields = SPEC_FIELDS

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        scoped = self.fields["tokens_scoped"]
        assert isinstance(scoped, forms.ChoiceField)
        scoped.choices = [("", NOT_STATED), (True, _("yes")), (False, _("no"))]
