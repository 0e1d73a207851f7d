from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.forms.formsets import DELETION_FIELD_NAME
from django.utils.translation import gettext_lazy as _

from apps.scorecards.scoring import SCORE_MAX, SCORE_MIN, Criterion

SCORE_CHOICES = [("", _("— not answered —"))] + [
    (str(n), str(n)) for n in range(SCORE_MIN, SCORE_MAX + 1)
]


class ScorecardForm(forms.Form):
    """All criteria of one scorecard on one page, saved together."""

    version = forms.IntegerField(widget=forms.HiddenInput, required=False)
    change_reason = forms.CharField(
        label=_("Reason for this change"),
        max_length=500,
        required=False,
        help_text=_("Required when you revise scores you already gave."),
    )

    def __init__(self, *args, criteria: tuple[Criterion, ...], editing: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.criteria = criteria
        self.editing = editing
        for c in criteria:
            self.fields[f"score_{c.key}"] = forms.TypedChoiceField(
                label=_("%(label)s (%(weight)s pts)") % {"label": c.label, "weight": c.weight},
                choices=SCORE_CHOICES,
                coerce=int,
                empty_value=None,
                required=False,
            )
            self.fields[f"comment_{c.key}"] = forms.CharField(
                label=_("Comment"),
                required=False,
                max_length=2000,
                widget=forms.TextInput(attrs={"size": 50}),
            )

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if self.editing and not (cleaned.get("change_reason") or "").strip():
            self.add_error("change_reason", _("Say why you are revising these scores."))
        return cleaned

    def rows(self):
        return [(c, self[f"score_{c.key}"], self[f"comment_{c.key}"]) for c in self.criteria]

    def scores(self) -> dict[str, dict]:
        return {
            c.key: {
                "score": self.cleaned_data.get(f"score_{c.key}"),
                "comment": self.cleaned_data.get(f"comment_{c.key}", ""),
            }
            for c in self.criteria
        }


class CriterionForm(forms.Form):
    key = forms.SlugField(label=_("Key"), max_length=50)
    label = forms.CharField(label=_("Label"), max_length=200)
    weight = forms.IntegerField(label=_("Weight (points)"), min_value=0, max_value=100)


class BaseCriteriaFormSet(forms.BaseFormSet):
    def clean(self):
        if any(self.errors):
            return
        keys = [
            f.cleaned_data["key"]
            for f in self.forms
            if f.cleaned_data and not f.cleaned_data.get(DELETION_FIELD_NAME, False)
        ]
        if len(keys) != len(set(keys)):
            raise ValidationError(_("Each criterion key must be unique."))
        total = sum(
            f.cleaned_data["weight"]
            for f in self.forms
            if f.cleaned_data and not f.cleaned_data.get(DELETION_FIELD_NAME, False)
        )
        if total != 100:
            raise ValidationError(
                _("Weights must sum to 100 points; they sum to %(total)s.") % {"total": total}
            )


CriteriaFormSet = forms.formset_factory(
    CriterionForm, formset=BaseCriteriaFormSet, extra=1, can_delete=True
)


class CriteriaNoteForm(forms.Form):
    note = forms.CharField(
        label=_("Why publish a new revision?"),
        max_length=500,
        help_text=_("Existing scorecards stay on the revision they were made against."),
    )
