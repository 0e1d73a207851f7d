"""The approval gates, as plain functions on plain data.

Each gate reads one slice of ``GateInputs`` (gathered by
``apps.approvals.selectors.gate_inputs``) and answers held or not, with the
reason a reviewer reads and the page where it is fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

# What each gate rests on, in plain words: the public law, standard or datasheet,
# or the case's own stated need. Shown with the gate on the approval page, in the
# API and in the packet.
GATE_BASIS = {
    "declared_spec": gettext_lazy(
        "The vendor's written specification of what it offers, held to its datasheet "
        "(for example NVIDIA's datasheet for the card), so that measurement can check it."
    ),
    "offer_minimum": gettext_lazy(
        "Competitive quotations from at least three suppliers, as in the PRC Government "
        "Procurement Law, Art. 38 (competitive negotiation) and Art. 40 (request for "
        "quotations)."
    ),
    "red_flags": gettext_lazy(
        "Key contractual provisions for outsourced ICT services: the EU Digital Operational "
        "Resilience Act (DORA), Art. 30."
    ),
    "assessment": gettext_lazy(
        "Transfers of personal information abroad: the Personal Information Protection Law, "
        "Art. 38 to 40, and the Measures for the Security Assessment of Outbound Data "
        "Transfers (2022)."
    ),
    "access_matrix": gettext_lazy(
        "Access control, authentication and access rights reviewed at intervals: "
        "ISO/IEC 27001:2022, Annex A 5.15 to 5.18."
    ),
    "verification": gettext_lazy(
        "Hardware claims verified by measurement: the GPU inventory as NVIDIA's nvidia-smi "
        "reports it, and a load test whose percentiles follow the MLPerf Inference rules."
    ),
    "endpoint_security": gettext_lazy(
        "OWASP API Security Top 10 (2023): API2 Broken Authentication and API4 Unrestricted "
        "Resource Consumption."
    ),
    "exit_readiness": gettext_lazy(
        "Exit strategies for ICT third-party services: the EU Digital Operational Resilience "
        "Act (DORA), Art. 28(8)."
    ),
    "hardware_compliance": gettext_lazy(
        "Export controls on advanced computing items: the US Export Administration "
        "Regulations (ECCN 3A090 and 4A090) and the PRC Export Control Law."
    ),
    "demand_fit": gettext_lazy(
        "The case's own compute demand: GPU memory for the model's weights and KV cache at "
        "the stated load, in whole nodes of the offer's cards."
    ),
}


@dataclass(frozen=True)
class Gate:
    """One gate's verdict for one offer."""

    key: str
    title: str
    held: bool
    reason: str
    fix_url: str | None = None
    waivers: tuple[str, ...] = ()

    @property
    def basis(self) -> str:
        """The public source or stated need the gate rests on."""
        return str(GATE_BASIS.get(self.key, ""))


@dataclass(frozen=True)
class SpecFacts:
    confirmed: bool
    missing: tuple[str, ...] = ()
    url: str | None = None


@dataclass(frozen=True)
class OfferMinimumFacts:
    count: int  # compared offers: priced, and scored on every criterion by a reviewer
    required: int
    waiver: str = ""
    not_counted: tuple[str, ...] = ()
    url: str | None = None


@dataclass(frozen=True)
class ChecklistFacts:
    exists: bool
    red_flags: tuple[str, ...] = ()
    not_reviewed: tuple[str, ...] = ()
    waived: tuple[str, ...] = ()
    url: str | None = None


@dataclass(frozen=True)
class AssessmentFacts:
    exists: bool
    signed_off: bool = False
    expired: bool = False
    review_by: date | None = None
    exit_answered: bool = False
    exit_gaps: tuple[str, ...] = ()
    hardware_gaps: tuple[str, ...] = ()
    # The PRC decision aid as a checked step (apps.assessments.rules): contradictory
    # answers on data leaving, and the named mechanism's status in words.
    contradiction: str = ""
    mechanism_held: bool = True
    mechanism_text: str = ""
    # What an applicable EU GDPR or UK GDPR regime still needs (its transfer basis,
    # its impact or risk assessment), in the assessment's words.
    regime_problems: tuple[str, ...] = ()
    # The EU GDPR or UK GDPR conclusions that apply, each in a few words.
    regime_text: str = ""
    url: str | None = None


@dataclass(frozen=True)
class MatrixFacts:
    exists: bool
    reviewed: bool = False
    expired: bool = False
    review_by: date | None = None
    violations: tuple[str, ...] = ()
    # Each access control not in place with its evidence and not accepted as a risk.
    control_gaps: tuple[str, ...] = ()
    # Each risk acceptance in force that a control not in place rests on: who, why, until when.
    risk_acceptances: tuple[str, ...] = ()
    url: str | None = None


@dataclass(frozen=True)
class VerificationFacts:
    exists: bool
    verdict: str = ""
    verdict_label: str = ""
    verdict_passing: bool = False
    measured_at: datetime | None = None
    url: str | None = None
    blocked: tuple[str, ...] = ()  # why the verification cannot be confirmed, whatever it says
    verification_id: int | None = None  # the verification read, which a decision binds to
    # The endpoint security probes of that verification, each named with what it saw:
    # failed, required but not measured, and optional ones not run.
    security_failed: tuple[str, ...] = ()
    security_missing: tuple[str, ...] = ()
    security_not_run: tuple[str, ...] = ()
    # What the declared spec says of the API tokens now (None: not stated), and whether the
    # probe of a token without the permission went unmeasured: required where scoped.
    security_tokens_scoped: bool | None = None
    security_forbidden_unmeasured: bool = False


@dataclass(frozen=True)
class DemandFitFacts:
    """The offer against the case's compute demand (apps.sizing.fit)."""

    exists: bool = False  # a compute demand is saved
    meets: bool = True
    shortfalls: tuple[str, ...] = ()
    error: str = ""  # the saved demand no longer computes
    url: str | None = None


@dataclass(frozen=True)
class GateInputs:
    """Everything the gates read for one offer."""

    now: datetime
    max_age_days: int
    spec: SpecFacts
    offer_minimum: OfferMinimumFacts
    checklist: ChecklistFacts
    assessment: AssessmentFacts
    matrix: MatrixFacts
    verification: VerificationFacts
    demand_fit: DemandFitFacts = DemandFitFacts()


def _list(items: tuple[str, ...], limit: int = 5) -> str:
    shown = "; ".join(items[:limit])
    if len(items) > limit:
        shown += " " + _("and %(n)s more") % {"n": len(items) - limit}
    return shown


def gate_spec(inputs: GateInputs) -> Gate:
    key, title = "declared_spec", _("Declared spec confirmed")
    facts = inputs.spec
    if facts.confirmed:
        return Gate(key, title, True, _("Every required item is declared."), facts.url)
    return Gate(
        key,
        title,
        False,
        _("Unconfirmed: missing %(items)s.") % {"items": _list(facts.missing, 20)},
        facts.url,
    )


def gate_offer_minimum(inputs: GateInputs) -> Gate:
    key, title = "offer_minimum", _("At least three offers compared")
    facts = inputs.offer_minimum
    if facts.count >= facts.required:
        reason = _("%(count)s offers compared.") % {"count": facts.count}
        return Gate(key, title, True, reason, facts.url)
    if facts.waiver.strip():
        reason = _("%(count)s of %(required)s offers; waived: %(waiver)s") % {
            "count": facts.count,
            "required": facts.required,
            "waiver": facts.waiver.strip(),
        }
        return Gate(key, title, True, reason, facts.url, waivers=(facts.waiver.strip(),))
    reason = _("Only %(count)s of %(required)s offers compared, and no waiver recorded.") % {
        "count": facts.count,
        "required": facts.required,
    }
    if facts.not_counted:
        reason += " " + _("Not counted: %(items)s.") % {"items": _list(facts.not_counted)}
    return Gate(key, title, False, reason, facts.url)


def gate_red_flags(inputs: GateInputs) -> Gate:
    key, title = "red_flags", _("No open red flag")
    facts = inputs.checklist
    if not facts.exists:
        return Gate(key, title, False, _("No clause checklist for this offer yet."), facts.url)
    if facts.red_flags:
        reason = _("Open red flags: %(items)s.") % {"items": _list(facts.red_flags)}
        return Gate(key, title, False, reason, facts.url, waivers=facts.waived)
    if facts.not_reviewed:
        reason = _("Not reviewed yet: %(items)s.") % {"items": _list(facts.not_reviewed)}
        return Gate(key, title, False, reason, facts.url, waivers=facts.waived)
    if facts.waived:
        reason = _("Clear; %(n)s red flag(s) waived by a legal reviewer.") % {
            "n": len(facts.waived)
        }
        return Gate(key, title, True, reason, facts.url, waivers=facts.waived)
    return Gate(key, title, True, _("Every clause reviewed; none open."), facts.url)


def gate_assessment(inputs: GateInputs) -> Gate:
    key, title = "assessment", _("Data-export assessment signed off and current")
    facts = inputs.assessment
    if not facts.exists:
        return Gate(key, title, False, _("No data-export assessment covers this offer."), facts.url)
    # The same words as the case page and the packet: the contradiction and the
    # mechanism's status come verbatim from the assessment's rules.
    problems = [facts.contradiction] if facts.contradiction else []
    if not facts.mechanism_held:
        problems.append(facts.mechanism_text)
    problems += list(facts.regime_problems)
    if not facts.signed_off:
        problems.append(_("The assessment is not signed off."))
    elif facts.expired:
        problems.append(
            _("The assessment expired: its review-by date was %(date)s.")
            % {"date": facts.review_by.isoformat() if facts.review_by else "—"}
        )
    if problems:
        return Gate(key, title, False, " ".join(problems), facts.url)
    reason = _("Signed off; review by %(date)s.") % {
        "date": facts.review_by.isoformat() if facts.review_by else "—"
    }
    if facts.mechanism_text:
        reason += " " + facts.mechanism_text
    if facts.regime_text:
        reason += " " + facts.regime_text
    return Gate(key, title, True, reason, facts.url)


def gate_access_matrix(inputs: GateInputs) -> Gate:
    key = "access_matrix"
    title = _(
        "Access matrix reviewed, without SoD violations; access controls in place or accepted"
    )
    facts = inputs.matrix
    if not facts.exists:
        return Gate(key, title, False, _("No access matrix for this case yet."), facts.url)
    reasons = []
    if facts.violations:
        reasons.append(
            _("Segregation-of-duties violations: %(items)s") % {"items": _list(facts.violations, 3)}
        )
    elif not facts.reviewed:
        reasons.append(_("The access matrix is not reviewed."))
    elif facts.expired:
        reasons.append(
            _("The access-matrix review expired on %(date)s.")
            % {"date": facts.review_by.isoformat() if facts.review_by else "—"}
        )
    if facts.control_gaps:
        # Every control is named: each is fixed on its own.
        reasons.append(
            _("Access controls not in place or accepted as a risk: %(items)s.")
            % {"items": _list(facts.control_gaps, len(facts.control_gaps))}
        )
    accepted = facts.risk_acceptances
    if reasons:
        return Gate(key, title, False, " ".join(reasons), facts.url, waivers=accepted)
    reason = _("Reviewed; no segregation-of-duties violation.")
    if accepted:
        reason += " " + _("%(n)s access-control risk(s) accepted by a tech lead.") % {
            "n": len(accepted)
        }
    return Gate(key, title, True, reason, facts.url, waivers=accepted)


def gate_verification(inputs: GateInputs) -> Gate:
    key, title = "verification", _("Passing spec verification")
    facts = inputs.verification
    title = _("Passing spec verification newer than %(n)s days") % {"n": inputs.max_age_days}
    if not facts.exists:
        return Gate(key, title, False, _("No spec verification for this offer yet."), facts.url)
    if facts.blocked:
        reason = _("The verification cannot be confirmed: %(reasons)s") % {
            "reasons": _list(facts.blocked, 3)
        }
        return Gate(key, title, False, reason, facts.url)
    if not facts.verdict_passing:
        reason = _("The latest verification did not pass (%(verdict)s).") % {
            "verdict": facts.verdict_label or facts.verdict
        }
        return Gate(key, title, False, reason, facts.url)
    oldest = inputs.now - timedelta(days=inputs.max_age_days)
    if facts.measured_at is None or facts.measured_at < oldest:
        age = (inputs.now - facts.measured_at).days if facts.measured_at else None
        reason = _("The latest passing verification is %(age)s days old (limit %(n)s).") % {
            "age": "?" if age is None else age,
            "n": inputs.max_age_days,
        }
        return Gate(key, title, False, reason, facts.url)
    reason = _("%(verdict)s, measured %(when)s.") % {
        "verdict": facts.verdict_label or facts.verdict,
        "when": facts.measured_at.date().isoformat(),
    }
    return Gate(key, title, True, reason, facts.url)


def gate_endpoint_security(inputs: GateInputs) -> Gate:
    """Every probe of the endpoint judged; a probe not measured is never a pass."""
    key = "endpoint_security"
    title = _("Endpoint refuses unauthenticated and over-limit requests")
    facts = inputs.verification
    if not facts.exists:
        return Gate(key, title, False, _("No spec verification for this offer yet."), facts.url)
    problems = []
    if facts.security_failed:
        problems.append(_("Failed: %(items)s.") % {"items": _list(facts.security_failed, 4)})
    if facts.security_missing:
        problems.append(_("Not measured: %(items)s.") % {"items": _list(facts.security_missing, 4)})
    # docs/rules/evidence.md#endpoint-security: scoped tokens make the 403 probe required.
    unmeasured = facts.security_forbidden_unmeasured
    if unmeasured and facts.security_tokens_scoped:
        problems.append(
            _(
                "The declared spec says the API tokens are scoped, so a token without the "
                "permission must be shown refused with HTTP 403."
            )
        )
    if facts.security_failed or facts.security_missing:
        return Gate(key, title, False, " ".join(problems), facts.url)
    reason = _("Every required probe of the endpoint passed.")
    if facts.security_not_run:
        reason += " " + _("Not run: %(items)s.") % {"items": _list(facts.security_not_run, 4)}
    if unmeasured:
        reason += " " + _(
            "The probe of a token without the permission is optional: the declared spec "
            "does not say the API tokens are scoped."
        )
    return Gate(key, title, True, reason, facts.url)


def gate_exit_readiness(inputs: GateInputs) -> Gate:
    key, title = "exit_readiness", _("Exit readiness confirmed")
    facts = inputs.assessment
    if not facts.exists:
        return Gate(key, title, False, _("No assessment to answer exit readiness in."), facts.url)
    if facts.exit_gaps:
        reason = _("Each exit item must be 'yes' with its evidence: %(items)s.") % {
            "items": _list(facts.exit_gaps)
        }
        return Gate(key, title, False, reason, facts.url)
    return Gate(key, title, True, _("Every exit item is confirmed, with its evidence."), facts.url)


def gate_hardware_compliance(inputs: GateInputs) -> Gate:
    """Never waivable: the hardware's export-control status and authorisation documents."""
    key, title = "hardware_compliance", _("Export control and hardware origin documented")
    facts = inputs.assessment
    if not facts.exists:
        return Gate(key, title, False, _("No assessment records the hardware's status."), facts.url)
    if facts.hardware_gaps:
        reason = _(
            "Export-control compliance and the hardware's authorisation documents cannot be "
            "skipped or waived (export-control law): %(items)s."
        ) % {"items": _list(facts.hardware_gaps)}
        return Gate(key, title, False, reason, facts.url)
    return Gate(
        key,
        title,
        True,
        _("Export-control status and authorisation documents confirmed."),
        facts.url,
    )


def gate_demand_fit(inputs: GateInputs) -> Gate:
    """Whole nodes, a multi-node plan's RDMA network and checkpoint disk
    (docs/rules/sizing.md#demand-fit)."""
    key, title = "demand_fit", _("Offer meets the compute demand")
    facts = inputs.demand_fit
    if not facts.exists:
        return Gate(
            key, title, True, _("No compute demand saved; nothing to check against."), facts.url
        )
    if facts.error:
        reason = _("The saved compute demand cannot be sized: %(error)s") % {"error": facts.error}
        return Gate(key, title, False, reason, facts.url)
    if not facts.meets:
        reason = _("Cannot meet the compute demand: %(items)s") % {
            "items": " ".join(facts.shortfalls)
        }
        return Gate(key, title, False, reason, facts.url)
    return Gate(
        key,
        title,
        True,
        _("Enough whole nodes, network and checkpoint disk for the demand."),
        facts.url,
    )


GATES: tuple[Callable[[GateInputs], Gate], ...] = (
    gate_spec,
    gate_offer_minimum,
    gate_red_flags,
    gate_assessment,
    gate_access_matrix,
    gate_verification,
    gate_endpoint_security,
    gate_exit_readiness,
    gate_hardware_compliance,
    gate_demand_fit,
)


# The gates only the rented machine can hold: an approval subject to acceptance may be
# given while they are open, naming hardware identity among its conditions
# (docs/rules/approvals.md#approval-subject-to-acceptance).
MEASURED_ON_THE_RENTED_MACHINE = frozenset({"verification", "endpoint_security"})


def evaluate_gates(inputs: GateInputs) -> list[Gate]:
    """Every gate, in the order the approval page lists them."""
    return [gate(inputs) for gate in GATES]


def open_gates(gates: list[Gate]) -> list[Gate]:
    return [gate for gate in gates if not gate.held]
