from django import forms

from apps.core.forms import EditReasonMixin
from apps.offers.models import DeclaredSpec, Offer
from apps.offers.services import OFFER_FIELDS, SPEC_FIELDS


class OfferForm(forms.ModelForm):
    class Meta:
        model = Offer
        fields = OFFER_FIELDS
        widgets = {"notes": forms.Textarea(attrs={"rows": 3})}


class OfferEditForm(EditReasonMixin, OfferForm):
    pass


class DeclaredSpecForm(EditReasonMixin, forms.ModelForm):
    class Meta:
        model = DeclaredSpec
        fields = SPEC_FIELDS
