"""The areas' rules as findings of the case's register (docs/rules/findings.md).

Each area judges its own records with its own rules (the contract terms, the
requirement spec…); this module says, once, what each of their findings weighs
in the register: its code, severity, owners, gate and public source. The
register itself (``apps.approvals.findings``) is read by the approval gates, the
cockpit, the inbox, the packet and the API alike.

``AREA_RULES`` names every finding an area's rule can raise. Each rule module
lists the register codes its rules raise in ``REGISTER_FINDINGS`` (empty where it
raises none); a test walks the rule modules and fails when one of them is missing
here or never reaches the register.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from apps.access import rules as access_rules
from apps.access.selectors import (
    access_matrices_of_cases,
    network_plan_of,
    network_plans_of_cases,
)
from apps.approvals.findings import Finding, Rule, Severity
from apps.assessments import audit_facts
from apps.assessments import rules as assessment_rules
from apps.assessments.selectors import assessment_audit_gaps, assessments_of_cases
from apps.casework import reassessments
from apps.contracts import selectors as contracts_selectors
from apps.contracts import terms
from apps.core.roles import Role
from apps.costs import rules as costs_rules
from apps.costs import selectors as costs_selectors
from apps.evidence import selectors as evidence_selectors
from apps.sizing import requirement as requirement_rules
from apps.sizing.selectors import requirement_check_for, requirement_of, requirements_of_cases
from apps.vendors import reassessment as reassessment_rules
from apps.vendors import rules as vendor_rules
from apps.vendors.models import VendorTier
from apps.vendors.selectors import certifications_of_case, certifications_of_vendors
from apps.workloads import rules as workload_rules
from apps.workloads import selectors as workloads_selectors
from apps.workloads.selectors import case_prompt_sets

EXIT_SOURCE = gettext_lazy(
    "Exit strategies for ICT third-party services: the EU Digital Operational Resilience "
    "Act (DORA), Art. 28(8); leaving within a bounded time, with the data fully "
    "exportable, is a hard requirement of renting remote compute."
)
SLA_SOURCE = gettext_lazy(
    "Service levels with precise quantitative performance targets: the EU Digital "
    "Operational Resilience Act (DORA), Art. 30(3)(a), against the availability the case "
    "states it needs."
)
PREPAYMENT_SOURCE = gettext_lazy(
    "Market reports put the prepayment premium of such offers at about 30–50 %; "
    "prepayment and long-term commitments are decided jointly with finance."
)
PRICE_SOURCE = gettext_lazy(
    "Competitive quotations compared on the terms actually contracted: the PRC Government "
    "Procurement Law, Art. 38 and Art. 40."
)
REQUIREMENT_SOURCE = gettext_lazy(
    "The case's own requirement spec, held against the vendor's declared spec."
)
REQUIREMENT_TOLERANCE_SOURCE = gettext_lazy(
    "The case's own requirement spec, held against the vendor's declared spec: a shortfall "
    "within the tolerance the spec states is weighed by the tech lead instead of refused."
)
TRAINING_SOURCE = gettext_lazy(
    "The organisation's network rule: the gradient traffic of distributed training or "
    "fine-tuning stays on one cluster's own network and never crosses the public internet. "
    "It needs the bandwidth and latency only that network gives, and over the internet it "
    "would expose model weights and training data; only job control, data sets going up "
    "and checkpoints coming back cross it."
)
DATA_PATHS_SOURCE = gettext_lazy(
    "Personal information and important data leave the country only after the assessment "
    "or other legal basis the law requires: the Personal Information Protection Law, Art. "
    "38, and the Data Security Law, Art. 31. The case's own data-export assessment concluded "
    "that data may not leave, so only de-identified, synthetic or feature data, or control "
    "and results alone, may cross any link of the network plan."
)
ENTRY_MFA_SOURCE = gettext_lazy(
    "Secure authentication and access to the rented machines: ISO/IEC 27001:2022, Annex A "
    "8.5, through one audited entry point with multi-factor authentication. That entry point "
    "guards the data as much as the machines, so going without it is accepted by legal "
    "together with the tech lead."
)

# The facts auditors ask of a data export (apps.assessments.audit_facts).
INVENTORY_SOURCE = gettext_lazy(
    "The data sent abroad described by its scale, type and sensitivity: the Measures for "
    "the Security Assessment of Outbound Data Transfers, Art. 5(2)."
)
CONTRADICTION_SOURCE = gettext_lazy(
    "The data sent abroad described by its scale, type and sensitivity: the Measures for "
    "the Security Assessment of Outbound Data Transfers, Art. 5(2); personal information "
    "goes abroad only on a legal basis, the Personal Information Protection Law, Art. 38."
)
WEIGHTS_SOURCE = gettext_lazy(
    "An inventory of information and other associated assets: ISO/IEC 27001:2022, Annex A "
    "5.9; the model weights deployed are named with their SHA-256, so what runs can be "
    "checked against what was approved."
)
ENCRYPTION_SOURCE = gettext_lazy(
    "Encryption, de-identification and other security measures: the Personal Information "
    "Protection Law, Art. 51; the use of cryptography: ISO/IEC 27001:2022, Annex A 8.24."
)
LOG_RETENTION_SOURCE = gettext_lazy(
    "Logs produced, kept and protected: ISO/IEC 27001:2022, Annex A 8.15; network logs kept "
    "at least six months: the Cybersecurity Law, Art. 21(3); held against the "
    "organisation's own minimum retention."
)

CONTRACT_DATES_SOURCE = gettext_lazy(
    "The contract's own dates: its term, renewal and the notice it asks before renewing; "
    "termination rights and notice periods of ICT contracts: the EU Digital Operational "
    "Resilience Act (DORA), Art. 30(2)(h)."
)

P, L, T, F = Role.PROCUREMENT, Role.LEGAL, Role.TECH_LEAD, Role.FINANCE
BLOCKS, ACCEPT = Severity.BLOCKS, Severity.NEEDS_ACCEPTANCE


def _rule(code, title, severity, owners, gate, source, document="") -> Rule:
    return Rule(code, title, severity, owners, gate, source, document)


# What an acceptance must attach, where the rule asks for a document: the cost of leaving
# early, worked out; the controls that stand in for the entry point's MFA, shown.
EXIT_PENALTY_DOCUMENT = gettext_lazy(
    "the calculation of what leaving early would cost under this penalty"
)
ENTRY_MFA_DOCUMENT = gettext_lazy(
    "the evidence of the controls that stand in for MFA until it is in place"
)


# What each contract-term check weighs (apps.contracts.terms.Check).
TERM_RULES: dict[terms.Check | terms.DateCheck, Rule] = {
    terms.Check.EXPORT_WINDOW_SHORT: _rule(
        "contracts.export_window_short",
        gettext_lazy("Data export window shorter than the exit window"),
        BLOCKS,
        (L,),
        "exit_readiness",
        EXIT_SOURCE,
    ),
    terms.Check.EXPORT_WINDOW_NOT_STATED: _rule(
        "contracts.export_window_not_stated",
        gettext_lazy("No data export window in the contract"),
        BLOCKS,
        (L,),
        "exit_readiness",
        EXIT_SOURCE,
    ),
    terms.Check.SLA_BELOW_NEED: _rule(
        "contracts.sla_below_need",
        gettext_lazy("SLA below the availability the case needs"),
        ACCEPT,
        (P,),
        "red_flags",
        SLA_SOURCE,
    ),
    terms.Check.SLA_NOT_STATED: _rule(
        "contracts.sla_not_stated",
        gettext_lazy("No availability stated in the contract"),
        ACCEPT,
        (P,),
        "red_flags",
        SLA_SOURCE,
    ),
    terms.Check.IMAGE_NOT_PORTABLE: _rule(
        "contracts.image_not_portable",
        gettext_lazy("Images not rebuildable with another provider"),
        ACCEPT,
        (L,),
        "exit_readiness",
        EXIT_SOURCE,
    ),
    terms.Check.EXIT_PENALTY: _rule(
        "contracts.exit_penalty",
        gettext_lazy("Penalty for leaving early"),
        ACCEPT,
        (L,),
        "exit_readiness",
        EXIT_SOURCE,
        EXIT_PENALTY_DOCUMENT,
    ),
    # Above the threshold a second person, from finance, confirms it.
    terms.Check.EXIT_PENALTY_HIGH: _rule(
        "contracts.exit_penalty_high",
        gettext_lazy("Penalty for leaving early, above a fifth of the remaining contract"),
        ACCEPT,
        (L, F),
        "exit_readiness",
        EXIT_SOURCE,
        EXIT_PENALTY_DOCUMENT,
    ),
    terms.Check.PREMIUM_IN_RANGE: _rule(
        "contracts.premium_in_range",
        gettext_lazy("Prepayment premium within the market range"),
        ACCEPT,
        (P, F),
        "red_flags",
        PREPAYMENT_SOURCE,
    ),
    # Above the range it blocks unless finance and the approver both accept it.
    terms.Check.PREMIUM_ABOVE_RANGE: _rule(
        "contracts.premium_above_range",
        gettext_lazy("Prepayment premium above the market range"),
        ACCEPT,
        (F, T),
        "red_flags",
        PREPAYMENT_SOURCE,
    ),
    terms.Check.BILLING_DIFFERS: _rule(
        "contracts.billing_differs",
        gettext_lazy("Contract bills on another basis than the offer was priced"),
        ACCEPT,
        (P,),
        "red_flags",
        PRICE_SOURCE,
    ),
    # The contract's dates: notice not given in time, so it renews; an end coming or gone.
    terms.DateCheck.NOTICE_DEADLINE_PASSED: _rule(
        "contracts.notice_deadline_passed",
        gettext_lazy("Notice deadline against the renewal passed"),
        ACCEPT,
        (P,),
        "red_flags",
        CONTRACT_DATES_SOURCE,
    ),
    terms.DateCheck.END_DATE_NEAR: _rule(
        "contracts.end_date_near",
        gettext_lazy("Contract ends within 60 days, or has ended"),
        ACCEPT,
        (P,),
        "red_flags",
        CONTRACT_DATES_SOURCE,
    ),
    terms.Check.PREPAYMENT_DIFFERS: _rule(
        "contracts.prepayment_differs",
        gettext_lazy("Contract prepayment differs from the offer's"),
        ACCEPT,
        (P,),
        "red_flags",
        PRICE_SOURCE,
    ),
}

# What each requirement verdict weighs (apps.sizing.requirement.Verdict): an offer that
# cannot meet the requirement blocks; one short within the spec's tolerance, or one that
# does not say, needs the tech lead's word (docs/rules/sizing.md#requirement-spec).
REQUIREMENT_RULES: dict[requirement_rules.Verdict, Rule] = {
    requirement_rules.Verdict.SHORT: _rule(
        "sizing.requirement_short",
        gettext_lazy("Offer short of the requirement spec"),
        BLOCKS,
        (T,),
        "demand_fit",
        REQUIREMENT_SOURCE,
    ),
    requirement_rules.Verdict.WITHIN_TOLERANCE: _rule(
        "sizing.requirement_within_tolerance",
        gettext_lazy("Offer short of the requirement spec, within its tolerance"),
        ACCEPT,
        (T,),
        "demand_fit",
        REQUIREMENT_TOLERANCE_SOURCE,
    ),
    requirement_rules.Verdict.NOT_STATED: _rule(
        "sizing.requirement_not_stated",
        gettext_lazy("Offer does not state what the requirement spec asks"),
        ACCEPT,
        (T,),
        "demand_fit",
        REQUIREMENT_SOURCE,
    ),
}

# What the access and network plan's rules weigh (apps.access.rules): training traffic
# outside one cluster blocks; the entry point's MFA carried by the tech lead's risk
# acceptance alone needs legal's acceptance as well; a data path sending what the
# governing data-export assessment keeps at home blocks (docs/rules/access.md#data-paths).
TRAINING_TRAFFIC_RULE = _rule(
    access_rules.TRAINING_TRAFFIC_FINDING,
    gettext_lazy("Training traffic not kept inside one cluster"),
    BLOCKS,
    (T,),
    "access_matrix",
    TRAINING_SOURCE,
)
ENTRY_MFA_RULE = _rule(
    access_rules.ENTRY_MFA_FINDING,
    gettext_lazy("Entry point without MFA, on the tech lead's risk acceptance alone"),
    ACCEPT,
    (L,),
    "access_matrix",
    ENTRY_MFA_SOURCE,
    ENTRY_MFA_DOCUMENT,
)
DATA_PATHS_RULE = _rule(
    access_rules.DATA_LEAVES_FINDING,
    gettext_lazy("Network plan sends data the data-export assessment keeps at home"),
    BLOCKS,
    (L, T),
    "access_matrix",
    DATA_PATHS_SOURCE,
)
ACCESS_RULES = (TRAINING_TRAFFIC_RULE, ENTRY_MFA_RULE, DATA_PATHS_RULE)

# --- The facts auditors ask of a data export (apps.assessments.audit_facts) ---------------
# docs/rules/data-export.md#audit-facts: what each gap of the governing assessment's audit
# facts weighs. Data sent in clear, or a dataset the answers deny, blocks; every other gap
# awaits its owner's acceptance.
Gap = audit_facts.Gap
AUDIT_FACT_RULES: dict[audit_facts.Gap, Rule] = {
    Gap.INVENTORY_MISSING: _rule(
        Gap.INVENTORY_MISSING.value,
        gettext_lazy("No data inventory"),
        ACCEPT,
        (L,),
        "assessment",
        INVENTORY_SOURCE,
    ),
    Gap.INVENTORY_CONTRADICTS_ANSWERS: _rule(
        Gap.INVENTORY_CONTRADICTS_ANSWERS.value,
        gettext_lazy("Dataset's sensitivity contradicts the assessment's answers"),
        BLOCKS,
        (L,),
        "assessment",
        CONTRADICTION_SOURCE,
    ),
    Gap.WEIGHT_HASHES_MISSING: _rule(
        Gap.WEIGHT_HASHES_MISSING.value,
        gettext_lazy("No model-weight hashes"),
        ACCEPT,
        (T,),
        "assessment",
        WEIGHTS_SOURCE,
    ),
    Gap.IN_TRANSIT_NOT_ENCRYPTED: _rule(
        Gap.IN_TRANSIT_NOT_ENCRYPTED.value,
        gettext_lazy("Data not encrypted in transit"),
        BLOCKS,
        (L,),
        "assessment",
        ENCRYPTION_SOURCE,
    ),
    Gap.AT_REST_NOT_ENCRYPTED: _rule(
        Gap.AT_REST_NOT_ENCRYPTED.value,
        gettext_lazy("Data not encrypted at rest"),
        ACCEPT,
        (L,),
        "assessment",
        ENCRYPTION_SOURCE,
    ),
    Gap.ENCRYPTION_NOT_STATED: _rule(
        Gap.ENCRYPTION_NOT_STATED.value,
        gettext_lazy("Encryption not stated"),
        ACCEPT,
        (L,),
        "assessment",
        ENCRYPTION_SOURCE,
    ),
    Gap.LOG_RETENTION_SHORT: _rule(
        Gap.LOG_RETENTION_SHORT.value,
        gettext_lazy("Logs kept for less than the organisation's minimum"),
        ACCEPT,
        (L,),
        "assessment",
        LOG_RETENTION_SOURCE,
    ),
}


# --- the cost guardrails against the bills, and a representative load test -------------
# (docs/rules/findings.md#findings-of-the-areas). Bills come after an approval, so the
# cost findings mostly weigh on a renewal or a decision taken again. They stand in the
# red-flag gate, with the contract's other money findings: no gate is about the bills.
IDLE_SOURCE = gettext_lazy(
    "The case's budget guardrails: idle capacity is reclaimed, since idle instances left "
    "running are the usual cause of a growing bill; paying on for idle GPUs is accepted "
    "by procurement together with finance."
)
TRAINING_CAP_SOURCE = gettext_lazy(
    "The case's budget guardrails: every training job is bound to the maximum run time and "
    "the maximum spend its budget states; a job beyond them is accepted by finance "
    "together with the tech lead, whose team runs it."
)
LOAD_SOURCE = gettext_lazy(
    "The case's own workload: a load test measures the service for the traffic it sends, "
    "so it runs the case's own prompt set with each length tier at its share of the set; "
    "its safe level and throughput decide the capacity and the unit costs."
)
COST_RULES: dict[str, Rule] = {
    costs_rules.IDLE_FINDING: _rule(
        costs_rules.IDLE_FINDING,
        gettext_lazy("Idle GPUs above the limit on the bills"),
        ACCEPT,
        (P, F),
        "red_flags",
        IDLE_SOURCE,
    ),
    costs_rules.TRAINING_CAP_FINDING: _rule(
        costs_rules.TRAINING_CAP_FINDING,
        gettext_lazy("Training job beyond its cap on the bills"),
        ACCEPT,
        (F, T),
        "red_flags",
        TRAINING_CAP_SOURCE,
    ),
}
# The load test the verification gate reads, accepted by the tech lead who runs it.
LOAD_RULE = _rule(
    workload_rules.LOAD_NOT_REPRESENTATIVE,
    gettext_lazy("Load test not representative of the case's workload"),
    ACCEPT,
    (T,),
    "verification",
    LOAD_SOURCE,
)
# --- the vendor's certifications (apps.vendors.rules) -------------------------------------
# docs/rules/vendors.md#certifications: an expired certificate is accepted by procurement,
# who keeps the vendor; one expiring within 60 days informs.
CERTIFICATION_SOURCE = gettext_lazy(
    "The certificate's own validity period: ISO/IEC 27001 certificates are valid three "
    "years, with yearly surveillance audits; a SOC 2 Type II report covers a past period "
    "and is read again each year. Monitoring and reviewing the supplier's assurances: "
    "ISO/IEC 27001:2022, Annex A 5.22."
)
CERTIFICATION_RULES: dict[str, Rule] = {
    vendor_rules.CERTIFICATION_EXPIRED: _rule(
        vendor_rules.CERTIFICATION_EXPIRED,
        gettext_lazy("Vendor certification expired"),
        ACCEPT,
        (P,),
        "red_flags",
        CERTIFICATION_SOURCE,
    ),
    vendor_rules.CERTIFICATION_EXPIRING: _rule(
        vendor_rules.CERTIFICATION_EXPIRING,
        gettext_lazy("Vendor certification expires within 60 days"),
        Severity.INFORMS,
        (P,),
        "red_flags",
        CERTIFICATION_SOURCE,
    ),
}
# A case rejected is over: its offers' vendors' certifications weigh on it no more.
CASE_STATES_WITHOUT_CERTIFICATION_FINDINGS = frozenset({"rejected"})

# A vendor's reassessment not completed within its grace (docs/rules/reassessment.md): it
# stands on every open case with an offer from the vendor. Procurement, who answers for the
# vendor relationship and its portal, and the tech lead, who runs the acceptance again,
# accept it together.
REASSESSMENT_SOURCE = gettext_lazy(
    "The organisation's review cycle for vendors of this tier: a vendor in use answers its "
    "portal again and its acceptance is run again against the pinned baseline once a cycle, "
    "within 30 days of the reassessment starting."
)
REASSESSMENT_RULE = _rule(
    reassessment_rules.REASSESSMENT_LAPSED,
    gettext_lazy("Vendor's reassessment lapsed"),
    ACCEPT,
    (P, T),
    "red_flags",
    REASSESSMENT_SOURCE,
)

# Every area rule of the register, by code.
AREA_RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        *TERM_RULES.values(),
        *REQUIREMENT_RULES.values(),
        *ACCESS_RULES,
        *AUDIT_FACT_RULES.values(),
        # the cost guardrails and a representative load test
        *COST_RULES.values(),
        LOAD_RULE,
        # the vendor's certifications
        *CERTIFICATION_RULES.values(),
        REASSESSMENT_RULE,
    )
}


@dataclass(frozen=True)
class AreaRecords:
    """What the areas' findings of one case are made from, read beforehand: by
    ``of_case`` for one case (the gates), by ``of_cases`` for many at once (My work), so
    both make the same findings from the same records."""

    terms: list  # the offers' contract terms (apps.contracts.selectors.OfferTerms)
    requirement: Any  # the requirement spec, or None
    plan: Any  # the network plan with its links, or None
    matrix: Any  # the access matrix with its controls, or None
    # The case's data-export assessments (its own, and those of single offers), with their
    # answers, datasets and weight files prefetched.
    assessments: tuple = ()
    # The guardrails the case's bills broke (apps.costs.selectors.CaseGuardrails), the
    # case's prompt sets, and each offer's load-test summary where the case has a set.
    guardrails: Any = None
    prompt_sets: tuple = ()
    loadtests: Any = None
    # The certifications of the vendors of the case's offers, by vendor id.
    certifications: Any = None
    # The open reassessment of each vendor with an offer on the case, by vendor id.
    reassessments: Any = None

    @classmethod
    def of_case(cls, case, *, matrix, assessments, verifications) -> AreaRecords:
        """``matrix``, ``assessments`` and ``verifications`` (each offer's newest) are the
        case's as the gates already loaded them."""
        return cls(
            terms=contracts_selectors.case_contract_terms(case),
            requirement=requirement_of(case),
            plan=network_plan_of(case),
            matrix=matrix,
            assessments=tuple(assessments),
            # Every open one (at most one per vendor in use): the offers are the gates' own.
            reassessments=reassessments.open_of_vendors(None),
            **_bills_and_load(case, verifications),
            certifications=certifications_of_case(case),
        )

    @classmethod
    def of_cases(cls, cases, offers) -> dict[int, AreaRecords]:
        """Each case's records, in a fixed number of queries; ``offers`` are the cases'
        offers (``offers_of_cases``)."""
        ids = [case.pk for case in cases]
        terms_by_case = contracts_selectors.contract_terms_of_cases(cases, offers)
        requirements = requirements_of_cases(ids)
        plans = network_plans_of_cases(ids)
        matrices = access_matrices_of_cases(ids)
        assessments = assessments_of_cases(ids)
        # The guardrails against the bills of every case at once; prompt sets are read
        # case by case, only for the cases that have them.
        guardrails = costs_selectors.guardrails_of_cases(ids)
        with_sets = workloads_selectors.cases_with_prompt_sets(ids)
        certifications = certifications_of_vendors({offer.vendor_id for offer in offers})
        open_reassessments = reassessments.open_of_vendors({o.vendor_id for o in offers})
        for plan in plans.values():
            plan.case = next(case for case in cases if case.pk == plan.case_id)
        return {
            pk: cls(
                terms=terms_by_case[pk],
                requirement=requirements.get(pk),
                plan=plans.get(pk),
                matrix=matrices.get(pk),
                assessments=tuple(assessments.get(pk, ())),
                reassessments=open_reassessments,
                **_bills_and_load(
                    case, None, guardrails=guardrails.get(pk), with_sets=case.pk in with_sets
                ),
                certifications=certifications,
            )
            for case in cases
            for pk in (case.pk,)
        }


_READ = object()


def _bills_and_load(case, verifications, *, guardrails=_READ, with_sets=True) -> dict[str, Any]:
    """The case's guardrails against its bills (read here unless given: None where the case
    has no budget), its prompt sets and, where it has one, each offer's load-test summary
    (``verifications``: each offer's newest, read if None)."""
    if guardrails is _READ:
        guardrails = costs_selectors.case_guardrails(case)
    prompt_sets = tuple(case_prompt_sets(case)) if with_sets else ()
    loadtests = {}
    if prompt_sets:
        if verifications is None:
            verifications = evidence_selectors.case_verifications(case)
        loadtests = evidence_selectors.loadtest_summaries(verifications)
    return {"guardrails": guardrails, "prompt_sets": prompt_sets, "loadtests": loadtests}


class AreaFindings:
    """The areas' findings for each offer of one case, from its records read beforehand."""

    def __init__(self, case, records: AreaRecords, *, today: date) -> None:
        self.case = case
        self.terms = {entry.offer.pk: entry for entry in records.terms}
        self.requirement = records.requirement
        self.plan = records.plan
        # The access and network plan are the whole case's: the same for every offer.
        self.case_wide = [*self._training(), *self._entry_mfa(records.matrix, today)]
        # The data-export assessments: the case's own, and those of single offers.
        assessments = records.assessments
        self.case_assessment = next((a for a in assessments if a.offer_id is None), None)
        self.offer_assessments = {a.offer_id: a for a in assessments if a.offer_id is not None}
        self._audit_gaps: dict[int, list] = {}
        self._data_paths: dict[int, list] = {}
        # The cost guardrails against the bills, and each offer's load test against the
        # case's own prompt sets.
        self.guardrails = records.guardrails
        self.prompt_sets = records.prompt_sets
        self.loadtests = records.loadtests
        self.case_wide += self._guardrails(None)
        self.today = today
        self.certifications = records.certifications or {}
        self.reassessments = records.reassessments or {}

    def for_offer(self, offer) -> list[Finding]:
        return [
            *self._terms(offer),
            *self._requirement(offer),
            *self.case_wide,
            *self._audit_facts(offer),
            *self._data_paths_of(offer),
            # the cost guardrails and a representative load test
            *self._guardrails(offer.pk),
            *self._load(offer),
            *self._certifications(offer),
            *self._reassessment(offer),
        ]

    def _training(self) -> list[Finding]:
        plan = self.plan
        if plan is None:
            return []
        url = reverse("access:plan", args=[self.case.pk])
        problems = access_rules.training_traffic_findings(
            in_one_cluster=plan.multi_node_training_in_one_cluster, links=list(plan.links.all())
        )
        return [
            Finding(
                rule=TRAINING_TRAFFIC_RULE,
                offer_id=None,
                message=problem.message,
                facts=problem.facts,
                key=problem.key,
                subject=gettext("Network plan"),
                fix_url=url,
            )
            for problem in problems
        ]

    def _entry_mfa(self, matrix, today: date) -> list[Finding]:
        if matrix is None:
            return []
        found = access_rules.entry_mfa_acceptance(matrix.controls_data(), matrix.periods(), today)
        if found is None:
            return []
        return [
            Finding(
                rule=ENTRY_MFA_RULE,
                offer_id=None,
                message=found.message,
                facts=found.facts,
                key=access_rules.ENTRY_MFA,
                subject=found.acceptance.title,
                fix_url=reverse("access:matrix", args=[self.case.pk]) + "#controls",
            )
        ]

    def _terms(self, offer) -> list[Finding]:
        entry = self.terms.get(offer.pk)
        if entry is None:
            return []
        url = reverse("contracts:checklist", args=[offer.pk])
        return [
            Finding(
                rule=TERM_RULES[finding.check],
                offer_id=offer.pk,
                message=finding.message,
                facts=finding.facts or _term_facts(entry.values, finding.term, self.case),
                key=finding.term,
                subject=str(offer),
                fix_url=url,
            )
            for finding in entry.findings
        ]

    def _requirement(self, offer) -> list[Finding]:
        check = requirement_check_for(self.requirement, offer)
        if check is None:
            return []
        url = reverse("offers:spec", args=[offer.pk])
        return [
            Finding(
                rule=REQUIREMENT_RULES[field.verdict],
                offer_id=offer.pk,
                message=field.shortfall,
                facts=self._requirement_facts(field),
                key=field.field,
                subject=str(offer),
                fix_url=url,
            )
            for field in check.checks
            if field.verdict in REQUIREMENT_RULES and field.shortfall
        ]

    def _requirement_facts(self, field) -> str:
        facts = f"{field.field}: required {field.required}, offered {field.offered}"
        if field.verdict == requirement_rules.Verdict.WITHIN_TOLERANCE:
            # Accepted within this tolerance: a wider or narrower one is judged again.
            facts += f", tolerance {self.requirement.tolerance_pct} %"
        return facts

    # --- The facts auditors ask of a data export ----------------------------------------

    def _governing(self, offer):
        """The assessment that governs the offer, as
        ``apps.casework.gates._CaseRecords.assessment`` finds it, or None."""
        return assessment_rules.governing_assessment(
            case_assessment=self.case_assessment,
            offer_assessment=self.offer_assessments.get(offer.pk),
            vendor_jurisdiction=offer.vendor.jurisdiction,
        )

    def _audit_facts(self, offer) -> list[Finding]:
        """The gaps of the audit facts of the assessment that governs the offer; none
        without one (the assessment gate's own finding says so)."""
        governing = self._governing(offer)
        if governing is None:
            return []
        if governing.pk not in self._audit_gaps:
            self._audit_gaps[governing.pk] = assessment_audit_gaps(governing)
        url = reverse("assessments:detail", args=[governing.pk]) + "#audit-facts"
        return [
            Finding(
                rule=AUDIT_FACT_RULES[gap.gap],
                offer_id=offer.pk,
                message=gap.message,
                facts=gap.facts,
                key=gap.key,
                subject=str(governing),
                fix_url=url,
            )
            for gap in self._audit_gaps[governing.pk]
        ]

    def _data_paths_of(self, offer) -> list[Finding]:
        """docs/rules/access.md#data-paths: the network plan's links held against the
        derived constraints of the assessment that governs the offer, read from its
        prefetched answers; none without a plan or an assessment."""
        plan = self.plan
        governing = self._governing(offer)
        if plan is None or governing is None:
            return []
        if governing.pk not in self._data_paths:
            constraints = assessment_rules.derived_constraints(governing.answer_map())
            self._data_paths[governing.pk] = access_rules.data_path_findings(
                data_stays=any(c.key == access_rules.DATA_STAYS for c in constraints),
                links=list(plan.links.all()),
            )
        url = reverse("access:plan", args=[self.case.pk])
        return [
            Finding(
                rule=DATA_PATHS_RULE,
                offer_id=offer.pk,
                message=problem.message,
                facts=problem.facts,
                key=problem.key,
                subject=gettext("Network plan"),
                fix_url=url,
            )
            for problem in self._data_paths[governing.pk]
        ]

    # --- the cost guardrails and a representative load test ----------------------------

    def _guardrails(self, offer_id: int | None) -> list[Finding]:
        """The guardrails the bills broke, about the offer the bills are for (the approved
        one, else the budget's pick), or the whole case where neither is."""
        found = self.guardrails
        if found is None or found.offer_id != offer_id:
            return []
        url = reverse("costs:case", args=[self.case.pk]) + "#guardrails"
        return [
            Finding(
                rule=COST_RULES[breach.code],
                offer_id=offer_id,
                message=breach.message,
                facts=breach.facts,
                key=breach.key,
                subject=gettext("Bills"),
                fix_url=url,
            )
            for breach in found.breaches
        ]

    def _load(self, offer) -> list[Finding]:
        summary = (self.loadtests or {}).get(offer.pk)
        if not summary:
            return []
        shortfall = workload_rules.load_shortfall(
            list(self.prompt_sets),
            (summary.get("workload_sets") or {}).get("prompt_set"),
            list(summary.get("cells") or []),
        )
        if shortfall is None:
            return []
        return [
            Finding(
                rule=LOAD_RULE,
                offer_id=offer.pk,
                message=shortfall.message,
                facts=shortfall.facts,
                key=shortfall.key,
                subject=str(offer),
                fix_url=reverse("evidence:case", args=[self.case.pk]),
            )
        ]

    # --- the vendor's certifications ----------------------------------------------------

    def _certifications(self, offer) -> list[Finding]:
        """Each certification of the offer's vendor expired or expiring as of today, on
        every case not rejected (docs/rules/vendors.md#certifications)."""
        if self.case.status in CASE_STATES_WITHOUT_CERTIFICATION_FINDINGS:
            return []
        held = self.certifications.get(offer.vendor_id, ())
        found = vendor_rules.certification_findings(held, today=self.today)
        url = reverse("vendors:detail", args=[offer.vendor_id]) + "#certifications"
        return [
            Finding(
                rule=CERTIFICATION_RULES[item.code],
                offer_id=offer.pk,
                message=item.message,
                facts=item.facts,
                key=item.key,
                subject=str(offer.vendor),
                fix_url=url,
            )
            for item in found
        ]

    def _reassessment(self, offer) -> list[Finding]:
        """The vendor's reassessment, lapsed as of today (whether or not the schedule has
        recorded it), on an open case."""
        found = self.reassessments.get(offer.vendor_id)
        if found is None or self.case.status not in reassessments.FINDING_CASE_STATUSES:
            return []
        if reassessments.state_of(found, self.today) != reassessments.ReassessmentState.LAPSED:
            return []
        started = timezone.localdate(found.started_at)
        until = reassessment_rules.lapses_on(started)
        return [
            Finding(
                rule=REASSESSMENT_RULE,
                offer_id=offer.pk,
                message=gettext(
                    "The reassessment of %(vendor)s started on %(started)s was not completed "
                    "by %(until)s (%(tier)s tier, every %(months)s months)."
                )
                % {
                    "vendor": offer.vendor.name,
                    "started": started.isoformat(),
                    "until": until.isoformat(),
                    "tier": VendorTier(found.tier).label,
                    "months": found.cycle_months,
                },
                # Each reassessment is its own: one accepted does not carry to the next.
                facts=f"reassessment={found.pk}; due_on={found.due_on.isoformat()}",
                key=f"reassessment-{found.pk}",
                subject=offer.vendor.name,
                fix_url=reverse("cases:reassessments"),
            )
        ]


def _term_facts(values: terms.TermValues, term: str, case) -> str:
    """The contract's terms and the case's need a finding on ``term`` rests on, in a
    stable form: an acceptance lapses when one of them changes."""
    related = {"prepayment_pct": ("prepayment_pct", "ordinary_prepayment_pct")}.get(term, (term,))
    shown = [f"{name}={getattr(values, name)}" for name in related]
    need = {
        "data_export_days": "exit_window_days",
        "sla_availability_pct": "availability_need_pct",
    }.get(term)
    if need:
        shown.append(f"{need}={getattr(case, need)}")
    return "; ".join(shown)
