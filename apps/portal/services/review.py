"""The organisation's review of what a vendor proposed: each answer accepted, corrected,
rejected or questioned, and each document accepted or rejected.

An accepted answer is written into its record (declared spec, offer, contract terms or
checklist item) by that record's own service, in the same transaction as the decision,
so the record's history says whose claim it was and who accepted it. A value the record
refuses refuses the whole decision.
"""

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import models, transaction
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.contracts.models import ChecklistItem, ClauseChecklist
from apps.contracts.services import checklist_item_update, checklist_save
from apps.core import formats
from apps.core.access import MissingPermission
from apps.core.services import ConcurrentEditError, StateConflict, tracked_update
from apps.offers.models import DeclaredSpec, Offer
from apps.offers.services import declared_spec_update, offer_update
from apps.portal.claims import SECTION_PERMISSION, claim_label, claim_named
from apps.portal.models import (
    DECIDABLE,
    ClaimSection,
    DocumentStatus,
    InvitationState,
    Proposal,
    ProposalStatus,
    VendorDocument,
    VendorInvitation,
)
from apps.portal.services.invitations import EmailNotSent

logger = logging.getLogger(__name__)

DOCUMENT_PERMISSION = "portal.change_vendordocument"


class NoChecklist(ValidationError):
    """Terms cannot be accepted before the offer's clause checklist exists (the page links
    to starting it)."""


class Decision(models.TextChoices):
    ACCEPT = "accept", gettext_lazy("Accept")
    EDIT = "edit", gettext_lazy("Accept with changes")
    REJECT = "reject", gettext_lazy("Reject")
    QUESTION = "question", gettext_lazy("Ask a question")


_STATUS_OF = {
    Decision.ACCEPT: ProposalStatus.ACCEPTED,
    Decision.EDIT: ProposalStatus.EDITED,
    Decision.REJECT: ProposalStatus.REJECTED,
    Decision.QUESTION: ProposalStatus.QUESTIONED,
}


# The proposal's own history, in the words of the other history reasons (not translated).
_DONE = {
    Decision.ACCEPT: "accepted",
    Decision.EDIT: "accepted with changes",
    Decision.REJECT: "rejected",
    Decision.QUESTION: "questioned",
}


def _who(user) -> str:
    return user.get_full_name() or user.username


def _invitation_lock(invitation_id: int) -> VendorInvitation:
    """The invitation an answer or a document came through, locked before it (as its
    revocation and the vendor's writes lock it): revoked meanwhile, its answers are closed
    before the decision reads them."""
    return VendorInvitation.objects.select_for_update().get(pk=invitation_id)


def closed_invitation_refusal(invitation: VendorInvitation, what: str) -> str:
    """Why what came through ``invitation`` can no longer be accepted; "" while it is open.

    ``what`` is "answer" or "document". Only what is sent through an open invitation is
    the vendor's word now: once it expired or was revoked, a reviewer may still reject
    what it brought, never accept it (nor, for an answer, question the vendor about it).
    """
    state = invitation.state
    if state == InvitationState.OPEN:
        return ""
    if state == InvitationState.REVOKED:
        date = formats.datetime(invitation.revoked_at)
        if what == "answer":
            return _(
                "This answer came through an invitation revoked on %(date)s: it can no "
                "longer be accepted or questioned, only rejected."
            ) % {"date": date}
        return _(
            "This document came through an invitation revoked on %(date)s: it can no "
            "longer be accepted, only rejected."
        ) % {"date": date}
    date = formats.datetime(invitation.expires_at)
    if what == "answer":
        return _(
            "This answer came through an invitation that expired on %(date)s: it can no "
            "longer be accepted or questioned, only rejected. Invite the vendor again to "
            "have it confirmed."
        ) % {"date": date}
    return _(
        "This document came through an invitation that expired on %(date)s: it can no "
        "longer be accepted, only rejected. Invite the vendor again to have it sent anew."
    ) % {"date": date}


def _reason(proposal: Proposal, *, actor, decision: str, note: str) -> str:
    """The record's history reason: the vendor's side and the reviewer's."""
    invitation = proposal.invitation
    verb = "accepted with changes" if decision == Decision.EDIT else "accepted"
    reason = (
        f"Submitted by the vendor ({invitation.contact_name}, {invitation.email}), "
        f"{verb} by {_who(actor)}"
    )
    return f"{reason}: {note}" if note else reason


def proposal_decide(
    *,
    actor,
    proposal: Proposal,
    decision: str,
    note: str = "",
    value: str | None = None,
    expected_version: int | None = None,
) -> Proposal:
    """Settle (or question) one proposal; an accepted value is written into its record."""
    if decision not in Decision.values:
        raise ValidationError({"decision": _("Choose what to do with this answer.")})
    permission = SECTION_PERMISSION[proposal.section]
    if not actor.has_perm(permission):
        raise MissingPermission(permission)
    note = (note or "").strip()
    if decision == Decision.REJECT and not note:
        raise ValidationError({"note": _("Say why the answer is rejected.")})
    if decision == Decision.QUESTION and not note:
        raise ValidationError({"note": _("Write the question for the vendor.")})
    if decision == Decision.EDIT and not (value or "").strip():
        raise ValidationError({"value": _("Give the corrected value.")})
    with transaction.atomic():
        invitation = _invitation_lock(proposal.invitation_id)
        current = (
            Proposal.objects.select_for_update()
            .select_related("invitation__offer__vendor")
            .get(pk=proposal.pk)
        )
        if expected_version is not None and current.version != expected_version:
            raise ConcurrentEditError(current, expected_version)
        if current.status not in DECIDABLE:
            raise StateConflict(
                _("This answer was already decided (%(status)s).")
                % {"status": current.get_status_display()}
            )
        refusal = closed_invitation_refusal(invitation, "answer")
        if refusal and decision != Decision.REJECT:
            raise StateConflict(refusal)
        fields: dict[str, Any] = {
            "status": _STATUS_OF[Decision(decision)],
            "reviewed_by": actor,
            "reviewed_at": timezone.now(),
            "review_note": note,
        }
        if decision in (Decision.ACCEPT, Decision.EDIT):
            reason = _reason(current, actor=actor, decision=decision, note=note)
            fields["accepted_value"] = _apply(
                actor=actor,
                proposal=current,
                # The vendor's answer as kept, or the reviewer's correction as typed.
                text=current.value if decision == Decision.ACCEPT else (value or ""),
                typed=decision == Decision.EDIT,
                reason=reason,
            )
        decided = tracked_update(
            current,
            actor=actor,
            reason=f"Vendor's answer {_DONE[Decision(decision)]} by {_who(actor)}",
            fields=fields,
        )
        if decision == Decision.QUESTION:
            _send_question(decided)
    return decided


@dataclass(frozen=True)
class RowDecision:
    """One row of a section's review form: what to do with one proposal."""

    proposal: Proposal
    decision: str
    note: str = ""
    value: str = ""
    version: int | None = None


class RowRefused(Exception):
    """A section's decisions refused whole, because of one row (named by ``label``)."""

    def __init__(self, row: RowDecision, label: str, error: Exception) -> None:
        super().__init__(label)
        self.row, self.label, self.error = row, label, error


def section_decide(*, actor, section: str, rows: list[RowDecision]) -> list[Proposal]:
    """Every decision of one section's review form, in one transaction: all recorded, or
    none. Questions are settled last, so that an e-mail that cannot be sent undoes the
    lot before any other record is kept; the first refusal names its row."""
    if not rows:
        raise ValidationError(_("Choose a decision for at least one answer."))
    if any(row.proposal.section != section for row in rows):
        raise ValidationError(_("Every answer decided here must belong to this section."))
    ordered = sorted(rows, key=lambda row: row.decision == Decision.QUESTION)
    decided: list[Proposal] = []
    with transaction.atomic():
        for row in ordered:
            try:
                decided.append(
                    proposal_decide(
                        actor=actor,
                        proposal=row.proposal,
                        decision=row.decision,
                        note=row.note,
                        value=row.value,
                        expected_version=row.version,
                    )
                )
            except (ValidationError, ConcurrentEditError, StateConflict, EmailNotSent) as error:
                raise RowRefused(row, claim_label(row.proposal), error) from error
    return decided


def _apply(*, actor, proposal: Proposal, text: str, typed: bool, reason: str) -> str:
    """Write ``text`` (as kept, or as a person typed it) into the proposal's record; the
    text kept as accepted."""
    offer = proposal.invitation.offer
    if proposal.section == ClaimSection.CLAUSE:
        return _clause_apply(actor=actor, proposal=proposal, offer=offer, text=text, reason=reason)
    claim = claim_named(proposal.section, proposal.claim)
    try:
        parsed = claim.parse(claim.stored_text(text) if typed else text)
    except ValidationError as error:
        raise ValidationError({"value": error.messages}) from None
    try:
        if claim.model is Offer:
            offer_update(actor=actor, offer=offer, fields={claim.name: parsed}, reason=reason)
        elif claim.model is DeclaredSpec:
            spec = DeclaredSpec.objects.get(offer=offer)
            declared_spec_update(actor=actor, spec=spec, fields={claim.name: parsed}, reason=reason)
        else:
            checklist = ClauseChecklist.objects.filter(offer=offer).first()
            if checklist is None:
                raise NoChecklist(
                    _("This offer has no clause checklist yet: start it before accepting terms.")
                )
            checklist_save(
                actor=actor,
                checklist=checklist,
                items=[],
                reason=reason,
                contract_terms={claim.name: parsed},
            )
    except NoChecklist:
        raise
    except ValidationError as error:
        raise ValidationError({"value": _field_messages(error, claim.name)}) from None
    return claim.as_text(parsed)


def _clause_apply(*, actor, proposal: Proposal, offer: Offer, text: str, reason: str) -> str:
    item = ChecklistItem.objects.filter(checklist__offer=offer, key=proposal.claim).first()
    if item is None:
        raise ValidationError({"value": _("This clause is no longer on the offer's checklist.")})
    text = text.strip()
    fields = {"excerpt": text}
    if proposal.clause_reference:
        fields["clause_reference"] = proposal.clause_reference.strip()
    try:
        checklist_item_update(actor=actor, item=item, fields=fields, reason=reason)
    except ValidationError as error:
        raise ValidationError({"value": error.messages}) from None
    return text


def _field_messages(error: ValidationError, name: str) -> list[str]:
    """The record's refusal of ``name`` (as the record or the terms call it), else all of it."""
    if hasattr(error, "error_dict"):
        by_name = error.message_dict
        for key in (name, f"terms.{name}"):
            if key in by_name:
                return by_name[key]
    return error.messages


def _send_question(proposal: Proposal) -> None:
    invitation = proposal.invitation
    offer = invitation.offer
    label = claim_label(proposal)
    with translation.override(invitation.language):
        subject = _("A question about your answers for %(vendor)s") % {"vendor": offer.vendor.name}
        body = render_to_string(
            "portal/email/question.txt",
            {
                "invitation": invitation,
                "organisation": settings.ORGANISATION_NAME,
                "vendor": offer.vendor.name,
                "claim": label,
                "question": proposal.review_note,
            },
        )
    try:
        send_mail(
            subject=subject[:200], message=body, from_email=None, recipient_list=[invitation.email]
        )
    except Exception as error:
        logger.warning("Could not e-mail the question to %s", invitation.email, exc_info=True)
        raise EmailNotSent(str(error)) from error


def document_decide(
    *, actor, document: VendorDocument, decision: str, note: str = ""
) -> VendorDocument:
    """Accept or reject one vendor document (a rejection says why)."""
    if not actor.has_perm(DOCUMENT_PERMISSION):
        raise MissingPermission(DOCUMENT_PERMISSION)
    if decision not in (Decision.ACCEPT, Decision.REJECT):
        raise ValidationError({"decision": _("Accept or reject the document.")})
    note = (note or "").strip()
    if decision == Decision.REJECT and not note:
        raise ValidationError({"note": _("Say why the document is rejected.")})
    with transaction.atomic():
        invitation = _invitation_lock(document.invitation_id)
        current = VendorDocument.objects.select_for_update().get(pk=document.pk)
        if current.status != DocumentStatus.PENDING:
            raise StateConflict(
                _("This document was already decided (%(status)s).")
                % {"status": current.get_status_display()}
            )
        refusal = closed_invitation_refusal(invitation, "document")
        if refusal and decision != Decision.REJECT:
            raise StateConflict(refusal)
        status = DocumentStatus.ACCEPTED if decision == Decision.ACCEPT else DocumentStatus.REJECTED
        verb = "accepted" if status == DocumentStatus.ACCEPTED else "rejected"
        reason = f"Vendor's document {current.name} {verb} by {_who(actor)}"
        return tracked_update(
            current,
            actor=actor,
            reason=f"{reason}: {note}" if note else reason,
            fields={
                "status": status,
                "reviewed_by": actor,
                "reviewed_at": timezone.now(),
                "review_note": note,
            },
        )
