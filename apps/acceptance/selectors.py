"""Reads: plans, results, sign-offs and the acceptance state, in a fixed number of queries."""

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db.models import Prefetch
from django.shortcuts import get_object_or_404

from apps.acceptance import rules
from apps.acceptance.measurements import OfferMeasurements, offer_measurements
from apps.acceptance.models import (
    AcceptanceAttachment,
    AcceptancePlan,
    AcceptanceResult,
    AcceptanceSignOff,
    Layer,
)
from apps.approvals.binding import Change, Scope, changes_for
from apps.approvals.models import Approval
from apps.core.downloads import StoredFile

if TYPE_CHECKING:
    # Choice labels are lazy translations, rendered in the reader's language.
    from django.utils.functional import _StrOrPromise


def plan_list_for(actor):
    if not actor.has_perm("acceptance.view_acceptanceplan"):
        return AcceptancePlan.objects.none()
    return AcceptancePlan.objects.select_related("case", "offer__vendor", "created_by")


def plan_get_for(actor, pk: int) -> AcceptancePlan:
    return get_object_or_404(plan_list_for(actor), pk=pk)


def result_list_for(actor):
    if not actor.has_perm("acceptance.view_acceptanceresult"):
        return AcceptanceResult.objects.none()
    return AcceptanceResult.objects.select_related("plan__case", "recorded_by")


def result_get_for(actor, pk: int) -> AcceptanceResult:
    return get_object_or_404(result_list_for(actor), pk=pk)


def attachment_get_for(actor, pk: int) -> AcceptanceAttachment:
    if not actor.has_perm("acceptance.view_acceptanceattachment"):
        queryset = AcceptanceAttachment.objects.none()
    else:
        queryset = AcceptanceAttachment.objects.select_related("plan", "result")
    return get_object_or_404(queryset, pk=pk)


def attachment_stored_file(attachment: AcceptanceAttachment) -> StoredFile:
    """The attachment's bytes as a download sends them, checked against its SHA-256."""
    return StoredFile(
        case_id=attachment.plan.case_id,
        record=f"Acceptance attachment {attachment.name}",
        name=attachment.storage_name,
        sha256=attachment.sha256,
        filename=attachment.name,
        content_type=attachment.content_type,
    )


def case_plans(case) -> list[AcceptancePlan]:
    return list(
        AcceptancePlan.objects.filter(case=case)
        .select_related("case", "offer__vendor")
        .order_by("pk")
    )


def plan_results(plan) -> list[AcceptanceResult]:
    """Every result with its attachments, oldest first (2 queries)."""
    return list(
        AcceptanceResult.objects.filter(plan=plan)
        .select_related("recorded_by")
        .prefetch_related(
            Prefetch(
                "attachments",
                queryset=AcceptanceAttachment.objects.select_related("uploaded_by").order_by("pk"),
            )
        )
        .order_by("performed_at", "pk")
    )


def offer_approval(offer) -> Approval | None:
    """The approval in force for this offer: approved and not superseded.

    Whether it is still fresh is checked when the acceptance is signed off
    (``acceptance_signoff``), not on every read.
    """
    return (
        Approval.objects.filter(
            offer=offer, decision=Approval.Decision.APPROVED, superseded_at__isnull=True
        )
        .select_related("decided_by")
        .first()
    )


def signoff_scopes(plan) -> list[Scope]:
    """What a sign-off sees: the plan, its results and attachments, the offer's evidence and
    decisions. A later row in any of them (a new bundle too) voids it."""
    return [
        Scope("acceptance.acceptanceplan", "id", plan.pk, "acceptance plan"),
        Scope("acceptance.acceptanceresult", "plan_id", plan.pk, "acceptance results"),
        Scope("acceptance.acceptanceattachment", "plan_id", plan.pk, "attachments"),
        Scope("evidence.evidencebundle", "offer_id", plan.offer_id, "evidence of the offer"),
        Scope("approvals.approval", "offer_id", plan.offer_id, "approval of the offer"),
    ]


def plan_criteria(plan) -> rules.PlanCriteria:
    # A plan saved before its versions were checked may hold text that is not a list of
    # them: the criterion says so rather than the page failing.
    try:
        expected, error = rules.parse_versions(plan.expected_versions), ""
    except ValueError as problem:
        expected, error = (), str(problem)
    return rules.PlanCriteria(
        soak_minutes=plan.soak_minutes,
        correctness_pass_pct=plan.correctness_pass_pct,
        ladder=rules.parse_ladder(plan.ladder),
        required_safe_concurrency=plan.required_safe_concurrency,
        fault_minimum=plan.fault_minimum,
        expected_versions=expected,
        expected_versions_error=error,
        training_min_samples_per_s_per_card=plan.training_min_samples_per_s_per_card,
        training_min_scaling_pct=plan.training_min_scaling_pct,
        checkpoint_max_save_s=plan.checkpoint_max_save_s,
        checkpoint_max_restore_s=plan.checkpoint_max_restore_s,
    )


def case_slo(case) -> rules.Slo:
    return rules.Slo(
        p95_ttft_ms=float(case.slo_p95_ttft_ms),
        error_rate_pct=float(case.slo_error_rate_pct),
        peak_memory_pct=float(case.slo_peak_memory_pct),
    )


def result_facts(result: AcceptanceResult) -> rules.ResultFacts:
    return rules.ResultFacts(
        layer=result.layer,
        outcome=result.outcome,
        activity=result.activity,
        fault_kind=result.fault_kind,
        resumed_from_checkpoint=result.resumed_from_checkpoint,
        duplicated_data=result.duplicated_data,
    )


@dataclass
class AcceptanceState:
    plan: AcceptancePlan
    layers: tuple[rules.LayerState, ...]
    overall: str
    measurements: OfferMeasurements
    results: list[AcceptanceResult]
    approval: Approval | None
    signoff: AcceptanceSignOff | None  # the newest sign-off not voided
    signoff_changes: list[Change] = field(default_factory=list)
    signoffs: list[AcceptanceSignOff] = field(default_factory=list)

    @property
    def signed_off(self) -> bool:
        return self.signoff is not None and not self.signoff_changes

    @property
    def accepted(self) -> bool:
        return self.overall == rules.PASSED and self.signed_off and self.approval is not None

    @property
    def safe_level(self) -> int | None:
        performance = self.measurements.performance
        if performance is None:
            return None
        return rules.safe_operating_level(performance.levels, case_slo(self.plan.case))

    @property
    def ladder_rows(self) -> list[tuple[rules.LadderLevel, bool | None]]:
        performance = self.measurements.performance
        if performance is None:
            return []
        slo = case_slo(self.plan.case)
        return [(level, rules.level_holds(level, slo)) for level in performance.levels]

    @property
    def goodput_at_slo(self) -> dict | None:
        """The open-loop rate search's highest rate within the service levels and the goodput
        there, as the offer's verification holds it (None: no rate search held)."""
        headline = getattr(self.measurements.verification, "headline", None) or {}
        goodput = headline.get("goodput_at_slo")
        return goodput if isinstance(goodput, dict) else None

    @property
    def layer_rows(self) -> "list[tuple[_StrOrPromise, rules.LayerState]]":
        titles = dict(Layer.choices)
        return [(titles[layer.layer], layer) for layer in self.layers]

    @property
    def recorders(self) -> set[int]:
        return {r.recorded_by_id for r in self.results}


def acceptance_state(plan: AcceptancePlan) -> AcceptanceState:
    """The four layers, the overall verdict and the sign-off of one plan."""
    measurements = offer_measurements(plan.offer)
    results = plan_results(plan)
    inputs = rules.AcceptanceInputs(
        criteria=plan_criteria(plan),
        slo=case_slo(plan.case),
        soak=measurements.soak,
        correctness=measurements.correctness,
        performance=measurements.performance,
        verification_checks=measurements.verification_checks,
        results=tuple(result_facts(r) for r in results),
        rerun=measurements.rerun,
        versions=measurements.versions,
        training=measurements.training,
    )
    layers = rules.evaluate(inputs)
    signoffs = list(
        AcceptanceSignOff.objects.filter(plan=plan)
        .select_related("signed_by")
        .order_by("-signed_at", "-pk")
    )
    current = next((s for s in signoffs if s.voided_at is None), None)
    changes = changes_for([current]).get(current.pk, []) if current else []
    return AcceptanceState(
        plan=plan,
        layers=layers,
        overall=rules.overall_status(layers),
        measurements=measurements,
        results=results,
        approval=offer_approval(plan.offer),
        signoff=current,
        signoff_changes=changes,
        signoffs=signoffs,
    )


def active_plan(case, plans: list[AcceptancePlan] | None = None) -> AcceptancePlan | None:
    """The plan of the offer the case's decision in force approved, else the newest plan."""
    plans = case_plans(case) if plans is None else plans
    if not plans:
        return None
    approved = (
        Approval.objects.filter(
            case=case, decision=Approval.Decision.APPROVED, superseded_at__isnull=True
        )
        .values_list("offer_id", flat=True)
        .first()
    )
    return next((p for p in plans if p.offer_id == approved), plans[-1])


def acceptance_history_querysets(case) -> list:
    plan_ids = AcceptancePlan.history.filter(case_id=case.pk).values("id")
    return [
        AcceptancePlan.history.filter(case_id=case.pk),
        AcceptanceResult.history.filter(plan_id__in=plan_ids),
        AcceptanceAttachment.history.filter(plan_id__in=plan_ids),
        AcceptanceSignOff.history.filter(plan_id__in=plan_ids),
    ]
