from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from apps.core.forms import EditReasonMixin
from apps.vendors.models import Certification, SubProcessor, Vendor, VendorContact
from apps.vendors.services import (
    CERTIFICATION_FIELDS,
    CONTACT_FIELDS,
    EDITABLE_FIELDS,
    STEWARD_FIELDS,
    SUB_PROCESSOR_FIELDS,
)


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


class StewardshipForm(EditReasonMixin, forms.ModelForm):
    """Who answers for the vendor, how often it is reviewed, and a tier set by hand."""

    class Meta:
        model = Vendor
        fields = (*STEWARD_FIELDS, "tier_override", "tier_override_reason")
        widgets = {"tier_override_reason": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args, can_override: bool, can_steward: bool, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        people = get_user_model().objects.filter(is_active=True).order_by("username")
        self.fields["owner"].queryset = people  # type: ignore[attr-defined]
        self.fields["tier_override"].help_text = _(
            "Leave empty to follow the tier kept from the vendor's cases."
        )
        for name in ("tier_override", "tier_override_reason"):
            self.fields[name].disabled = not can_override
        for name in STEWARD_FIELDS:
            self.fields[name].disabled = not can_steward


class ContactForm(forms.ModelForm):
    class Meta:
        model = VendorContact
        fields = CONTACT_FIELDS


class ContactEditForm(EditReasonMixin, ContactForm):
    pass


class SubProcessorForm(forms.ModelForm):
    class Meta:
        model = SubProcessor
        fields = SUB_PROCESSOR_FIELDS


class SubProcessorEditForm(EditReasonMixin, SubProcessorForm):
    pass


class CertificationForm(forms.ModelForm):
    report = forms.FileField(
        label=_("Report or certificate (PDF)"),
        required=False,
        help_text=_("Optional; stored with its SHA-256."),
    )

    class Meta:
        model = Certification
        fields = CERTIFICATION_FIELDS
        widgets = {
            "issued_on": forms.DateInput(attrs={"type": "date"}),
            "expires_on": forms.DateInput(attrs={"type": "date"}),
        }


class CertificationEditForm(EditReasonMixin, forms.ModelForm):
    class Meta:
        model = Certification
        fields = CERTIFICATION_FIELDS
        widgets = CertificationForm.Meta.widgets
