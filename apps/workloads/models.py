"""The case's own workloads: prompt sets for the load test, core sample sets for correctness.

A set is stored byte for byte with its SHA-256 and never changed: a corrected set is
a new version under the same name. The text can be confidential, so it leaves only
through the case's role-checked downloads and the case's harness token; packets and
pages show its digest and statistics, never its lines.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.models import StoredFileRecord, TrackedModel
from apps.workloads import rules


class SetKind(models.TextChoices):
    PROMPTS = rules.PROMPTS, _("Prompt set")
    SAMPLES = rules.SAMPLES, _("Core sample set")


class WorkloadSet(TrackedModel, StoredFileRecord):
    """One version of a case's prompt set or core sample set, stored with its SHA-256."""

    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.PROTECT,
        related_name="workload_sets",
        verbose_name=_("case"),
    )
    kind = models.CharField(_("kind"), max_length=10, choices=SetKind.choices)
    name = models.CharField(_("name"), max_length=100)
    set_version = models.PositiveIntegerField(_("set version"))
    item_count = models.PositiveIntegerField(_("lines"))
    statistics = models.JSONField(_("statistics"), default=dict, blank=True)
    storage_name = models.CharField(_("stored as"), max_length=300, unique=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("uploaded by"),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["case_id", "kind", "name", "-set_version"]
        verbose_name = _("workload set")
        verbose_name_plural = _("workload sets")
        constraints = [
            models.UniqueConstraint(
                fields=["case", "kind", "name", "set_version"], name="workload_set_one_version"
            ),
            models.UniqueConstraint(
                fields=["case", "kind", "sha256"], name="workload_set_one_per_digest"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.set_version}"


class PlanWorkload(TrackedModel):
    """The case's sets an acceptance plan requires: a run of that offer must use them.

    With a set named here, the server refuses the offer's bundles whose load test (prompt
    set) or correctness run (sample set) used other inputs, the built-in ones included.
    """

    plan = models.OneToOneField(
        "acceptance.AcceptancePlan",
        on_delete=models.PROTECT,
        related_name="workload",
        verbose_name=_("acceptance plan"),
    )
    prompt_set = models.ForeignKey(
        WorkloadSet,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("prompt set required"),
    )
    sample_set = models.ForeignKey(
        WorkloadSet,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("core sample set required"),
    )
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("set by"),
    )
    history = HistoricalRecords()

    class Meta:
        verbose_name = _("sets required by an acceptance plan")
        verbose_name_plural = _("sets required by acceptance plans")

    def __str__(self) -> str:
        return f"Sets required by {self.plan}"
