"""Gather what the approval gates read, for every offer of a case, in a fixed number of
queries.

The gates are pure rules of the approvals app (``apps.approvals.gates``); what they
read comes from every area (the clause checklist, the data-export assessment, the
access matrix, the verification, the sizing and the comparison), so it is gathered
here, in the whole-case layer, and registered with the approvals app when the layer is
ready (``apps.approvals.gathering``). Besides the inputs, each offer gets the list of
records the gates relied on (``Scope``s), which a decision binds itself to.
"""

from collections.abc import Sequence

from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.access import selectors as access_selectors
from apps.access.rules import matrix_state
from apps.approvals.binding import Scope
from apps.approvals.findings import bind_gates, gate_findings, judge
from apps.approvals.gates import (
    AssessmentFacts,
    ChecklistFacts,
    DemandFitFacts,
    GateInputs,
    MatrixFacts,
    OfferMinimumFacts,
    SpecFacts,
    VerificationFacts,
    evaluate_gates,
)
from apps.approvals.selectors import OfferGates, acceptance_facts
from apps.assessments import rules as assessment_rules
from apps.assessments import selectors as assessments_selectors
from apps.cases.selectors import offer_minimum_status
from apps.casework.findings import AreaFindings, AreaRecords
from apps.contracts import selectors as contracts_selectors
from apps.evidence import selectors as evidence_selectors
from apps.offers.models import Offer
from apps.offers.selectors import offers_of_case
from apps.scorecards.selectors import case_comparison, not_comparable_reasons
from apps.sizing.selectors import demand_of, demand_result


def verification_max_age_days() -> int:
    return settings.APPROVAL_VERIFICATION_MAX_AGE_DAYS


def _url(name: str, *args) -> str:
    return reverse(name, args=args)


class _CaseRecords:
    """Loads each app's records of a case once; queries do not grow with offers."""

    def __init__(self, case) -> None:
        self.case = case
        self.now = timezone.now()
        self.today = timezone.localdate()
        self.contracts = contracts_selectors
        self.assessments = assessments_selectors
        self.access = access_selectors
        self.evidence = evidence_selectors
        self.red_flags = {entry.offer.pk: entry for entry in self.contracts.case_red_flags(case)}
        self.case_assessments = self.assessments.case_assessments(case)
        self.matrix = self.access.access_matrix_of(case)
        self.verifications = self._latest_verifications()

    def _latest_verifications(self) -> dict:
        return self.evidence.case_verifications(self.case)

    # --- one slice per gate -------------------------------------------------

    def checklist(self, offer, scopes: list[Scope]) -> ChecklistFacts:
        url = _url("contracts:checklist", offer.pk)
        entry = self.red_flags.get(offer.pk)
        if entry is None or entry.checklist is None:
            return ChecklistFacts(exists=False, url=url)
        scopes.append(Scope("contracts.clausechecklist", "id", entry.checklist.pk, str(entry)))
        scopes.append(
            Scope("contracts.checklistitem", "checklist_id", entry.checklist.pk, "clause items")
        )
        waived = []
        for row in entry.rows:
            scopes.append(
                Scope("contracts.redflagwaiver", "item_id", row.item.pk, f"waivers of {row.item}")
            )
            waiver, line = row.current_waiver, row.current_line
            if waiver is not None and line is not None:
                who = waiver.waived_by.get_full_name() or waiver.waived_by.get_username()
                waived.append(
                    _("%(item)s: %(reason)s (%(who)s; in force until %(date)s)")
                    % {
                        "item": row.item,
                        "reason": waiver.justification,
                        "who": who,
                        "date": line.expires_on.isoformat(),
                    }
                )
        summary = entry.summary
        return ChecklistFacts(
            exists=True,
            # Each as the case page and the packet name it, with why its waiver does not count.
            red_flags=tuple(entry.open_labels),
            not_reviewed=tuple(f"{f.number}. {f.title}" for f in summary.not_reviewed),
            waived=tuple(waived),
            url=url,
        )

    def assessment(self, offer, scopes: list[Scope]) -> AssessmentFacts:
        case_level = next((a for a in self.case_assessments if a.offer_id is None), None)
        own = next((a for a in self.case_assessments if a.offer_id == offer.pk), None)
        governing = assessment_rules.governing_assessment(
            case_assessment=case_level,
            offer_assessment=own,
            vendor_jurisdiction=offer.vendor.jurisdiction,
        )
        if governing is None:
            # The case's own assessment does not cover this vendor: this offer is assessed.
            start = _url("assessments:create", self.case.pk)
            if case_level is not None:
                start += f"?offer={offer.pk}"
            return AssessmentFacts(exists=False, url=start)
        scopes.append(Scope("assessments.dataexportassessment", "id", governing.pk, "assessment"))
        scopes.append(
            Scope("assessments.assessmentanswer", "assessment_id", governing.pk, "answers")
        )
        # The register reads its data inventory and model-weight files (their audit facts,
        # docs/rules/data-export.md#audit-facts): a change to them is a change to what was judged.
        scopes.append(
            Scope("assessments.exporteddataset", "assessment_id", governing.pk, "data inventory")
        )
        scopes.append(
            Scope("assessments.modelweightfile", "assessment_id", governing.pk, "model weights")
        )
        state = assessment_rules.assessment_state(governing, self.today)
        answers = governing.answer_map()
        aid = assessment_rules.prc_aid(answers, on=self.today)
        mechanism = assessment_rules.mechanism_check(
            aid, assessment_rules.stated_status(governing), today=self.today
        )
        regimes = assessment_rules.regime_conclusions(answers, aid=aid)
        return AssessmentFacts(
            exists=True,
            signed_off=state.signed_off,
            expired=state.expired,
            review_by=state.review_by,
            exit_answered=assessment_rules.exit_readiness_answered(governing),
            exit_gaps=tuple(assessment_rules.exit_hard_gaps(answers, self.case.exit_window_days)),
            hardware_gaps=tuple(assessment_rules.hardware_hard_gaps(answers)),
            contradiction=assessment_rules.export_contradiction(answers),
            mechanism_held=mechanism.held,
            mechanism_text=mechanism.text,
            regime_problems=tuple(assessment_rules.regime_problems(regimes)),
            regime_text=assessment_rules.applicable_transfer_regimes(regimes),
            url=_url("assessments:detail", governing.pk),
        )

    def matrix_facts(self, scopes: list[Scope]) -> MatrixFacts:
        url = _url("access:matrix", self.case.pk)
        matrix = self.matrix
        if matrix is None:
            return MatrixFacts(exists=False, url=url)
        scopes.append(Scope("access.accessmatrix", "id", matrix.pk, "access matrix"))
        scopes.append(Scope("access.accessrole", "matrix_id", matrix.pk, "access roles"))
        scopes.append(Scope("access.accesspermission", "matrix_id", matrix.pk, "permissions"))
        scopes.append(Scope("access.accesscontrol", "matrix_id", matrix.pk, "access controls"))
        for role in matrix.roles.all():
            scopes.append(Scope("access.accessgrant", "role_id", role.pk, f"grants of {role}"))
        state = matrix_state(matrix, self.today)
        controls = self.access.access_controls_state(matrix, self.today)
        return MatrixFacts(
            exists=True,
            reviewed=state.reviewed,
            expired=state.expired,
            review_by=matrix.review_by,
            violations=tuple(str(v.message) for v in state.violations),
            control_gaps=tuple(gap.message for gap in controls.gaps),
            risk_acceptances=tuple(
                a.message for a in controls.acceptances if a.relied_on and not a.expired
            ),
            url=url + "#controls" if controls.gaps and not state.violations else url,
        )

    def verification(self, offer, scopes: list[Scope], evidence: list[dict]):
        url = _url("evidence:case", self.case.pk)
        latest = self.verifications.get(offer.pk)
        if latest is None:
            # The first verification recorded is a change to what the gate read.
            scopes.append(Scope("evidence.specverification", "offer_id", offer.pk, "verifications"))
            return VerificationFacts(exists=False, url=url)
        # Bound to the composed verification and the bundles its parts come from, never to
        # the offer's later uploads as such: a later bundle makes a decision stale only
        # where it changes a value the decision relied on (``binding.changes_for``).
        scopes.append(Scope("evidence.specverification", "id", latest.pk, "verification"))
        for source in self.evidence.verification_sources(latest):
            if any(e["bundle"] == source.bundle_id for e in evidence):
                continue
            label = f"evidence {source.short}"
            scopes.append(Scope("evidence.evidencebundle", "id", source.bundle_id, label))
            evidence.append({"bundle": source.bundle_id, "sha256": source.sha256})
        return VerificationFacts(
            exists=True,
            verdict=latest.verdict,
            verdict_label=str(latest.get_verdict_display()),
            verdict_passing=latest.verdict in self.evidence.PASSING_VERDICTS,
            measured_at=self.evidence.verification_age_basis(latest),
            url=_url("evidence:detail", latest.bundle_id) or url,
            blocked=tuple(self.evidence.blocking_reasons(latest)),
            verification_id=latest.pk,
            **_security_facts(self.evidence.endpoint_security(latest, _tokens_scoped(offer))),
        )


def _tokens_scoped(offer) -> bool | None:
    """What the offer's declared spec says of its API tokens (None: not stated)."""
    spec = getattr(offer, "declared_spec", None)
    return spec.tokens_scoped if spec is not None else None


def _probe_line(check: dict, *, seen: bool) -> str:
    """A probe as the gate names it: its title, and what it saw or why it is missing."""
    # The check's stored title, translated where the catalogue has it.
    title = _(check["title"]) if check.get("title") else (check.get("key") or "—")
    if seen and check.get("measured"):
        return _("%(probe)s (answered %(seen)s; expected %(expected)s)") % {
            "probe": title,
            "seen": check.get("measured"),
            "expected": check.get("expected") or "—",
        }
    detail = str(check.get("detail") or "").removeprefix("Not run: ").rstrip(".")
    return f"{title} ({detail})" if detail else title


def _security_facts(state) -> dict:
    return {
        "security_failed": tuple(_probe_line(c, seen=True) for c in state.failed),
        "security_missing": tuple(_probe_line(c, seen=False) for c in state.missing),
        "security_not_run": tuple(_probe_line(c, seen=False) for c in state.not_run),
        "security_tokens_scoped": state.tokens_scoped,
        "security_forbidden_unmeasured": state.forbidden_unmeasured,
    }


def gather_case_gates(case, offers: Sequence[Offer] | None = None) -> list[OfferGates]:
    """Every offer's gates (or only ``offers``'), in a fixed number of queries."""
    all_offers = offers_of_case(case)
    wanted = {o.pk for o in offers} if offers is not None else None
    records = _CaseRecords(case)
    comparison = case_comparison(case)
    fits = {row.offer.pk: row.fit for row in comparison.rows}
    demand = demand_of(case)
    demand_error = demand_result(demand)[1]
    left_out = not_comparable_reasons(comparison)
    minimum = offer_minimum_status(
        offer_count=len(all_offers) - len(left_out),
        waiver=case.offer_minimum_waiver,
        not_counted=tuple(left_out.values()),
    )
    max_age = verification_max_age_days()
    areas = AreaFindings(
        case,
        AreaRecords.of_case(
            case,
            matrix=records.matrix,
            assessments=records.case_assessments,
            verifications=records.verifications,
        ),
        today=records.today,
    )
    acceptances = acceptance_facts(case)
    requirement = areas.requirement
    result = []
    for offer in all_offers:
        if wanted is not None and offer.pk not in wanted:
            continue
        scopes = [
            Scope("cases.procurementcase", "id", case.pk, str(case)),
            Scope("offers.offer", "id", offer.pk, str(offer)),
        ]
        spec = getattr(offer, "declared_spec", None)
        if spec is not None:
            scopes.append(Scope("offers.declaredspec", "id", spec.pk, f"declared spec of {offer}"))
        if demand is not None:
            scopes.append(Scope("sizing.computedemand", "id", demand.pk, "compute demand"))
        if requirement is not None:
            scopes.append(Scope("sizing.requirementspec", "id", requirement.pk, "requirement spec"))
        terms = areas.terms.get(offer.pk)
        if terms is not None and terms.record is not None:
            scopes.append(Scope("contracts.contractterms", "id", terms.record.pk, "contract terms"))
        scopes.append(
            Scope("approvals.findingacceptance", "case_id", case.pk, "finding acceptances")
        )
        # The register reads the network plan's training links (docs/rules/findings.md):
        # a plan started, or its links changed, is a change to what was judged.
        scopes.append(Scope("access.networkplan", "case_id", case.pk, "network plan"))
        if areas.plan is not None:
            scopes.append(Scope("access.workloadlink", "plan_id", areas.plan.pk, "workload links"))
        evidence: list[dict] = []
        inputs = GateInputs(
            now=records.now,
            max_age_days=max_age,
            spec=SpecFacts(
                confirmed=offer.spec_status.confirmed,
                missing=tuple(offer.spec_status.missing),
                url=_url("offers:spec", offer.pk),
            ),
            offer_minimum=OfferMinimumFacts(
                count=minimum["count"],
                required=minimum["required"],
                waiver=minimum["waiver"],
                not_counted=minimum["not_counted"],
                url=_url("scorecards:comparison", case.pk),
            ),
            checklist=records.checklist(offer, scopes),
            assessment=records.assessment(offer, scopes),
            matrix=records.matrix_facts(scopes),
            verification=records.verification(offer, scopes, evidence),
            demand_fit=_demand_fit_facts(offer, demand, demand_error, fits.get(offer.pk)),
        )
        # The register: what each gate finds missing, and every area rule's finding,
        # beside the acceptances recorded; the gates are then read from it.
        gates = evaluate_gates(inputs)
        found = [*gate_findings(gates, offer_id=offer.pk), *areas.for_offer(offer)]
        entries = judge(found, acceptances, today=records.today)
        result.append(
            OfferGates(offer, inputs, bind_gates(gates, entries), scopes, evidence, entries)
        )
    return result


def _demand_fit_facts(offer, demand, error: str, fit) -> DemandFitFacts:
    url = _url("offers:detail", offer.pk)
    if demand is None:
        return DemandFitFacts(exists=False, url=url)
    if fit is None:
        return DemandFitFacts(exists=True, meets=False, error=error or "—", url=url)
    return DemandFitFacts(
        exists=True, meets=fit.meets_target, shortfalls=tuple(fit.shortfalls), url=url
    )
