"""Forms of the acceptance pages; rules and writes stay in services."""

from django import forms
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext_lazy as _

from apps.acceptance.models import SIGN_OFF_COMMENT_MAX_LENGTH, AcceptancePlan, AcceptanceResult
from apps.acceptance.services import PLAN_FIELDS, RESULT_FIELDS, attachment_max_bytes
from apps.core.forms import EditReasonMixin

YES_NO_UNKNOWN = [("", _("not recorded")), ("true", _("yes")), ("false", _("no"))]


class PlanForm(forms.ModelForm):
    class Meta:
        model = AcceptancePlan
        fields = list(PLAN_FIELDS)
        widgets = {"notes": forms.Textarea(attrs={"rows": 3})}
        help_texts = {
            "expected_versions": _(
                "Each a name and a version, separated by commas, e.g. “driver 550.127.05, "
                "CUDA 12.4, NCCL 2.21.5”. Each is checked against what the harness measured; "
                "a version it does not measure stays “not measured”."
            )
        }


class PlanCreateForm(PlanForm):
    offer = forms.TypedChoiceField(label=_("Offer"), coerce=int)

    def __init__(self, *args, offers=(), **kwargs):
        super().__init__(*args, **kwargs)
        offer = self.fields["offer"]
        assert isinstance(offer, forms.ChoiceField)
        offer.choices = [(o.pk, str(o.vendor)) for o in offers]
        self.order_fields(["offer", *PLAN_FIELDS])


class PlanEditForm(EditReasonMixin, PlanForm):
    pass


def _boolean(label):
    return forms.TypedChoiceField(
        label=label,
        choices=YES_NO_UNKNOWN,
        required=False,
        coerce=lambda value: value == "true",
        empty_value=None,
    )


class ResultForm(forms.ModelForm):
    resumed_from_checkpoint = _boolean(_("Resumed from the latest checkpoint"))
    duplicated_data = _boolean(_("Duplicated data"))

    class Meta:
        model = AcceptanceResult
        fields = list(RESULT_FIELDS)
        widgets = {
            "notes": forms.Textarea(attrs={"rows": 3}),
            "performed_at": forms.DateTimeInput(attrs={"type": "datetime-local"}),
        }


class ResultEditForm(EditReasonMixin, ResultForm):
    pass


class AttachmentForm(forms.Form):
    file = forms.FileField(label=_("Log or screenshot"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Built per request: in the reader's language, with the limit as configured now.
        self.fields["file"].help_text = _("At most %(limit)s.") % {
            "limit": filesizeformat(attachment_max_bytes())
        }


class SignOffForm(forms.Form):
    comment = forms.CharField(
        label=_("Comment"),
        max_length=SIGN_OFF_COMMENT_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3}),
    )


def model_fields(form: forms.ModelForm) -> dict:
    """The model fields a form cleaned, for a service (no reason, version or offer)."""
    fields = form._meta.fields
    assert fields is not None  # the acceptance forms list their fields (no "__all__")
    return {name: form.cleaned_data[name] for name in fields}
