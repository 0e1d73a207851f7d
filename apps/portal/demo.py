"""The demo's questionnaire: a security baseline the organisation asks every GPU host,
published, sent with an invitation to the half-way case's Borealis offer, and answered.

The invitation is made without its e-mail (a demo sends none) and its link's secret is
forgotten at once, as the real one is once e-mailed: it shows on the offer's vendor
pages, with the answers submitted through it and their score.
"""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from apps.core.services import tracked_create
from apps.offers.models import Offer
from apps.portal import access
from apps.portal.models import Questionnaire, SentQuestionnaire, UseKind, VendorInvitation
from apps.portal.services.invitations import use_record
from apps.portal.services.questionnaires import (
    answers_save,
    question_save,
    questionnaire_create,
    version_publish,
)

TITLE = "GPU host security baseline"
QUESTIONS = (
    {
        "key": "encryption-at-rest",
        "text": "Are customer datasets and model weights encrypted at rest?",
        "kind": "yes_no",
        "expected_yes": True,
        "weight": 3,
    },
    {
        "key": "datacentre-tier",
        "text": "Which Uptime Institute tier is the data centre hosting the nodes?",
        "kind": "choice",
        "options": [
            {"label": "Tier IV", "score": 100},
            {"label": "Tier III", "score": 75},
            {"label": "Tier II or lower", "score": 0},
        ],
        "weight": 2,
    },
    {
        "key": "wipe-hours",
        "text": "Within how many hours of the end of the contract are the disks wiped?",
        "kind": "number",
        "unit": "h",
        "min_value": 0,
        "max_value": 8760,
        "threshold": 72,
        "threshold_direction": "le",
        "weight": 2,
    },
    {
        "key": "iso27001-expiry",
        "text": "When does your ISO/IEC 27001 certificate expire?",
        "kind": "date",
        "weight": 1,
        "help_text": "As printed on the certificate.",
    },
)
ANSWERS = {
    "encryption-at-rest": "yes",
    "datacentre-tier": "Tier III",
    "wipe-hours": "168",
}


def seed_questionnaire(*, offer: Offer, users: dict) -> VendorInvitation | None:
    """The questionnaire, published by legal, sent by procurement and answered."""
    if Questionnaire.objects.filter(title=TITLE).exists():
        return None
    lena, priya = users["lena"], users["priya"]
    draft = questionnaire_create(
        actor=lena,
        title=TITLE,
        purpose="What every host of our models must answer about the machines it rents us.",
    )
    for fields in QUESTIONS:
        question_save(actor=lena, version=draft, fields={"required": True, **fields})
    published = version_publish(actor=lena, version=draft, note="First version")
    invitation = tracked_create(
        VendorInvitation,
        actor=priya,
        reason="Vendor invited",
        offer=offer,
        contact_name="Kenji Sato",
        email="kenji.sato@borealis.example",
        language="en",
        link_digest=access.digest(access.new_link_secret()),
        expires_at=timezone.now() + timedelta(days=settings.PORTAL_INVITATION_DAYS),
        invited_by=priya,
    )
    use_record(invitation=invitation, kind=UseKind.INVITED, detail=invitation.email, actor=priya)
    sent = tracked_create(
        SentQuestionnaire,
        actor=priya,
        reason=f"Questionnaire sent: {published}",
        invitation=invitation,
        questionnaire_version=published,
    )
    expiry = (timezone.localdate() + timedelta(days=400)).isoformat()
    answers_save(
        invitation=invitation,
        sent=sent,
        typed={**ANSWERS, "iso27001-expiry": expiry},
        submit=True,
    )
    return invitation
