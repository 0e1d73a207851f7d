"""What the vendor-side tests share: the pages' addresses and a reviewer's verdict."""

from django.urls import reverse

from apps.core.services import tracked_update
from apps.portal.models import Proposal


def section_url(secret: str, section: str) -> str:
    return reverse("portal:section", args=[secret, section])


def reply_url(secret: str, section: str, pk: int) -> str:
    return reverse("portal:reply", args=[secret, section, pk])


def documents_url(secret: str) -> str:
    return reverse("portal:documents", args=[secret])


def reviewed(proposal: Proposal, reviewer, status: str, note: str = "", accepted: str = ""):
    """The proposal as a reviewer left it (the reviewers' own pages are tested elsewhere)."""
    return tracked_update(
        proposal,
        actor=reviewer,
        reason="Reviewed",
        fields={
            "status": status,
            "review_note": note,
            "accepted_value": accepted,
            "reviewed_by": reviewer,
        },
    )
