from django import forms
from django.utils.translation import gettext_lazy as _

from apps.cases.models import ProcurementCase
from apps.cases.services import EDITABLE_FIELDS
from apps.core.forms import EditReasonMixin


class CaseForm(forms.ModelForm):
    class Meta:
        model = ProcurementCase
        fields = EDITABLE_FIELDS
        widgets = {"requirements": forms.Textarea(attrs={"rows": 4})}


class CaseEditForm(EditReasonMixin, CaseForm):
    pass


class OfferMinimumWaiverForm(forms.Form):
    reason = forms.CharField(
        label=_("Why may this case be decided with fewer than three offers?"),
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
    )
