"""The vendor portal: invitations to one offer, and what the vendor proposes through them.

A vendor contact is invited to one offer. The link carries a secret that is never
stored (only its SHA-256); it opens nothing until the contact types a one-time code
sent to the invited address. What the vendor fills arrives as proposals, one per
claim, and a document as a vendor document: neither touches the offer's records
until a reviewer accepts it. Every invitation, every use of it and every proposal is
a tracked record, so the case's history shows both sides.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.models import StoredFileRecord, TrackedModel


class InvitationState(models.TextChoices):
    OPEN = "open", _("Open")
    EXPIRED = "expired", _("Expired")
    REVOKED = "revoked", _("Revoked")


class VendorInvitation(TrackedModel):
    """One vendor contact, asked to answer for one offer, until it expires or is revoked."""

    offer = models.ForeignKey(
        "offers.Offer",
        on_delete=models.PROTECT,
        related_name="vendor_invitations",
        verbose_name=_("offer"),
    )
    contact_name = models.CharField(_("contact name"), max_length=200)
    email = models.EmailField(_("e-mail"))
    language = models.CharField(
        _("language of the e-mails"), max_length=10, choices=settings.LANGUAGES, default="en"
    )
    # SHA-256 of the secret in the link; the secret itself is only ever in the e-mail.
    link_digest = models.CharField(_("link digest"), max_length=64, unique=True, editable=False)
    expires_at = models.DateTimeField(_("expires at"))
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("invited by"),
    )
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("revoked by"),
    )
    revoke_reason = models.CharField(_("why it was revoked"), max_length=300, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("vendor invitation")
        verbose_name_plural = _("vendor invitations")

    def __str__(self) -> str:
        return f"{self.contact_name} <{self.email}> for {self.offer}"

    def state_at(self, when=None) -> str:
        when = when or timezone.now()
        if self.revoked_at is not None:
            return InvitationState.REVOKED
        if when >= self.expires_at:
            return InvitationState.EXPIRED
        return InvitationState.OPEN

    @property
    def state(self) -> str:
        return self.state_at()

    @property
    def is_open(self) -> bool:
        return self.state == InvitationState.OPEN


class OneTimeCode(models.Model):
    """A code sent to the invited address; it opens the portal once, for a short time.

    Only its digest is kept. Not a tracked record itself: each code sent and each
    sign-in is an ``InvitationUse``, which is.
    """

    invitation = models.ForeignKey(VendorInvitation, on_delete=models.CASCADE, related_name="codes")
    code_digest = models.CharField(max_length=64)
    sent_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["-sent_at", "-pk"]
        verbose_name = _("one-time code")
        verbose_name_plural = _("one-time codes")

    def __str__(self) -> str:
        return f"Code sent {self.sent_at:%Y-%m-%d %H:%M} for invitation #{self.invitation_id}"


class UseKind(models.TextChoices):
    INVITED = "invited", _("Invitation sent")
    CODE_SENT = "code_sent", _("Code sent")
    SIGNED_IN = "signed_in", _("Signed in with a code")
    CODE_REFUSED = "code_refused", _("Wrong or used code refused")
    PROPOSED = "proposed", _("Answers proposed")
    UPLOADED = "uploaded", _("Document uploaded")
    REPLIED = "replied", _("Question answered")
    REVOKED = "revoked", _("Invitation revoked")


class InvitationUse(TrackedModel):
    """One thing that happened through an invitation, in the case's history."""

    invitation = models.ForeignKey(
        VendorInvitation,
        on_delete=models.PROTECT,
        related_name="uses",
        verbose_name=_("invitation"),
    )
    kind = models.CharField(_("what happened"), max_length=20, choices=UseKind.choices)
    detail = models.CharField(_("detail"), max_length=300, blank=True)
    history = HistoricalRecords()
    shown_when_created = ("kind", "detail")

    class Meta:
        ordering = ["created_at", "pk"]
        verbose_name = _("use of a vendor invitation")
        verbose_name_plural = _("uses of vendor invitations")

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.invitation.contact_name})"


class ClaimSection(models.TextChoices):
    SPEC = "spec", _("Declared spec")
    COMMERCIAL = "commercial", _("Commercial terms")
    CLAUSE = "clause", _("Contract clauses")
    EXIT = "exit", _("Exit and data handling")


class ProposalStatus(models.TextChoices):
    PENDING = "pending", _("Awaiting review")
    ACCEPTED = "accepted", _("Accepted")
    EDITED = "edited", _("Accepted with changes")
    REJECTED = "rejected", _("Rejected")
    QUESTIONED = "questioned", _("Questioned")
    # Still undecided when its invitation was revoked: closed with it, never accepted.
    CLOSED = "closed", _("Closed with its invitation")


# A proposal in one of these is settled: the vendor can no longer change it.
SETTLED = (
    ProposalStatus.ACCEPTED,
    ProposalStatus.EDITED,
    ProposalStatus.REJECTED,
    ProposalStatus.CLOSED,
)
# Accepted answers went into the offer's records: the vendor can no longer change them.
# A rejected one may be proposed again (unlike ``SETTLED``, which counts it settled).
LOCKED = (ProposalStatus.ACCEPTED, ProposalStatus.EDITED)
# What a reviewer may still decide: an answer awaiting review, or one questioned.
DECIDABLE = (ProposalStatus.PENDING, ProposalStatus.QUESTIONED)


class Proposal(TrackedModel):
    """What the vendor says about one claim of its offer, and what the reviewer made of it.

    ``claim`` names the claim (``apps.portal.claims``): a field of the declared spec,
    the offer or the contract terms, or a checklist item's key. ``value`` is what the
    vendor gave (as text, exactly); ``accepted_value`` what went into the record.
    """

    invitation = models.ForeignKey(
        VendorInvitation,
        on_delete=models.PROTECT,
        related_name="proposals",
        verbose_name=_("invitation"),
    )
    section = models.CharField(_("section"), max_length=20, choices=ClaimSection.choices)
    claim = models.CharField(_("claim"), max_length=60)
    value = models.TextField(_("vendor's answer"), max_length=5000, blank=True)
    clause_reference = models.CharField(_("clause reference"), max_length=200, blank=True)
    status = models.CharField(
        _("status"), max_length=20, choices=ProposalStatus.choices, default=ProposalStatus.PENDING
    )
    accepted_value = models.TextField(_("accepted value"), max_length=5000, blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("reviewed by"),
    )
    reviewed_at = models.DateTimeField(_("reviewed at"), null=True, blank=True)
    review_note = models.TextField(_("reviewer's reason or question"), max_length=2000, blank=True)
    vendor_reply = models.TextField(_("vendor's reply"), max_length=2000, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["invitation_id", "section", "pk"]
        verbose_name = _("vendor proposal")
        verbose_name_plural = _("vendor proposals")
        constraints = [
            models.UniqueConstraint(
                fields=["invitation", "section", "claim"], name="proposal_one_per_claim"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_section_display()}: {self.claim}"


class DocumentKind(models.TextChoices):
    AUTHORISATION = "authorisation", _("Authorisation papers")
    SLA = "sla", _("Service level agreement")
    SPEC_SHEET = "spec_sheet", _("Spec sheet")
    OTHER = "other", _("Other")


class DocumentStatus(models.TextChoices):
    PENDING = "pending", _("Awaiting review")
    ACCEPTED = "accepted", _("Accepted")
    REJECTED = "rejected", _("Rejected")
    # Still awaiting review when its invitation was revoked: closed with it.
    CLOSED = "closed", _("Closed with its invitation")


class VendorDocument(TrackedModel, StoredFileRecord):
    """A file the vendor uploaded through its invitation, kept with its SHA-256."""

    invitation = models.ForeignKey(
        VendorInvitation,
        on_delete=models.PROTECT,
        related_name="documents",
        verbose_name=_("invitation"),
    )
    kind = models.CharField(_("kind of document"), max_length=20, choices=DocumentKind.choices)
    description = models.CharField(_("description"), max_length=300, blank=True)
    name = models.CharField(_("file name"), max_length=200)
    content_type = models.CharField(_("content type"), max_length=100)
    storage_name = models.CharField(_("stored as"), max_length=300, editable=False)
    status = models.CharField(
        _("status"), max_length=20, choices=DocumentStatus.choices, default=DocumentStatus.PENDING
    )
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("reviewed by"),
    )
    reviewed_at = models.DateTimeField(_("reviewed at"), null=True, blank=True)
    review_note = models.TextField(_("reviewer's reason"), max_length=2000, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["invitation_id", "created_at", "pk"]
        verbose_name = _("vendor document")
        verbose_name_plural = _("vendor documents")

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.name}"
