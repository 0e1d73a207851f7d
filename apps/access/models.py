"""The least-privilege access matrix and the network plan of a case (docs/rules/access.md)."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.access.rules import DATA_DEIDENTIFIED, DATA_NONE, DATA_RAW, PERIOD_BOUNDS
from apps.core.bounds import REASON_MAX_LENGTH
from apps.core.models import TrackedModel


def _period_validators(name: str) -> list:
    low, high = PERIOD_BOUNDS[name]
    return [MinValueValidator(low), MaxValueValidator(high)]


class PermissionKind(models.TextChoices):
    """What a permission lets a role do; the SoD rules reason about kinds, not names."""

    CLUSTER_ADMIN = "cluster_admin", _("Cluster administration")
    JOB_SUBMIT = "job_submit", _("Job submission")
    DATA_READ = "data_read", _("Data read")
    DATA_WRITE = "data_write", _("Data write")
    LOG_VIEW = "log_view", _("Log view")
    BILLING_VIEW = "billing_view", _("Billing view")
    OTHER = "other", _("Other")


class ControlStatus(models.TextChoices):
    IN_PLACE = "in_place", _("In place")
    PARTIAL = "partial", _("Partial")
    MISSING = "missing", _("Missing")
    NOT_APPLICABLE = "not_applicable", _("Not applicable")


class AccessMatrix(TrackedModel):
    """Roles × permissions and access controls of one case, reviewed quarterly."""

    case = models.OneToOneField(
        "cases.ProcurementCase", on_delete=models.CASCADE, related_name="access_matrix"
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
    review_by = models.DateField(_("review by"), null=True, blank=True)
    # The periods the controls run on (docs/rules/access.md#access-controls); None = not recorded
    # yet.
    key_rotation_days = models.PositiveIntegerField(
        _("key rotation interval (days)"),
        null=True,
        blank=True,
        validators=_period_validators("key_rotation_days"),
    )
    credential_lifetime_hours = models.PositiveIntegerField(
        _("credential lifetime (hours)"),
        null=True,
        blank=True,
        validators=_period_validators("credential_lifetime_hours"),
    )
    log_retention_days = models.PositiveIntegerField(
        _("log retention (days)"),
        null=True,
        blank=True,
        validators=_period_validators("log_retention_days"),
    )
    history = HistoricalRecords()
    late_history_columns = ("key_rotation_days", "credential_lifetime_hours", "log_retention_days")

    class Meta:
        verbose_name = _("access matrix")
        verbose_name_plural = _("access matrices")
        permissions = [("review_accessmatrix", _("Can mark an access matrix reviewed"))]

    def __str__(self) -> str:
        return f"{self.case} — access matrix"

    def as_data(self):
        """The matrix as plain data for the rules; uses prefetched relations when present."""
        from apps.access.rules import GrantData, MatrixData, PermissionData, RoleData

        roles = sorted(self.roles.all(), key=lambda r: (r.position, r.pk))
        permissions = sorted(self.permissions.all(), key=lambda p: (p.position, p.pk))
        role_keys = {r.pk: r.key for r in roles}
        permission_keys = {p.pk: p.key for p in permissions}
        return MatrixData(
            roles=tuple(RoleData(r.key, r.name, r.is_audit_role) for r in roles),
            permissions=tuple(
                PermissionData(p.key, p.name, p.is_write, p.kind) for p in permissions
            ),
            grants=tuple(
                GrantData(role_keys[g.role_id], permission_keys[g.permission_id], g.justification)
                for g in self.grants_all()
                if g.role_id in role_keys and g.permission_id in permission_keys
            ),
            reviewed_at=self.reviewed_at,
            review_by=self.review_by,
        )

    def periods(self):
        from apps.access.rules import ControlPeriods

        return ControlPeriods(
            key_rotation_days=self.key_rotation_days,
            credential_lifetime_hours=self.credential_lifetime_hours,
            log_retention_days=self.log_retention_days,
        )

    def controls_data(self):
        """The controls as plain data for the rules; uses prefetched relations when present."""
        controls = sorted(self.controls.all(), key=lambda c: (c.position, c.pk))
        return [control.as_data() for control in controls]

    def grants_all(self) -> list["AccessGrant"]:
        return [grant for role in self.roles.all() for grant in role.grants.all()]


class AccessRole(TrackedModel):
    """A row of the matrix: who (platform admin, algorithm engineer, auditor…)."""

    matrix = models.ForeignKey(AccessMatrix, on_delete=models.CASCADE, related_name="roles")
    key = models.SlugField(_("key"), max_length=50)
    name = models.CharField(_("name"), max_length=200)
    is_audit_role = models.BooleanField(
        _("audit role"),
        default=False,
        help_text=_("Audit and compliance roles may hold no write permission."),
    )
    position = models.PositiveIntegerField(_("position"), default=0)
    history = HistoricalRecords()

    class Meta:
        ordering = ["matrix_id", "position", "pk"]
        verbose_name = _("access role")
        constraints = [
            models.UniqueConstraint(fields=["matrix", "key"], name="accessrole_key_per_matrix")
        ]

    def __str__(self) -> str:
        return self.name


class AccessPermission(TrackedModel):
    """A column of the matrix: what (cluster admin, job submit, data write…)."""

    matrix = models.ForeignKey(AccessMatrix, on_delete=models.CASCADE, related_name="permissions")
    key = models.SlugField(_("key"), max_length=50)
    name = models.CharField(_("name"), max_length=200)
    kind = models.CharField(
        _("kind"), max_length=20, choices=PermissionKind.choices, default=PermissionKind.OTHER
    )
    is_write = models.BooleanField(_("write permission"), default=False)
    position = models.PositiveIntegerField(_("position"), default=0)
    history = HistoricalRecords()

    class Meta:
        ordering = ["matrix_id", "position", "pk"]
        verbose_name = _("access permission")
        constraints = [
            models.UniqueConstraint(
                fields=["matrix", "key"], name="accesspermission_key_per_matrix"
            )
        ]

    def __str__(self) -> str:
        return self.name


class AccessGrant(TrackedModel):
    """A ticked cell: this role holds this permission, and why."""

    role = models.ForeignKey(AccessRole, on_delete=models.CASCADE, related_name="grants")
    permission = models.ForeignKey(
        AccessPermission, on_delete=models.CASCADE, related_name="grants"
    )
    justification = models.TextField(_("justification"), max_length=REASON_MAX_LENGTH, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["role_id", "permission_id"]
        verbose_name = _("access grant")
        constraints = [
            models.UniqueConstraint(fields=["role", "permission"], name="accessgrant_one_per_cell")
        ]

    def __str__(self) -> str:
        return f"{self.role_id} × {self.permission_id}"

    def clean(self) -> None:
        if not (self.role_id and self.permission_id):
            return
        if self.role.matrix_id != self.permission.matrix_id:
            raise ValidationError(
                {"permission": _("The role and the permission belong to different matrices.")}
            )


class AccessControl(TrackedModel):
    """One control of docs/rules/access.md#access-controls (MFA entry, short-lived credentials…)
    with its evidence.

    A control not in place may instead carry the tech lead's accepted risk: who,
    why and until when. The acceptance holds through its expiry day only.
    """

    matrix = models.ForeignKey(AccessMatrix, on_delete=models.CASCADE, related_name="controls")
    key = models.SlugField(_("key"), max_length=50)
    title = models.CharField(_("title"), max_length=300)
    status = models.CharField(
        _("status"), max_length=20, choices=ControlStatus.choices, default=ControlStatus.MISSING
    )
    evidence = models.TextField(_("evidence note"), max_length=REASON_MAX_LENGTH, blank=True)
    position = models.PositiveIntegerField(_("position"), default=0)
    risk_reason = models.TextField(
        _("why the risk is accepted"), max_length=REASON_MAX_LENGTH, null=True, blank=True
    )
    risk_expires_on = models.DateField(_("risk accepted until"), null=True, blank=True)
    risk_accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("risk accepted by"),
    )
    risk_accepted_at = models.DateTimeField(_("risk accepted at"), null=True, blank=True)
    history = HistoricalRecords()
    late_history_columns = (
        "risk_reason",
        "risk_expires_on",
        "risk_accepted_by_id",
        "risk_accepted_at",
    )

    class Meta:
        ordering = ["matrix_id", "position", "pk"]
        verbose_name = _("access control")
        constraints = [
            models.UniqueConstraint(fields=["matrix", "key"], name="accesscontrol_key_per_matrix")
        ]
        permissions = [
            ("accept_control_risk", _("Can accept the risk of an access control not in place"))
        ]

    def __str__(self) -> str:
        return self.title

    def as_data(self):
        from apps.access.rules import ControlData

        who = self.risk_accepted_by
        return ControlData(
            key=self.key,
            title=self.title,
            status=self.status,
            status_label=str(self.get_status_display()),
            evidence=self.evidence,
            risk_reason=self.risk_reason or "",
            risk_expires_on=self.risk_expires_on,
            risk_accepted_by=(who.get_full_name() or who.get_username()) if who else "",
        )


class WorkloadType(models.TextChoices):
    ONLINE_INFERENCE = "online_inference", _("Online inference")
    BATCH_INFERENCE = "batch_inference", _("Batch offline inference")
    MULTI_NODE_TRAINING = "multi_node_training", _("Multi-node training")
    DATA_SYNC = "data_sync", _("Data sync")


class LinkChoice(models.TextChoices):
    DEDICATED_LINE = "dedicated_line", _("Dedicated line / cloud interconnect")
    ENCRYPTED_TUNNEL = "encrypted_tunnel", _("Nearby access point + encrypted tunnel")
    PUBLIC_INTERNET = "public_internet", _("Public internet, encrypted, resumable")
    IN_CLUSTER_RDMA = "in_cluster_rdma", _("In-cluster RDMA / same-zone network")


class DataSent(models.TextChoices):
    """What a link sends to the vendor (docs/rules/access.md#data-paths)."""

    NONE = DATA_NONE, _("No data: control and results only")
    DEIDENTIFIED = DATA_DEIDENTIFIED, _("De-identified, synthetic or feature data only")
    RAW = DATA_RAW, _("Raw data, which may include personal information or important data")


class NetworkPlan(TrackedModel):
    """Workload links and the online-inference latency budget of one case
    (docs/rules/access.md#network-plan)."""

    case = models.OneToOneField(
        "cases.ProcurementCase", on_delete=models.CASCADE, related_name="network_plan"
    )
    target_latency_ms = models.DecimalField(
        _("target latency (ms)"),
        max_digits=8,
        decimal_places=1,
        validators=[MinValueValidator(1)],
        help_text=_("What the user may wait for the first token, end to end."),
    )
    user_to_gateway_ms = models.DecimalField(
        _("user → gateway (ms)"),
        max_digits=8,
        decimal_places=1,
        validators=[MinValueValidator(0)],
        help_text=_("The latency budget allows at most 10 ms for this hop."),
    )
    # Typed by hand: the budget uses it only for an offer whose RTT no evidence
    # bundle has measured, and every page labels it an estimate.
    estimated_rtt_ms = models.DecimalField(
        _("estimated RTT gateway → remote service (ms)"),
        max_digits=8,
        decimal_places=1,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text=_(
            "An estimate, used only for an offer whose RTT the harness has not measured yet."
        ),
    )
    rtt_source = models.CharField(
        _("source of the RTT estimate"),
        max_length=300,
        blank=True,
        help_text=_("Where the estimate comes from: tool, from where to where, when."),
    )
    queueing_and_first_token_ms = models.DecimalField(
        _("queueing + first token (ms)"),
        max_digits=8,
        decimal_places=1,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text=_(
            "An estimate, used only for an offer whose load test has not measured the "
            "first-token time yet."
        ),
    )
    multi_node_training_in_one_cluster = models.BooleanField(
        _("multi-node training stays inside one cluster"),
        null=True,
        blank=True,
        help_text=_("Only the control and data planes may cross the public network."),
    )
    notes = models.TextField(_("notes"), max_length=REASON_MAX_LENGTH, blank=True)
    history = HistoricalRecords()

    class Meta:
        verbose_name = _("network plan")

    def __str__(self) -> str:
        return f"{self.case} — network plan"

    def clean(self) -> None:
        if self.estimated_rtt_ms is not None and not self.rtt_source.strip():
            raise ValidationError({"rtt_source": _("Say where the RTT estimate comes from.")})


class WorkloadLink(TrackedModel):
    """One workload type in use, its key metric and the link chosen for it."""

    plan = models.ForeignKey(NetworkPlan, on_delete=models.CASCADE, related_name="links")
    workload = models.CharField(_("workload"), max_length=30, choices=WorkloadType.choices)
    key_metric = models.CharField(_("key metric"), max_length=200)
    link = models.CharField(_("link"), max_length=30, choices=LinkChoice.choices)
    # Held against the data-export assessment (docs/rules/access.md#data-paths). Added after
    # history rows were chained: nullable, and NULL where the plan does not say.
    data_sent = models.CharField(
        _("data sent to the vendor over this link"),
        max_length=20,
        choices=DataSent.choices,
        null=True,
        blank=True,
        help_text=_(
            "Where the data-export assessment says data may not leave, no link may send raw "
            "data, and batch inference, training and data sync must say what they send."
        ),
    )
    notes = models.TextField(_("notes"), max_length=REASON_MAX_LENGTH, blank=True)
    history = HistoricalRecords()
    late_history_columns = ("data_sent",)

    class Meta:
        ordering = ["plan_id", "pk"]
        verbose_name = _("workload link")
        constraints = [
            models.UniqueConstraint(fields=["plan", "workload"], name="workloadlink_one_per_type")
        ]

    def __str__(self) -> str:
        return self.get_workload_display()

    @property
    def data_sent_label(self) -> str:
        """What the link sends, as every page and the packet print it."""
        return str(self.get_data_sent_display()) if self.data_sent else str(_("Not stated"))
