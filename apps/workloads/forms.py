from django import forms
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext_lazy as _

from apps.workloads.models import SetKind
from apps.workloads.services import set_max_bytes


class SetUploadForm(forms.Form):
    kind = forms.ChoiceField(label=_("Kind"), choices=SetKind.choices)
    name = forms.CharField(
        label=_("Name"),
        max_length=100,
        help_text=_("A set uploaded again under the same name becomes its next version."),
    )
    file = forms.FileField(label=_("JSONL file"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Built per request: in the reader's language, with the limit as configured now.
        self.fields["file"].help_text = _("One JSON object per line, at most %(limit)s.") % {
            "limit": filesizeformat(set_max_bytes())
        }


class PlanSetsForm(forms.Form):
    prompt_set = forms.TypedChoiceField(
        label=_("Prompt set required"), coerce=int, required=False, empty_value=None
    )
    sample_set = forms.TypedChoiceField(
        label=_("Core sample set required"), coerce=int, required=False, empty_value=None
    )

    def __init__(self, *args, sets, **kwargs):
        super().__init__(*args, **kwargs)
        none = [("", _("None: the built-in or any set is taken"))]
        for name, kind in (("prompt_set", SetKind.PROMPTS), ("sample_set", SetKind.SAMPLES)):
            field = self.fields[name]
            assert isinstance(field, forms.ChoiceField)
            field.choices = none + [
                (s.pk, f"{s} · {s.sha256[:12]}") for s in sets if s.kind == kind
            ]
