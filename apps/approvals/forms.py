from django import forms
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext_lazy as _

from apps.approvals.acceptances import document_max_bytes
from apps.approvals.findings import ACCEPTANCE_MAX_DAYS
from apps.approvals.models import (
    CONDITION_MAX_DAYS,
    ITEM_KEY_MAX_LENGTH,
    AcceptanceCondition,
    Approval,
)
from apps.core.roles import Role


class SubmitForm(forms.Form):
    note = forms.CharField(
        label=_("Note for the tech lead"),
        max_length=1000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
    )


class OfferSelect(forms.Select):
    """A choice of offers where those that cannot be approved are shown, but disabled."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.blocked: set[int] = set()

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        if getattr(value, "value", value) in self.blocked:
            option["attrs"]["disabled"] = True
        return option


# The decision form's third choice: approved, subject to acceptance on the rented machine.
SUBJECT_TO_ACCEPTANCE = "subject_to_acceptance"


class DecisionForm(forms.Form):
    offer = forms.TypedChoiceField(
        label=_("Offer"),
        coerce=int,
        empty_value=None,
        required=False,
        widget=OfferSelect,
        help_text=_("An offer with a gate not held cannot be approved; its gates are listed."),
    )
    decision = forms.ChoiceField(
        label=_("Decision"),
        choices=[
            (Approval.Decision.APPROVED, Approval.Decision.APPROVED.label),
            (SUBJECT_TO_ACCEPTANCE, _("Subject to acceptance")),
            (Approval.Decision.REJECTED, Approval.Decision.REJECTED.label),
        ],
        widget=forms.RadioSelect,
        help_text=_(
            "Subject to acceptance: the offer may be ordered now; what you name below must "
            "pass on the rented machine by the date you set, or the approval lapses and the "
            "case waits for a fresh decision."
        ),
    )
    conditions = forms.MultipleChoiceField(
        label=_("Still to be measured"),
        choices=AcceptanceCondition.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_(
            "Only for an approval subject to acceptance. Name hardware identity when the "
            "offer's spec verification or endpoint probes have not passed yet."
        ),
    )
    condition_deadline = forms.DateField(
        label=_("Acceptance due by"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    comment = forms.CharField(
        label=_("Comment"),
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_("Kept with the decision, in the history and in the packet."),
    )

    def __init__(self, *args, offers, open_gates=None, until_measured=None, **kwargs):
        """``open_gates``: for each offer that cannot be approved, the titles of its open
        gates; ``until_measured``: the offers among them that may be approved subject to
        acceptance, only the rented machine's gates being open."""
        super().__init__(*args, **kwargs)
        self.fields["condition_deadline"].help_text = _(
            "Only for an approval subject to acceptance: at most %(n)s days ahead."
        ) % {"n": CONDITION_MAX_DAYS}
        open_gates = open_gates or {}
        until_measured = set(until_measured or ())
        self.offers = {offer.pk: offer for offer in offers}
        offer_field = self.fields["offer"]
        assert isinstance(offer_field, forms.ChoiceField)
        offer_field.choices = [("", _("— the case as a whole (reject only) —"))] + [
            (
                offer.pk,
                _offer_label(offer, open_gates.get(offer.pk), offer.pk in until_measured),
            )
            for offer in offers
        ]
        widget = offer_field.widget
        assert isinstance(widget, OfferSelect)
        widget.blocked = {
            pk for pk, titles in open_gates.items() if titles and pk not in until_measured
        }

    @classmethod
    def for_gates(cls, offer_gates, data=None, *, initial=None) -> "DecisionForm":
        """The form for the offers whose gates were read (``case_gates``), each offer that
        cannot be approved shown with its open gates."""
        return cls(
            data,
            offers=[entry.offer for entry in offer_gates],
            open_gates={
                entry.offer.pk: [gate.title for gate in entry.open] for entry in offer_gates
            },
            until_measured=[entry.offer.pk for entry in offer_gates if entry.open_until_measured],
            initial=initial or {},
        )

    def clean_offer(self):
        pk = self.cleaned_data.get("offer")
        return self.offers.get(pk) if pk is not None else None

    def clean(self):
        """Subject to acceptance is an approval with conditions and a deadline; the
        service checks them against the offer's gates."""
        cleaned = super().clean() or {}
        if cleaned.get("decision") == SUBJECT_TO_ACCEPTANCE:
            cleaned["decision"] = Approval.Decision.APPROVED
            if not cleaned.get("conditions"):
                self.add_error(
                    "conditions", _("Name what is still to be measured on the rented machine.")
                )
        else:
            cleaned["conditions"] = []
            cleaned["condition_deadline"] = None
        return cleaned


def _offer_label(offer, open_titles, until_measured: bool = False) -> str:
    if not open_titles:
        return str(offer)
    if until_measured:
        return _("%(offer)s — only subject to acceptance: %(gates)s") % {
            "offer": offer,
            "gates": "; ".join(str(title) for title in open_titles),
        }
    return _("%(offer)s — cannot be approved: %(gates)s") % {
        "offer": offer,
        "gates": "; ".join(str(title) for title in open_titles),
    }


class DigestForm(forms.Form):
    daily_digest = forms.BooleanField(
        label=_("E-mail me this list each morning"),
        required=False,
        help_text=_("One e-mail a day, only when something waits for you."),
    )


class AssignForm(forms.Form):
    """Give one item of My work to a person until a date, or back to its role (no one)."""

    case = forms.IntegerField(widget=forms.HiddenInput, min_value=1, max_value=2**31 - 1)
    key = forms.CharField(widget=forms.HiddenInput, max_length=ITEM_KEY_MAX_LENGTH)
    assignee = forms.IntegerField(
        label=_("Assign to"), required=False, min_value=1, max_value=2**31 - 1
    )
    due_on = forms.DateField(label=_("Due by"), required=False)


class FindingAcceptForm(forms.Form):
    """An owner's acceptance of one finding (docs/rules/findings.md#accepting-a-finding)."""

    code = forms.CharField(widget=forms.HiddenInput, max_length=100)
    offer = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1)
    key = forms.CharField(widget=forms.HiddenInput, required=False, max_length=100)
    role = forms.ChoiceField(label=_("Accept as"))
    reason = forms.CharField(
        label=_("Why is this finding accepted?"),
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_(
            "Kept with your name and the time; the finding is open again if its facts change."
        ),
    )
    expires_on = forms.DateField(
        label=_("In force until"), widget=forms.DateInput(attrs={"type": "date"})
    )
    evidence = forms.FileField(label=_("Document"), required=False)

    def __init__(self, *args, roles=(), document="", **kwargs):
        """``roles``: the role values the person may accept as; ``document``: what the
        finding's rule asks the acceptance to attach, in words ("" where it asks none:
        an unbound form then has no file field)."""
        super().__init__(*args, **kwargs)
        self.offer_roles(roles)
        self.fields["expires_on"].help_text = _(
            "The last day the acceptance holds, at most %(days)s days ahead. After it, the "
            "finding is open again."
        ) % {"days": ACCEPTANCE_MAX_DAYS}
        if document:
            self.fields["evidence"].help_text = _(
                "Attach %(document)s (PDF, image, text, office document or ZIP, at most "
                "%(limit)s); it is kept with its SHA-256."
            ) % {"document": document, "limit": filesizeformat(document_max_bytes())}
        elif not self.is_bound:
            del self.fields["evidence"]

    @property
    def takes_files(self) -> bool:
        return "evidence" in self.fields

    def offer_roles(self, roles) -> None:
        """Offer these role values (only those the person holds and the finding awaits)."""
        role = self.fields["role"]
        assert isinstance(role, forms.ChoiceField)
        role.choices = [(value, Role(value).label) for value in roles]


class AcceptanceWithdrawForm(forms.Form):
    reason = forms.CharField(
        label=_("Why is the acceptance withdrawn?"),
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("The finding is open again; the acceptance stays on record."),
    )


class ChainStepForm(forms.Form):
    """One decision at one waiting step of an approval chain."""

    step = forms.IntegerField(widget=forms.HiddenInput, min_value=1, max_value=1000)
    decision = forms.ChoiceField(
        label=_("Decision"), choices=Approval.Decision.choices, widget=forms.RadioSelect
    )
    comment = forms.CharField(
        label=_("Comment"),
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("Kept with the decision, in the history and in the packet."),
    )
