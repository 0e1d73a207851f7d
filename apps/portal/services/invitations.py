"""Inviting a vendor contact to answer for one offer, and taking the invitation back.

The link's secret is made here, put in the e-mail and forgotten: only its digest is
stored. If the e-mail cannot be sent, nothing is kept (an invitation nobody received
would only wait to expire), and the caller is told.
"""

import logging
from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from apps.core.services import StateConflict, tracked_create, tracked_update
from apps.offers.models import Offer
from apps.portal import access
from apps.portal.models import (
    DECIDABLE,
    DocumentStatus,
    InvitationState,
    InvitationUse,
    Proposal,
    ProposalStatus,
    QuestionnaireVersion,
    SentQuestionnaire,
    UseKind,
    VendorDocument,
    VendorInvitation,
)

logger = logging.getLogger(__name__)

MAX_DAYS = 90


class EmailNotSent(Exception):
    """The invitation's e-mail could not be handed to the mail server."""


def use_record(
    *, invitation: VendorInvitation, kind: str, detail: str = "", actor=None
) -> InvitationUse:
    """Put one use of ``invitation`` in the case's history (the vendor acts without an
    account: such rows name no person, their detail says who)."""
    return tracked_create(
        InvitationUse,
        actor=actor,
        reason=str(UseKind(kind).label),
        invitation=invitation,
        kind=kind,
        detail=detail[:300],
    )


def invitation_create(
    *,
    actor,
    offer: Offer,
    contact_name: str,
    email: str,
    language: str = "",
    days: int = 0,
    questionnaires: Iterable[QuestionnaireVersion] = (),
) -> tuple[VendorInvitation, str]:
    """Invite ``email`` to answer for ``offer``; the invitation and the link's secret.

    ``questionnaires``: published questionnaire versions the vendor answers as well.
    The e-mail goes out inside the transaction: if it fails, nothing is stored.
    """
    days = days or settings.PORTAL_INVITATION_DAYS
    if not 1 <= days <= MAX_DAYS:
        raise ValidationError(
            {"days": _("An invitation lasts between 1 and %(max)d days.") % {"max": MAX_DAYS}}
        )
    language = language or settings.LANGUAGE_CODE
    secret = access.new_link_secret()
    with transaction.atomic():
        invitation = tracked_create(
            VendorInvitation,
            actor=actor,
            reason="Vendor invited",
            offer=offer,
            contact_name=contact_name.strip(),
            email=email.strip(),
            language=language,
            link_digest=access.digest(secret),
            expires_at=timezone.now() + timedelta(days=days),
            invited_by=actor,
        )
        use_record(
            invitation=invitation, kind=UseKind.INVITED, detail=invitation.email, actor=actor
        )
        _questionnaires_send(actor, invitation, questionnaires)
        _send_invitation(invitation, secret)
    return invitation, secret


def _questionnaires_send(
    actor, invitation: VendorInvitation, versions: Iterable[QuestionnaireVersion]
) -> None:
    """Include published questionnaire versions, each once, in the new invitation."""
    for version in dict.fromkeys(versions):
        if not version.is_published:
            raise ValidationError({"questionnaires": _("Only a published version can be sent.")})
        tracked_create(
            SentQuestionnaire,
            actor=actor,
            reason=f"Questionnaire sent: {version}",
            invitation=invitation,
            questionnaire_version=version,
        )


def _send_invitation(invitation: VendorInvitation, secret: str) -> None:
    offer = invitation.offer
    with translation.override(invitation.language):
        subject = _("%(organisation)s asks you to answer for your offer") % {
            "organisation": settings.ORGANISATION_NAME
        }
        body = render_to_string(
            "portal/email/invited.txt",
            {
                "invitation": invitation,
                "organisation": settings.ORGANISATION_NAME,
                "vendor": offer.vendor.name,
                "url": access.portal_link(secret),
            },
        )
    try:
        send_mail(
            subject=subject[:200], message=body, from_email=None, recipient_list=[invitation.email]
        )
    except Exception as error:
        logger.warning("Could not e-mail the invitation of %s", invitation.email, exc_info=True)
        raise EmailNotSent(str(error)) from error


def invitation_revoke(*, actor, invitation: VendorInvitation, reason: str) -> VendorInvitation:
    """Close ``invitation`` now: its link and any session opened with it stop working.

    What the vendor sent through it and no reviewer has settled yet (answers awaiting
    review or questioned, documents awaiting review) is closed with it, each with the
    revocation's reason in its history: none of it can be accepted any more.
    """
    if not reason or not reason.strip():
        raise ValidationError({"reason": _("Say why the invitation is revoked.")})
    reason = reason.strip()[:300]
    with transaction.atomic():
        # Locked first, as the vendor's writes and the reviewers' decisions lock it: a
        # decision or an answer made meanwhile is settled before, or refused after.
        current = VendorInvitation.objects.select_for_update().get(pk=invitation.pk)
        if current.state == InvitationState.REVOKED:
            raise StateConflict(_("This invitation was already revoked."))
        now = timezone.now()
        revoked = tracked_update(
            current,
            actor=actor,
            reason=reason,
            fields={"revoked_at": now, "revoked_by": actor, "revoke_reason": reason},
        )
        use_record(invitation=revoked, kind=UseKind.REVOKED, detail=reason, actor=actor)
        who = actor.get_full_name() or actor.username
        closed = f"Closed with its invitation, revoked by {who}: {reason}"
        fields = {
            "reviewed_by": actor,
            "reviewed_at": now,
            "review_note": reason,
        }
        open_proposals = Proposal.objects.select_for_update().filter(
            invitation=revoked, status__in=DECIDABLE
        )
        for proposal in open_proposals.order_by("pk"):
            tracked_update(
                proposal,
                actor=actor,
                reason=closed,
                fields={**fields, "status": ProposalStatus.CLOSED},
            )
        pending_documents = VendorDocument.objects.select_for_update().filter(
            invitation=revoked, status=DocumentStatus.PENDING
        )
        for document in pending_documents.order_by("pk"):
            tracked_update(
                document,
                actor=actor,
                reason=closed,
                fields={**fields, "status": DocumentStatus.CLOSED},
            )
    return revoked
