"""The vendor's forms. They take text as typed; the services read and check it.

Every answer is optional (blank: no answer), so the forms hand the service the
raw strings and the service refuses the submit whole, naming each bad field.
"""

from django import forms
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from apps.evidence.datasheet import SKUS
from apps.portal.models import DocumentKind
from apps.portal.proposals import (
    CLAUSE_ANSWER_MAX,
    CLAUSE_REFERENCE_MAX,
    DESCRIPTION_MAX,
    REPLY_MAX,
    reference_field,
)
from apps.portal.vendor_selectors import ClaimRow

NUMBER_TYPES = (forms.DecimalField, forms.IntegerField, forms.FloatField)
# The section page's answer fields sit in each claim's own box, beside that claim's reply
# form; they belong to the one answers form by this id (HTML forms cannot nest).
ANSWERS_FORM = "answers"


def _answer_field(row: ClaimRow) -> forms.Field:
    if row.claim is None:
        return forms.CharField(
            label=capfirst(row.label),
            required=False,
            strip=False,
            max_length=CLAUSE_ANSWER_MAX + 1000,  # the service says the limit in its words
            widget=forms.Textarea(attrs={"rows": 3, "form": ANSWERS_FORM}),
        )
    model_field = row.claim.form_field()
    choices = getattr(model_field, "choices", None)
    if choices:
        widget: forms.Widget = forms.Select(
            choices=[("", "—"), *[c for c in choices if c[0]]], attrs={"form": ANSWERS_FORM}
        )
    elif isinstance(model_field, NUMBER_TYPES):
        widget = forms.TextInput(
            attrs={"inputmode": "decimal", "autocomplete": "off", "form": ANSWERS_FORM}
        )
    else:
        widget = forms.TextInput(attrs={"form": ANSWERS_FORM})
    return forms.CharField(label=capfirst(row.label), required=False, strip=False, widget=widget)


class SectionForm(forms.Form):
    """One field per claim (and a reference per clause).

    Settled and questioned claims have their fields too, though the page shows none:
    a form opened before the reviewer settled one still posts it, and the service
    must refuse that change, not have it silently dropped.
    """

    def __init__(self, *args, rows: list[ClaimRow], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.rows = rows
        for row in self.rows:
            self.fields[row.key] = _answer_field(row)
            if row.proposal is not None:
                self.fields[row.key].initial = row.proposal.value
            if row.claim is None:
                reference = forms.CharField(
                    label=_("Clause reference"),
                    required=False,
                    max_length=CLAUSE_REFERENCE_MAX + 100,
                    help_text=_("Where the contract says it, e.g. “MSA clause 7.2”."),
                    widget=forms.TextInput(attrs={"form": ANSWERS_FORM}),
                )
                if row.proposal is not None:
                    reference.initial = row.proposal.clause_reference
                self.fields[reference_field(row.key)] = reference

    def answers(self) -> dict[str, str]:
        return {row.key: self.cleaned_data.get(row.key) or "" for row in self.rows}

    def references(self) -> dict[str, str]:
        return {
            row.key: self.cleaned_data.get(reference_field(row.key)) or ""
            for row in self.rows
            if row.claim is None
        }


class DatasheetForm(forms.Form):
    """Which card's datasheet to take hints from (nothing is saved by choosing one)."""

    card = forms.ChoiceField(
        label=_("Card model"),
        required=False,
        choices=[("", "—"), *[(sku.key, sku.name) for sku in SKUS]],
        widget=forms.Select(attrs={"form": ANSWERS_FORM}),
    )


class ReplyForm(forms.Form):
    reply = forms.CharField(
        label=_("Your reply"),
        max_length=REPLY_MAX,
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    value = forms.CharField(
        label=_("New answer (optional)"),
        required=False,
        max_length=CLAUSE_ANSWER_MAX,
        help_text=_("Leave it blank to keep your answer as it is."),
    )


class DocumentForm(forms.Form):
    kind = forms.ChoiceField(label=_("Kind of document"), choices=DocumentKind.choices)
    description = forms.CharField(
        label=_("Description"), required=False, max_length=DESCRIPTION_MAX
    )
    file = forms.FileField(
        label=_("File"),
        help_text=_("PDF, PNG, JPEG, Word (.docx) or Excel (.xlsx)."),
        allow_empty_file=True,  # the service says an empty file is empty, in its words
    )
