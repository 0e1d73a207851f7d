"""Approval decisions bound to the state they judged, and sent reminders
(docs/rules/approvals.md)."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.models import TrackedModel
from apps.core.roles import Role

# A decision's comment, an acceptance's reason and a withdrawal's, as pages and API take them.
DECISION_TEXT_MAX_LENGTH = 4_000
# The furthest ahead the deadline of an approval subject to acceptance may be set.
CONDITION_MAX_DAYS = 180


class AcceptanceCondition(models.TextChoices):
    """What an approval subject to acceptance leaves to be measured on the rented machine
    (docs/rules/approvals.md#approval-subject-to-acceptance)."""

    IDENTITY = "identity", _("Hardware identity: a passing spec verification")
    PERFORMANCE = "performance", _("Performance baseline")
    SOAK = "soak", _("Soak, connectivity and environment")
    CORRECTNESS = "correctness", _("Correctness")


def condition_labels(keys) -> list[str]:
    """The conditions' names, in their fixed order, for pages, e-mails and the packet."""
    return [str(c.label) for c in AcceptanceCondition if c.value in (keys or ())]


class Approval(TrackedModel):
    """A tech lead's decision on a case's offer, with the gates and record versions it relied on.

    Under an approval policy it is written when the chain ends: the tech lead's approval
    once every step has its quorum, or the rejection of whoever rejected at a later step.

    Never deleted: a rejected, stale or superseded decision stays on record.
    ``bound_state`` holds ``records`` (model, field, value, history_id, label:
    the newest history row of each record or group of records the gates read)
    and ``evidence`` (bundle pk and SHA-256); any later history row in one of
    them makes an approval stale.
    """

    class Decision(models.TextChoices):
        APPROVED = "approved", _("Approved")
        REJECTED = "rejected", _("Rejected")

    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.PROTECT,
        related_name="approvals",
        verbose_name=_("case"),
    )
    offer = models.ForeignKey(
        "offers.Offer",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="approvals",
        verbose_name=_("offer"),
    )
    decision = models.CharField(_("decision"), max_length=20, choices=Decision.choices)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("decided by"),
    )
    decided_at = models.DateTimeField(_("decided at"))
    comment = models.TextField(_("comment"), max_length=DECISION_TEXT_MAX_LENGTH)
    gates = models.JSONField(_("gates at the decision"), default=list, blank=True)
    bound_state = models.JSONField(_("bound state"), default=dict, blank=True)
    stale_at = models.DateTimeField(_("found stale at"), null=True, blank=True)
    stale_changes = models.JSONField(_("what changed"), default=list, blank=True)
    superseded_by = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("superseded by"),
    )
    superseded_at = models.DateTimeField(_("superseded at"), null=True, blank=True)
    # An approval subject to acceptance: what is still to be measured (NULL: approved
    # without conditions), by when, and how it ended — met, or lapsed with the reason.
    conditions = models.JSONField(_("subject to acceptance of"), null=True, blank=True)
    condition_deadline = models.DateField(_("acceptance due by"), null=True, blank=True)
    condition_met_at = models.DateTimeField(_("acceptance condition met at"), null=True, blank=True)
    lapsed_at = models.DateTimeField(_("lapsed at"), null=True, blank=True)
    lapse_reason = models.TextField(_("why it lapsed"), null=True, blank=True)
    history = HistoricalRecords()
    late_history_columns = (
        "conditions",
        "condition_deadline",
        "condition_met_at",
        "lapsed_at",
        "lapse_reason",
    )

    class Meta:
        ordering = ["-decided_at", "-pk"]
        verbose_name = _("approval decision")
        verbose_name_plural = _("approval decisions")
        permissions = [
            ("submit_approval", _("Can submit a case for approval")),
            ("decide_approval", _("Can approve or reject a case")),
        ]

    def __str__(self) -> str:
        return f"{self.get_decision_display()} — {self.case} ({self.decided_at:%Y-%m-%d})"

    @property
    def current(self) -> bool:
        return self.superseded_at is None

    @property
    def conditional(self) -> bool:
        return bool(self.conditions)

    @property
    def condition_open(self) -> bool:
        """Approved subject to acceptance, and the acceptance neither passed nor lapsed."""
        return self.conditional and self.condition_met_at is None and self.lapsed_at is None

    @property
    def condition_names(self) -> list[str]:
        return condition_labels(self.conditions)


class Reminder(TrackedModel):
    """One reminder sent for one item at one threshold; the unique key makes sending idempotent."""

    class Kind(models.TextChoices):
        ASSESSMENT_REVIEW = "assessment_review", _("Data-export assessment review")
        MATRIX_REVIEW = "matrix_review", _("Access-matrix review")
        CONTRACT_RENEWAL = "contract_renewal", _("Contract renewal")
        TOKEN_EXPIRY = "token_expiry", _("Harness token expiry")

    kind = models.CharField(_("kind"), max_length=30, choices=Kind.choices)
    object_model = models.CharField(_("record type"), max_length=100)
    object_pk = models.PositiveBigIntegerField(_("record id"))
    due_on = models.DateField(_("due on"))
    # Days ahead of the due date; 0 means overdue.
    threshold = models.PositiveSmallIntegerField(_("threshold (days ahead)"))
    label = models.CharField(_("item"), max_length=300)
    recipients = models.JSONField(_("sent to"), default=list, blank=True)
    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("case"),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("reminder")
        verbose_name_plural = _("reminders")
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "object_model", "object_pk", "due_on", "threshold"],
                name="reminder_once_per_item_due_date_threshold",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.label} ({self.threshold} d)"


class FindingAcceptance(TrackedModel):
    """One owner's acceptance of one finding of the case's register (docs/rules/findings.md).

    Keyed by the finding's rule code, offer (none: the whole case) and key; it holds
    only for the ``facts`` it was given on, up to and including ``expires_on``, and
    until it is withdrawn. Never deleted: a withdrawn or expired acceptance stays on
    record, and each step is a row in the history.
    """

    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.PROTECT,
        related_name="finding_acceptances",
        verbose_name=_("case"),
    )
    offer = models.ForeignKey(
        "offers.Offer",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="finding_acceptances",
        verbose_name=_("offer"),
    )
    code = models.CharField(_("finding"), max_length=100)
    # Which of several findings of one rule on one subject: a contract term, a field.
    finding_key = models.CharField(_("finding key"), max_length=100, blank=True)
    role = models.CharField(_("accepted as"), max_length=40, choices=Role.choices)
    facts = models.TextField(_("facts accepted"))
    message = models.TextField(_("finding as accepted"))
    justification = models.TextField(
        _("reason for the acceptance"), max_length=DECISION_TEXT_MAX_LENGTH
    )
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("accepted by"),
    )
    accepted_at = models.DateTimeField(_("accepted at"))
    expires_on = models.DateField(_("expires on"))
    expired_at = models.DateTimeField(_("recorded as expired at"), null=True, blank=True)
    withdrawn_at = models.DateTimeField(_("withdrawn at"), null=True, blank=True)
    withdrawn_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("withdrawn by"),
    )
    withdraw_reason = models.TextField(
        _("why it was withdrawn"), max_length=DECISION_TEXT_MAX_LENGTH, blank=True
    )
    # The document the rule asks the acceptance to carry, stored once under a name the
    # server makes, with its SHA-256; empty where the rule asks for none.
    # The columns came after history rows were chained, so they are nullable (NULL: none).
    evidence_name = models.CharField(_("attached document"), max_length=200, null=True, blank=True)
    evidence_content_type = models.CharField(
        _("document type"), max_length=100, null=True, blank=True
    )
    evidence_size_bytes = models.PositiveBigIntegerField(
        _("document size (bytes)"), null=True, blank=True
    )
    evidence_sha256 = models.CharField(_("document SHA-256"), max_length=64, null=True, blank=True)
    evidence_storage_name = models.CharField(
        _("document stored as"), max_length=300, null=True, blank=True
    )
    history = HistoricalRecords()
    late_history_columns = (
        "evidence_name",
        "evidence_content_type",
        "evidence_size_bytes",
        "evidence_sha256",
        "evidence_storage_name",
    )

    class Meta:
        ordering = ["-accepted_at", "-pk"]
        verbose_name = _("finding acceptance")
        verbose_name_plural = _("finding acceptances")
        indexes = [models.Index(fields=["case", "code"], name="approvals_acceptance_case")]

    def __str__(self) -> str:
        return f"{self.code} accepted by {self.accepted_by} ({self.accepted_at:%Y-%m-%d})"


# The longest item key My work makes ("finding:<code>:<offer>:<key>").
ITEM_KEY_MAX_LENGTH = 200


class WorkAssignment(TrackedModel):
    """One item of My work given to one person, with a date it is due by.

    Keyed by the case and the item's stable key (``apps.casework.worklist``): the item
    itself is worked out from the case's records, never stored. Without an assignee the
    item is the whole role's again. Overdue, it is shown to the lead of the role as well
    (docs/rules/my-work.md).
    """

    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.CASCADE,
        related_name="work_assignments",
        verbose_name=_("case"),
    )
    item_key = models.CharField(_("item"), max_length=ITEM_KEY_MAX_LENGTH)
    role = models.CharField(_("role"), max_length=30, choices=Role.choices)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("assigned to"),
    )
    due_on = models.DateField(_("due by"), null=True, blank=True)
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("assigned by"),
    )
    # The due date the assignee was last told of as near, and as passed: bookkeeping of
    # the notices (written without history), so each is sent once per due date.
    due_soon_told_for = models.DateField(_("told due soon for"), null=True, blank=True)
    overdue_told_for = models.DateField(_("told overdue for"), null=True, blank=True)
    history = HistoricalRecords(excluded_fields=["due_soon_told_for", "overdue_told_for"])

    class Meta:
        ordering = ["case_id", "item_key"]
        verbose_name = _("assignment of work")
        verbose_name_plural = _("assignments of work")
        constraints = [
            models.UniqueConstraint(fields=["case", "item_key"], name="assignment_one_per_item")
        ]

    def __str__(self) -> str:
        return f"{self.item_key} of case #{self.case_id}"


class ApprovalPolicy(TrackedModel):
    """Who approves a case after its tech lead, set by an administrator
    (docs/rules/approvals.md#approval-chains).

    The tech lead's decision on the gates is always the first step; the policy's steps
    follow it. At most one policy is in force at a time. A chain copies the steps as they
    applied when it started, so an edit changes no chain already running.
    """

    name = models.CharField(_("name"), max_length=200)
    description = models.TextField(
        _("description"), max_length=DECISION_TEXT_MAX_LENGTH, blank=True
    )
    in_force = models.BooleanField(_("in force"), default=False)
    history = HistoricalRecords()

    class Meta:
        ordering = ["name", "pk"]
        verbose_name = _("approval policy")
        verbose_name_plural = _("approval policies")
        constraints = [
            models.UniqueConstraint(
                fields=["in_force"],
                condition=models.Q(in_force=True),
                name="approval_policy_one_in_force",
            )
        ]

    def __str__(self) -> str:
        return self.name


# A step's quorum: how many of its approvers must approve.
QUORUM_MAX = 10
# The highest order number, term (months) and step position a policy takes.
ORDER_MAX = 1000


class PolicyStep(TrackedModel):
    """One step of a policy: a role's holders, or one named person, and how many of them
    approve. Steps of one order number run side by side; a higher number waits for every
    lower one. Each condition left empty holds; the step applies when all of its hold."""

    policy = models.ForeignKey(
        ApprovalPolicy, on_delete=models.PROTECT, related_name="steps", verbose_name=_("policy")
    )
    order = models.PositiveSmallIntegerField(
        _("order"),
        validators=[MaxValueValidator(ORDER_MAX)],
        help_text=_("Steps with the same number run in parallel."),
    )
    label = models.CharField(_("name"), max_length=200)
    role = models.CharField(_("role"), max_length=30, choices=Role.choices, blank=True)
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("named person"),
    )
    quorum = models.PositiveSmallIntegerField(
        _("approvals needed"),
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(QUORUM_MAX)],
    )
    # Conditions on the offer the tech lead approved (docs/rules/approvals.md).
    value_above = models.DecimalField(
        _("contract value above"), max_digits=16, decimal_places=2, null=True, blank=True
    )
    value_currency = models.CharField(_("in currency"), max_length=3, blank=True)
    if_prepayment = models.BooleanField(_("only if a prepayment is asked"), default=False)
    term_above_months = models.PositiveSmallIntegerField(
        _("only if the term is longer than (months)"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(ORDER_MAX)],
    )
    finding_code = models.CharField(
        _("only if this finding is on the register"), max_length=100, blank=True
    )
    if_personal_data = models.BooleanField(_("only if personal data is handled"), default=False)
    history = HistoricalRecords()

    class Meta:
        ordering = ["policy_id", "order", "pk"]
        verbose_name = _("policy step")
        verbose_name_plural = _("policy steps")

    def __str__(self) -> str:
        return f"{self.order}. {self.label}"

    def clean(self) -> None:
        errors: dict[str, object] = {}
        if bool(self.role) == bool(self.person_id):
            errors["role"] = _("Name a role or one person, not both.")
        if self.quorum < 1 or self.quorum > QUORUM_MAX:
            errors["quorum"] = _("Between 1 and %(most)s approvals.") % {"most": QUORUM_MAX}
        elif self.person_id and self.quorum != 1:
            errors["quorum"] = _("A step of one named person needs one approval.")
        if self.value_currency and self.value_above is None:
            errors["value_above"] = _("Give the amount the currency is for.")
        if self.value_above is not None and self.value_above < 0:
            errors["value_above"] = _("The amount cannot be negative.")
        if errors:
            raise ValidationError(errors)


class Delegation(TrackedModel):
    """One person's approvals handed to another from one day to another, both included."""

    delegator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("who delegates"),
    )
    delegate = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("delegated to"),
    )
    starts_on = models.DateField(_("from"))
    ends_on = models.DateField(_("until"))
    note = models.CharField(_("why"), max_length=500)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-starts_on", "-pk"]
        verbose_name = _("delegation of approvals")
        verbose_name_plural = _("delegations of approvals")

    def __str__(self) -> str:
        return f"{self.delegator} → {self.delegate} ({self.starts_on} – {self.ends_on})"

    def clean(self) -> None:
        errors: dict[str, object] = {}
        if self.delegator_id and self.delegator_id == self.delegate_id:
            errors["delegate"] = _("A person cannot delegate to themselves.")
        if self.starts_on and self.ends_on and self.ends_on < self.starts_on:
            errors["ends_on"] = _("The last day comes before the first.")
        if errors:
            raise ValidationError(errors)


class ApprovalChain(TrackedModel):
    """The steps a case's approval runs through after its tech lead approved an offer.

    ``snapshot`` is the policy as it applied when the chain started (each step, its
    conditions, whether it applied and why), and the facts the conditions read; the
    chain runs as snapshotted. The tech lead's decision waits here (``gates``,
    ``bound_state``) and becomes the case's approval once every step has its quorum.
    """

    class State(models.TextChoices):
        RUNNING = "running", _("Running")
        APPROVED = "approved", _("Approved")
        REJECTED = "rejected", _("Rejected")

    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.PROTECT,
        related_name="approval_chains",
        verbose_name=_("case"),
    )
    offer = models.ForeignKey(
        "offers.Offer",
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("offer"),
    )
    policy = models.ForeignKey(
        ApprovalPolicy,
        on_delete=models.PROTECT,
        related_name="chains",
        verbose_name=_("policy"),
    )
    snapshot = models.JSONField(_("policy as applied"), default=dict)
    state = models.CharField(
        _("state"), max_length=20, choices=State.choices, default=State.RUNNING
    )
    tech_lead = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("tech lead"),
    )
    tech_lead_at = models.DateTimeField(_("tech lead decided at"))
    tech_lead_comment = models.TextField(
        _("tech lead's comment"), max_length=DECISION_TEXT_MAX_LENGTH
    )
    gates = models.JSONField(_("gates at the decision"), default=list, blank=True)
    bound_state = models.JSONField(_("bound state"), default=dict, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)
    approval = models.ForeignKey(
        Approval,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("decision it ended in"),
    )
    # The tech lead approved subject to acceptance: the approval the chain ends in
    # carries these (NULL: without conditions).
    conditions = models.JSONField(_("subject to acceptance of"), null=True, blank=True)
    condition_deadline = models.DateField(_("acceptance due by"), null=True, blank=True)
    history = HistoricalRecords()
    late_history_columns = ("conditions", "condition_deadline")

    @property
    def condition_names(self) -> list[str]:
        return condition_labels(self.conditions)

    class Meta:
        ordering = ["-tech_lead_at", "-pk"]
        verbose_name = _("approval chain")
        verbose_name_plural = _("approval chains")
        constraints = [
            models.UniqueConstraint(
                fields=["case"],
                condition=models.Q(state="running"),
                name="approval_chain_one_running_per_case",
            )
        ]

    def __str__(self) -> str:
        return f"{self.snapshot.get('policy', '')} — {self.case} ({self.get_state_display()})"


class ChainDecision(TrackedModel):
    """One person's approval or rejection at one step of a chain; never twice one person
    in one chain."""

    chain = models.ForeignKey(
        ApprovalChain,
        on_delete=models.PROTECT,
        related_name="decisions",
        verbose_name=_("chain"),
    )
    step = models.PositiveSmallIntegerField(
        _("step (position in the chain)"), validators=[MaxValueValidator(ORDER_MAX)]
    )
    decision = models.CharField(_("decision"), max_length=20, choices=Approval.Decision.choices)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("decided by"),
    )
    on_behalf_of = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("on behalf of"),
    )
    decided_at = models.DateTimeField(_("decided at"))
    comment = models.TextField(_("comment"), max_length=DECISION_TEXT_MAX_LENGTH)
    history = HistoricalRecords()

    class Meta:
        ordering = ["chain_id", "decided_at", "pk"]
        verbose_name = _("chain decision")
        verbose_name_plural = _("chain decisions")
        constraints = [
            models.UniqueConstraint(
                fields=["chain", "decided_by"], name="chain_decision_once_per_person"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_decision_display()} at step {self.step} by {self.decided_by}"
