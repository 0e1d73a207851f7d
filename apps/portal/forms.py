"""The portal's forms: the vendor's answers, replies and documents, and the
organisation's invitations and decisions.

The vendor's forms take text as typed; the services read and check it. Every answer
is optional (blank: no answer), so the forms hand the service the raw strings and the
service refuses the submit whole, naming each bad field.
"""

from django import forms
from django.conf import settings
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from apps.evidence.datasheet import SKUS
from apps.portal.models import DocumentKind, Proposal
from apps.portal.questionnaire_forms import questionnaires_field
from apps.portal.selectors import ClaimRow
from apps.portal.services.invitations import MAX_DAYS
from apps.portal.services.proposals import (
    CLAUSE_ANSWER_MAX,
    CLAUSE_REFERENCE_MAX,
    DESCRIPTION_MAX,
    REPLY_MAX,
    reference_field,
)
from apps.portal.services.review import Decision

NUMBER_TYPES = (forms.DecimalField, forms.IntegerField, forms.FloatField)
# The longest answer kept (a proposal's value).
ANSWER_MAX = Proposal._meta.get_field("value").max_length
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
    model_field = row.claim.typed_field()
    choices = getattr(model_field, "choices", None)
    if choices:
        widget: forms.Widget = forms.Select(
            choices=[("", "—"), *[c for c in choices if c[0] not in ("", None)]],
            attrs={"form": ANSWERS_FORM},
        )
    elif isinstance(model_field, NUMBER_TYPES):
        widget = forms.TextInput(
            attrs={"inputmode": "decimal", "autocomplete": "off", "form": ANSWERS_FORM}
        )
    else:
        widget = forms.TextInput(attrs={"form": ANSWERS_FORM})
    return forms.CharField(
        label=capfirst(row.label),
        required=False,
        strip=False,
        # The record refuses more in its own words; this only bounds what is read.
        max_length=ANSWER_MAX,
        widget=widget,
    )


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
                kept = row.proposal.value
                # As the vendor typed it: a share kept as 0.3 shows as 30 (percent).
                self.fields[row.key].initial = row.claim.typed_text(kept) if row.claim else kept
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


# --- The organisation's side ----------------------------------------------------------


class InvitationForm(forms.Form):
    """Whom to invite: one of the vendor's kept contacts (its name, e-mail and language
    are taken from it), or a person typed in."""

    contact: forms.ModelChoiceField = forms.ModelChoiceField(
        label=_("One of the vendor's contacts"),
        queryset=None,
        required=False,
        empty_label=_("Someone else (type below)"),
        help_text=_("Picking a contact fills in the name, e-mail and language."),
    )
    contact_name = forms.CharField(label=_("Contact's name"), max_length=200, required=False)
    email = forms.EmailField(label=_("Contact's e-mail"), required=False)
    language = forms.ChoiceField(
        label=_("Language of the e-mails"), choices=settings.LANGUAGES, initial="en"
    )
    days = forms.IntegerField(
        label=_("Days the link works"),
        min_value=1,
        max_value=MAX_DAYS,
        initial=settings.PORTAL_INVITATION_DAYS,
    )
    # Published questionnaire versions the vendor answers as well.
    questionnaires = questionnaires_field()

    def __init__(self, *args, contacts=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # The vendor's active contacts (offer.vendor.contact_people); none to pick without.
        self.fields["contact"].queryset = contacts  # type: ignore[attr-defined]
        if contacts is None or not contacts.exists():
            del self.fields["contact"]

    def clean(self) -> dict:
        data = super().clean() or {}
        picked = data.pop("contact", None)
        if picked is not None:
            data.update(contact_name=picked.name, email=picked.email, language=picked.language)
            return data
        if not data.get("contact_name") and "contact_name" not in self.errors:
            self.add_error("contact_name", _("Pick a contact or type the contact's name."))
        if not data.get("email") and "email" not in self.errors:
            self.add_error("email", _("Pick a contact or type the contact's e-mail."))
        return data


class RevokeForm(forms.Form):
    reason = forms.CharField(label=_("Why it is revoked"), max_length=300)


class ProposalDecisionForm(forms.Form):
    decision = forms.ChoiceField(label=_("Decision"), choices=Decision.choices)
    value = forms.CharField(
        label=_("Corrected value (when accepting with changes)"),
        max_length=5000,
        required=False,
    )
    note = forms.CharField(
        label=_("Reason or question"),
        max_length=2000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)


class SectionRowForm(ProposalDecisionForm):
    """One answer's row in its section's review form (prefixed with the proposal's id).

    A blank decision leaves the answer as it is, unless "Accept all as proposed" was
    pressed; an answer whose invitation is closed can only be rejected."""

    decision = forms.ChoiceField(
        label=_("Decision"),
        choices=[("", _("Leave for now")), *Decision.choices],
        required=False,
    )

    def __init__(self, *args, open_invitation: bool = True, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["note"].widget.attrs["rows"] = 1  # one line per row of the table
        if not open_invitation:
            decision = self.fields["decision"]
            assert isinstance(decision, forms.ChoiceField)
            decision.choices = [
                ("", _("Leave for now")),
                (Decision.REJECT, Decision.REJECT.label),
            ]
            self.fields["note"].label = _("Why it is rejected")


class DocumentDecisionForm(forms.Form):
    decision = forms.ChoiceField(
        label=_("Decision"),
        choices=[(Decision.ACCEPT, _("Accept")), (Decision.REJECT, _("Reject"))],
    )
    note = forms.CharField(label=_("Reason"), max_length=2000, required=False)
