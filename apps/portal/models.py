"""The vendor portal: invitations to one offer, and what the vendor proposes through them.

A vendor contact is invited to one offer. The link carries a secret that is never
stored (only its SHA-256); it opens nothing until the contact types a one-time code
sent to the invited address. What the vendor fills arrives as proposals, one per
claim, and a document as a vendor document: neither touches the offer's records
until a reviewer accepts it. Every invitation, every use of it and every proposal is
a tracked record, so the case's history shows both sides.
"""

from django.conf import settings
from django.core.validators import MaxValueValidator
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
    QUESTIONNAIRE = "questionnaire", _("Questionnaire answered")


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


# --- The organisation's own questionnaires ----------------------------------------------


class Questionnaire(TrackedModel):
    """A questionnaire of the organisation's own, sent beside the portal's built-in sections.

    Its questions live in versions: a published version is never edited, a change
    publishes the next one, so what a vendor answered always reads against the
    questions it was asked.
    """

    title = models.CharField(_("title"), max_length=200)
    purpose = models.TextField(_("purpose"), max_length=2000, blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("owner"),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["title", "pk"]
        verbose_name = _("questionnaire")
        verbose_name_plural = _("questionnaires")

    def __str__(self) -> str:
        return self.title


class QuestionnaireVersion(TrackedModel):
    """One version of a questionnaire: a draft until published, then never edited."""

    questionnaire = models.ForeignKey(
        Questionnaire,
        on_delete=models.PROTECT,
        related_name="versions",
        verbose_name=_("questionnaire"),
    )
    number = models.PositiveIntegerField(_("version"), validators=[MaxValueValidator(10_000)])
    note = models.CharField(_("what changed"), max_length=500, blank=True)
    published_at = models.DateTimeField(_("published at"), null=True, blank=True)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("published by"),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["questionnaire_id", "-number"]
        verbose_name = _("questionnaire version")
        verbose_name_plural = _("questionnaire versions")
        constraints = [
            models.UniqueConstraint(
                fields=["questionnaire", "number"], name="questionnaire_version_number"
            )
        ]

    def __str__(self) -> str:
        return f"{self.questionnaire.title} v{self.number}"

    @property
    def is_published(self) -> bool:
        return self.published_at is not None


class QuestionKind(models.TextChoices):
    YES_NO = "yes_no", _("Yes or no")
    CHOICE = "choice", _("One choice")
    NUMBER = "number", _("Number")
    DATE = "date", _("Date")
    FILE = "file", _("File")


class Direction(models.TextChoices):
    AT_LEAST = "ge", _("at least")
    AT_MOST = "le", _("at most")


class DateDirection(models.TextChoices):
    NOT_BEFORE = "not_before", _("not before")
    NOT_AFTER = "not_after", _("not after")


class Question(TrackedModel):
    """One question of a version, with the kind of answer it takes and what it expects.

    ``key`` names the question across versions: a question carried unchanged to the next
    version keeps it, so a vendor's earlier answer can be offered again.
    """

    questionnaire_version = models.ForeignKey(
        QuestionnaireVersion,
        on_delete=models.PROTECT,
        related_name="questions",
        verbose_name=_("version"),
    )
    position = models.PositiveSmallIntegerField(
        _("position"), validators=[MaxValueValidator(1_000)]
    )
    key = models.SlugField(_("key"), max_length=60)
    text = models.CharField(_("question"), max_length=500)
    help_text = models.CharField(_("help text"), max_length=500, blank=True)
    kind = models.CharField(_("kind of answer"), max_length=10, choices=QuestionKind.choices)
    required = models.BooleanField(_("required"), default=True)
    # Choices: [{"label": "...", "score": 0..100}], in the order shown.
    options = models.JSONField(_("choices"), default=list, blank=True)
    unit = models.CharField(_("unit"), max_length=30, blank=True)
    min_value = models.DecimalField(
        _("smallest number"), max_digits=18, decimal_places=4, null=True, blank=True
    )
    max_value = models.DecimalField(
        _("largest number"), max_digits=18, decimal_places=4, null=True, blank=True
    )
    weight = models.PositiveSmallIntegerField(
        _("weight"), default=1, validators=[MaxValueValidator(100)]
    )
    expected_yes = models.BooleanField(_("expected answer is yes"), null=True, blank=True)
    threshold = models.DecimalField(
        _("threshold"), max_digits=18, decimal_places=4, null=True, blank=True
    )
    threshold_direction = models.CharField(
        _("threshold direction"), max_length=2, choices=Direction.choices, blank=True
    )
    date_limit = models.DateField(_("date limit"), null=True, blank=True)
    date_direction = models.CharField(
        _("date direction"), max_length=10, choices=DateDirection.choices, blank=True
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["questionnaire_version_id", "position", "pk"]
        verbose_name = _("question")
        verbose_name_plural = _("questions")
        constraints = [
            models.UniqueConstraint(
                fields=["questionnaire_version", "key"], name="question_key_per_version"
            )
        ]

    def __str__(self) -> str:
        return self.text


class SentQuestionnaire(TrackedModel):
    """One published questionnaire version, sent through one invitation, and its answers."""

    invitation = models.ForeignKey(
        VendorInvitation,
        on_delete=models.PROTECT,
        related_name="questionnaires",
        verbose_name=_("invitation"),
    )
    questionnaire_version = models.ForeignKey(
        QuestionnaireVersion,
        on_delete=models.PROTECT,
        related_name="sent",
        verbose_name=_("questionnaire version"),
    )
    submitted_at = models.DateTimeField(_("submitted at"), null=True, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["invitation_id", "pk"]
        verbose_name = _("questionnaire sent to a vendor")
        verbose_name_plural = _("questionnaires sent to vendors")
        constraints = [
            models.UniqueConstraint(
                fields=["invitation", "questionnaire_version"],
                name="questionnaire_once_per_invitation",
            )
        ]

    def __str__(self) -> str:
        return f"{self.questionnaire_version} for {self.invitation.contact_name}"


class QuestionnaireAnswer(TrackedModel):
    """The vendor's answer to one question, as kept: ``value`` in a canonical text
    (``yes``/``no``, the choice's position, a decimal, an ISO date), or a document."""

    sent = models.ForeignKey(
        SentQuestionnaire,
        on_delete=models.PROTECT,
        related_name="answers",
        verbose_name=_("questionnaire"),
    )
    question = models.ForeignKey(
        Question, on_delete=models.PROTECT, related_name="answers", verbose_name=_("question")
    )
    value = models.CharField(_("answer"), max_length=100, blank=True)
    document = models.ForeignKey(
        VendorDocument,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("file"),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["sent_id", "question__position", "pk"]
        verbose_name = _("questionnaire answer")
        verbose_name_plural = _("questionnaire answers")
        constraints = [
            models.UniqueConstraint(fields=["sent", "question"], name="one_answer_per_question")
        ]

    def __str__(self) -> str:
        return f"{self.question.key}: {self.value or self.document_id}"
