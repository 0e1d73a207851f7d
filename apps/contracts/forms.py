"""Forms: the whole checklist on one page, waivers, and new template versions."""

from django import forms
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext_lazy as _

from apps.contracts import terms
from apps.contracts.documents import document_max_bytes
from apps.contracts.models import (
    PAGE_MAX,
    QUOTE_MAX_LENGTH,
    ContractDocument,
    DocumentKind,
    ItemStatus,
)
from apps.contracts.rules import WAIVER_DAYS
from apps.contracts.services import evidence_max_bytes
from apps.core.bounds import TEXT_MAX_LENGTH
from apps.core.forms import EditReasonMixin
from apps.core.uploads import EVIDENCE_DOCUMENTS
from apps.offers.models import BillingBasis

STATUS_CHOICES = [("", _("— not reviewed —")), *ItemStatus.choices]


class ChecklistItemForm(forms.Form):
    """One row of the checklist; ``item_id`` says which item of this checklist it edits."""

    item_id = forms.IntegerField(widget=forms.HiddenInput)
    status = forms.ChoiceField(label=_("Status"), choices=STATUS_CHOICES, required=False)
    clause_reference = forms.CharField(
        label=_("Clause reference"),
        max_length=200,
        required=False,
        widget=forms.TextInput(attrs={"size": 14, "placeholder": _("e.g. clause 7.2")}),
    )
    excerpt = forms.CharField(
        label=_("Excerpt"),
        required=False,
        max_length=TEXT_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 32}),
    )
    note = forms.CharField(
        label=_("Note"),
        required=False,
        max_length=TEXT_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 24}),
    )

    def row(self) -> dict:
        data = dict(self.cleaned_data)
        return {"id": data.pop("item_id"), **data}


ChecklistItemFormSet = forms.formset_factory(ChecklistItemForm, extra=0)


def _term_field(term: terms.Term) -> forms.Field:
    # Built per form, so the label is in the reader's language.
    label = str(term.label)
    if term.kind == "percent":
        return forms.DecimalField(
            label=label,
            required=False,
            min_value=0,
            max_value=100,
            decimal_places=3,
            widget=forms.NumberInput(attrs={"step": "any", "size": 8}),
        )
    if term.kind in ("hours", "days"):
        return forms.IntegerField(
            label=label,
            required=False,
            min_value=0,
            max_value=terms.WHOLE_MAX[term.kind],
            widget=forms.NumberInput(attrs={"size": 8}),
        )
    choices = BillingBasis.choices if term.name == "billing_basis" else terms.IMAGE_FORMATS.items()
    return forms.ChoiceField(
        label=label, required=False, choices=[("", _("— not stated —")), *choices]
    )


class ContractTermsForm(forms.Form):
    """The contract's quantities, each shown beside the clause item it belongs to; blank:
    the contract states none."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for term in terms.TERMS:
            self.fields[term.name] = _term_field(term)


class ChecklistSaveForm(EditReasonMixin):
    """The change reason and version shared by every row of one save."""


class WaiverForm(forms.Form):
    reason = forms.CharField(
        label=_("Why is this red flag accepted?"),
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_(
            "Kept with your name and the time. The waiver lapses if the item's status changes."
        ),
    )
    expires_on = forms.DateField(
        label=_("In force until"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    evidence = forms.FileField(
        label=_("Evidence file (optional)"),
        required=False,
        widget=forms.ClearableFileInput(attrs={"accept": ",".join(EVIDENCE_DOCUMENTS)}),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Built per request: in the reader's language, with the limit as configured now.
        self.fields["expires_on"].help_text = _(
            "The last day the waiver holds; left empty, %(days)s days from today. "
            "After it, the item is an open red flag again."
        ) % {"days": WAIVER_DAYS}
        self.fields["evidence"].help_text = _(
            "For example the vendor's letter or the committee's minute: %(types)s, "
            "at most %(limit)s."
        ) % {
            "types": ", ".join(EVIDENCE_DOCUMENTS),
            "limit": filesizeformat(evidence_max_bytes()),
        }


class WaiverConfirmForm(forms.Form):
    note = forms.CharField(
        label=_("Why do you confirm this waiver?"),
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("Kept with your name and the time, as the second legal reviewer."),
    )


class WaiverWithdrawForm(forms.Form):
    reason = forms.CharField(
        label=_("Why is the waiver withdrawn?"),
        max_length=250,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("The item is judged afresh; the waiver stays on record."),
    )


class TemplateItemForm(forms.Form):
    key = forms.SlugField(label=_("Key"), max_length=50)
    title = forms.CharField(label=_("Title"), max_length=200)
    sub_points = forms.CharField(
        label=_("Sub-points (one per line)"),
        required=False,
        max_length=TEXT_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 36}),
    )
    guidance = forms.CharField(
        label=_("Guidance"),
        required=False,
        max_length=TEXT_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 30}),
    )
    required = forms.BooleanField(label=_("Required"), required=False)
    high_severity = forms.BooleanField(
        label=_("High severity"),
        required=False,
        help_text=_("A waiver needs a second legal reviewer's confirmation."),
    )
    # The clause in Chinese: optional; a page in Chinese shows it, else the English.
    title_zh = forms.CharField(label=_("Title in Chinese"), max_length=200, required=False)
    sub_points_zh = forms.CharField(
        label=_("Sub-points in Chinese (one per line)"),
        required=False,
        max_length=TEXT_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 36}),
    )
    guidance_zh = forms.CharField(
        label=_("Guidance in Chinese"),
        required=False,
        max_length=TEXT_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 30}),
    )

    def item(self) -> dict:
        data = dict(self.cleaned_data)
        data["sub_points"] = [p.strip() for p in data["sub_points"].splitlines() if p.strip()]
        data["sub_points_zh"] = [
            p.strip() for p in (data.get("sub_points_zh") or "").splitlines() if p.strip()
        ]
        data.pop("DELETE", None)
        return data


TemplateItemFormSet = forms.formset_factory(TemplateItemForm, extra=2, can_delete=True)


class TemplatePublishForm(forms.Form):
    note = forms.CharField(
        label=_("Why publish a new version?"),
        max_length=500,
        help_text=_("Existing checklists keep the version they were made from."),
    )


class ContractDocumentForm(forms.Form):
    """One signed contract document: its kind and the file (a PDF or a DOCX)."""

    kind = forms.ChoiceField(label=_("Kind"), choices=DocumentKind.choices)
    file = forms.FileField(
        label=_("Signed document"),
        widget=forms.ClearableFileInput(attrs={"accept": ".pdf,.docx"}),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["file"].help_text = _(
            "A PDF or a Word (DOCX) file, at most %(limit)s. Uploading a kind again makes "
            "its next version; earlier versions stay."
        ) % {"limit": filesizeformat(document_max_bytes())}


class ClauseLinkForm(forms.Form):
    """Where one clause stands in a signed document: which version, which page, what words."""

    document = forms.ModelChoiceField(
        label=_("Document"),
        queryset=ContractDocument.objects.none(),
        required=False,
        empty_label=_("— no document —"),
    )
    page = forms.IntegerField(label=_("Page"), min_value=1, max_value=PAGE_MAX, required=False)
    quote = forms.CharField(
        label=_("Quoted text"),
        max_length=QUOTE_MAX_LENGTH,
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args, documents=(), **kwargs):
        super().__init__(*args, **kwargs)
        choice = self.fields["document"]
        assert isinstance(choice, forms.ModelChoiceField)
        choice.queryset = ContractDocument.objects.filter(
            pk__in=[d.pk for d in documents]
        ).order_by("kind", "-number")
        self.fields["page"].help_text = _("PDF only: a page of the document, counted from 1.")
        self.fields["quote"].help_text = _("At most %(n)s characters.") % {"n": QUOTE_MAX_LENGTH}


class ContractDatesForm(EditReasonMixin):
    effective_date = forms.DateField(
        label=_("Effective date"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    renewal_date = forms.DateField(
        label=_("Renewal date"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    notice_deadline = forms.DateField(
        label=_("Notice deadline"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text=_("The last day to give notice against the renewal."),
    )
    end_date = forms.DateField(
        label=_("End date"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
