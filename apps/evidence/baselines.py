"""Pinned baselines: the writes (pin, unpin) and the reads (which baseline a bundle is
compared with, and the comparison itself, with its chart).

A tech lead pins a verified bundle as the baseline of an offer, or of the case
(the team's own known-good hardware); pinning another replaces it, and the
replaced one stays in history with why it went. Later runs are compared with the
baseline in force by ``apps.evidence.rules.baseline``, with the tolerances of
the offer's acceptance plan (the rules' defaults where it has none).
"""

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.cases.models import ProcurementCase
from apps.core.services import StateConflict, tracked_create, tracked_update
from apps.evidence.charts import Chart, series_chart
from apps.evidence.models import Baseline, EvidenceBundle
from apps.evidence.rules import baseline as rules

# --- writes -----------------------------------------------------------------------


def _refuse_unless(actor, permission: str, message: str) -> None:
    if not actor.has_perm(permission):
        raise PermissionDenied(message)


def _pinnable(bundle: EvidenceBundle, offer) -> None:
    errors = []
    if offer is not None and offer.case_id != bundle.case_id:
        errors.append(_("The offer belongs to another case."))
    elif offer is not None and bundle.offer_id not in (None, offer.pk):
        errors.append(
            _("This run measured another offer: pin it as that offer's baseline or the case's.")
        )
    if bundle.demo_note:
        errors.append(_("Demo data was never measured: it cannot be a baseline."))
    if not hasattr(bundle, "verification"):
        errors.append(_("The server has not verified this run."))
    if not rules.measured_anything(bundle.summary):
        errors.append(
            _("This run measured no load test, benchmark or correctness answers to compare with.")
        )
    if errors:
        raise ValidationError({"bundle": errors})


def baseline_pin(*, actor, bundle: EvidenceBundle, offer=None, reason: str) -> Baseline:
    """Pin ``bundle`` as the baseline of ``offer`` (of the case without one), replacing the
    one in force there."""
    _refuse_unless(actor, "evidence.add_baseline", _("Only a tech lead pins a baseline."))
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": _("Say why this run is the baseline.")})
    _pinnable(bundle, offer)
    now = timezone.now()
    try:
        with transaction.atomic():
            # One pin at a time per case: the second of two at once finds the first.
            list(
                ProcurementCase.objects.select_for_update()
                .filter(pk=bundle.case_id)
                .values_list("pk", flat=True)
            )
            current = _in_force(bundle.case_id, offer.pk if offer is not None else None)
            if current is not None and current.bundle_id == bundle.pk:
                raise StateConflict({"bundle": [_("This run is already the baseline here.")]})
            if current is not None:
                tracked_update(
                    current,
                    actor=actor,
                    reason=f"Replaced by evidence {bundle.sha256[:12]}",
                    fields={
                        "unpinned_at": now,
                        "unpinned_by": actor,
                        "unpin_reason": _("Replaced: %(reason)s") % {"reason": reason},
                    },
                )
            return tracked_create(
                Baseline,
                actor=actor,
                reason=f"Baseline pinned: {reason}"[:500],
                case_id=bundle.case_id,
                offer=offer,
                bundle=bundle,
                pin_reason=reason,
                pinned_by=actor,
                pinned_at=now,
            )
    except IntegrityError:
        raise StateConflict(
            {"bundle": [_("Someone else pinned a baseline here just now; reload and look.")]}
        ) from None


def baseline_unpin(
    *, actor, baseline: Baseline, reason: str, expected_version: int | None = None
) -> Baseline:
    _refuse_unless(actor, "evidence.change_baseline", _("Only a tech lead unpins a baseline."))
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": _("Say why the baseline is unpinned.")})
    with transaction.atomic():
        current = Baseline.objects.select_for_update().get(pk=baseline.pk)
        if current.unpinned_at is not None:
            raise StateConflict({"baseline": [_("This baseline is already unpinned.")]})
        return tracked_update(
            current,
            actor=actor,
            reason=f"Baseline unpinned: {reason}"[:500],
            fields={"unpinned_at": timezone.now(), "unpinned_by": actor, "unpin_reason": reason},
            expected_version=expected_version,
        )


# --- reads ------------------------------------------------------------------------


def baseline_list_for(actor) -> QuerySet[Baseline]:
    if not actor.has_perm("evidence.view_baseline"):
        return Baseline.objects.none()
    return Baseline.objects.select_related(
        "case", "offer__vendor", "bundle", "pinned_by", "unpinned_by"
    ).defer("bundle__summary", "bundle__client_summary_disagreements")


def baseline_get_for(actor, pk: int) -> Baseline:
    return get_object_or_404(baseline_list_for(actor), pk=pk)


def _in_force(case_id: int, offer_id: int | None) -> Baseline | None:
    in_force = Baseline.objects.filter(case_id=case_id, unpinned_at__isnull=True)
    if offer_id is None:
        in_force = in_force.filter(offer__isnull=True)
    else:
        in_force = in_force.filter(offer_id=offer_id)
    return in_force.select_related("offer__vendor", "bundle", "pinned_by").first()


def baseline_in_force(*, case_id: int, offer_id: int | None) -> Baseline | None:
    """The offer's own baseline, else the case's (the team's own known-good run); one query."""
    scope = (
        Q(offer__isnull=True) if offer_id is None else Q(offer__isnull=True) | Q(offer_id=offer_id)
    )
    found = list(
        Baseline.objects.filter(scope, case_id=case_id, unpinned_at__isnull=True).select_related(
            "offer__vendor", "bundle", "pinned_by"
        )
    )
    return next((b for b in found if b.offer_id is not None), None) or next(iter(found), None)


def case_baselines(case) -> list[Baseline]:
    """Every baseline of the case, in force and past, newest first."""
    return list(
        Baseline.objects.filter(case=case)
        .select_related("offer__vendor", "bundle", "pinned_by", "unpinned_by")
        .defer("bundle__summary", "bundle__client_summary_disagreements")
        .order_by("-pinned_at", "-pk")
    )


def tolerances_for(offer) -> rules.Tolerances:
    """The tolerances of the offer's acceptance plan (``AcceptancePlan.baseline_tolerances``,
    read through the offer: the acceptance reads evidence, not the other way); the rules'
    defaults where the offer has no plan."""
    plan = getattr(offer, "acceptance_plan", None) if offer is not None else None
    if plan is None:
        return rules.Tolerances()
    return plan.baseline_tolerances


def _later(bundle: EvidenceBundle, than: EvidenceBundle) -> bool:
    return (bundle.received_at, bundle.pk) > (than.received_at, than.pk)


NO_BASELINE, IS_BASELINE, OLDER, COMPARED = "no_baseline", "is_baseline", "older", "compared"


@dataclass(frozen=True)
class BundleComparison:
    """Where a bundle stands against the baseline it is compared with."""

    state: str
    baseline: Baseline | None = None
    comparison: rules.Comparison | None = None

    @property
    def charts(self) -> list[Chart]:
        return comparison_charts(self.comparison) if self.comparison else []


def comparison_for_bundle(bundle: EvidenceBundle) -> BundleComparison:
    """The bundle against the baseline in force for its offer (or case); a bundle received
    before the baseline is not compared with it."""
    baseline = baseline_in_force(case_id=bundle.case_id, offer_id=bundle.offer_id)
    if baseline is None:
        return BundleComparison(NO_BASELINE)
    if baseline.bundle_id == bundle.pk:
        return BundleComparison(IS_BASELINE, baseline)
    if not _later(bundle, baseline.bundle):
        return BundleComparison(OLDER, baseline)
    comparison = rules.compare(
        baseline.bundle.summary, bundle.summary, tolerances_for(bundle.offer)
    )
    return BundleComparison(COMPARED, baseline, comparison)


@dataclass(frozen=True)
class Rerun:
    """The newest run of an offer after its baseline, compared with it."""

    baseline: Baseline | None
    bundle: EvidenceBundle | None
    comparison: rules.Comparison | None


def offer_rerun(offer, tolerances: rules.Tolerances) -> Rerun:
    """The acceptance's re-run after maintenance: the offer's newest bundle received after
    its baseline that measured something to compare."""
    baseline = baseline_in_force(case_id=offer.case_id, offer_id=offer.pk)
    if baseline is None:
        return Rerun(None, None, None)
    candidates = (
        EvidenceBundle.objects.filter(offer=offer, received_at__gte=baseline.bundle.received_at)
        .exclude(pk=baseline.bundle_id)
        .order_by("-received_at", "-pk")
    )
    for bundle in candidates:
        if _later(bundle, baseline.bundle) and rules.measured_anything(bundle.summary):
            comparison = rules.compare(baseline.bundle.summary, bundle.summary, tolerances)
            return Rerun(baseline, bundle, comparison)
    return Rerun(baseline, None, None)


CHART_GROUPS = (rules.THROUGHPUT, rules.TTFT, rules.TPOT)


def comparison_charts(comparison: rules.Comparison) -> list[Chart]:
    """Baseline and this run against concurrency: throughput, P95 TTFT and P50 TPOT."""
    titles = {
        rules.THROUGHPUT: _("Output tokens/s"),
        rules.TTFT: _("P95 time to first token (ms)"),
        rules.TPOT: _("P50 time per output token (ms)"),
    }
    charts = []
    for group in CHART_GROUPS:
        rows = comparison.group_rows(group)
        chart = series_chart(
            f"baseline-{group}",
            titles[group],
            {
                _("baseline"): [(int(r.where), r.baseline) for r in rows if r.baseline is not None],
                _("this run"): [(int(r.where), r.new) for r in rows if r.new is not None],
            },
        )
        if chart is not None:
            charts.append(chart)
    return charts
