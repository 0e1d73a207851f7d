"""The organisation's forms: inviting a vendor contact, revoking, deciding answers."""

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from apps.portal.invitations import MAX_DAYS
from apps.portal.review import Decision


class InvitationForm(forms.Form):
    contact_name = forms.CharField(label=_("Contact's name"), max_length=200)
    email = forms.EmailField(label=_("Contact's e-mail"))
    language = forms.ChoiceField(
        label=_("Language of the e-mails"), choices=settings.LANGUAGES, initial="en"
    )
    days = forms.IntegerField(
        label=_("Days the link works"),
        min_value=1,
        max_value=MAX_DAYS,
        initial=settings.PORTAL_INVITATION_DAYS,
    )


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


class DocumentDecisionForm(forms.Form):
    decision = forms.ChoiceField(
        label=_("Decision"),
        choices=[(Decision.ACCEPT, _("Accept")), (Decision.REJECT, _("Reject"))],
    )
    note = forms.CharField(label=_("Reason"), max_length=2000, required=False)
