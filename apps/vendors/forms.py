from django import forms

from apps.core.forms import EditReasonMixin
from apps.vendors.models import Vendor
from apps.vendors.services import EDITABLE_FIELDS


class VendorForm(forms.ModelForm):
    website = forms.URLField(
        required=False,
        assume_scheme="https",
        max_length=Vendor._meta.get_field("website").max_length,
    )

    class Meta:
        model = Vendor
        fields = EDITABLE_FIELDS
        widgets = {"contacts": forms.Textarea(attrs={"rows": 3})}


class VendorEditForm(EditReasonMixin, VendorForm):
    pass
