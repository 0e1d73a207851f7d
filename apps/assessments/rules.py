"""Pure rules of the data-export self-assessment (docs/rules/data-export.md).

Everything here works on plain data: ``answers`` maps a question key to any
object with ``value`` (str) and ``number`` (int | None). The browser, the API,
the case panel, the packet and the approval gates all call these functions.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, NamedTuple

from django.utils.formats import number_format
from django.utils.translation import gettext_lazy as _

from apps.assessments.audit_facts import AUDIT_FINDINGS
from apps.assessments.questions import (
    EXIT_READINESS_KEYS,
    NO,
    NOT_APPLICABLE,
    QUESTIONS,
    QUESTIONS_BY_KEY,
    YES,
    YES_NO_CHOICES,
    Kind,
)
from apps.assessments.regimes import Citation, PrcRegime
from apps.assessments.transfers import (
    Regime,
    RegimeConclusion,
    TransferMechanism,
    eu_conclusion,
    prc_applies,
    transfer_facts,
    uk_conclusion,
)

# The gaps of the facts auditors ask for, each a finding of the case's register
# (docs/rules/data-export.md#audit-facts); the questionnaire's own gaps are the gates'.
REGISTER_FINDINGS: tuple[str, ...] = AUDIT_FINDINGS
# docs/rules/data-export.md#review-by-date: regulation changes fast, so every sign-off holds for 90
# days by default.
REVIEW_PERIOD_DAYS = 90


@dataclass(frozen=True)
class Answer:
    value: str = ""
    number: int | None = None
    note: str = ""
    attachment: str = ""


def _value(answers: Mapping[str, Any], key: str) -> str:
    answer = answers.get(key)
    return (answer.value or "") if answer is not None else ""


def _number(answers: Mapping[str, Any], key: str) -> int | None:
    answer = answers.get(key)
    return answer.number if answer is not None else None


# --- Input ------------------------------------------------------------------


def answers_errors(given: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Why the submitted answers cannot be saved, keyed by question (``key__number`` for counts)."""
    errors: dict[str, str] = {}
    for key, answer in given.items():
        question = QUESTIONS_BY_KEY.get(key)
        if question is None:
            errors[key] = str(
                _("There is no question '%(key)s' in this questionnaire.") % {"key": key}
            )
            continue
        value = answer.get("value") or ""
        allowed = [choice for choice, _label in question.choices]
        if value and (not question.takes_value or value not in allowed):
            errors[key] = str(
                _("'%(value)s' is not an answer to this question; use one of: %(allowed)s.")
                % {"value": value, "allowed": ", ".join(allowed) if question.takes_value else "—"}
            )
        number = answer.get("number")
        if number is None or number == "":
            continue
        if not question.takes_number:
            errors[f"{key}__number"] = str(_("This question takes no number."))
        elif isinstance(number, bool) or not isinstance(number, int) or number < 0:
            errors[f"{key}__number"] = str(_("Enter a whole number of zero or more."))
        elif number > question.number_max:
            errors[f"{key}__number"] = str(
                _("Enter a whole number of at most %(max)s.")
                % {"max": number_format(question.number_max, force_grouping=True)}
            )
    return errors


# --- Derived constraints ------------------------------------------------------


@dataclass(frozen=True)
class Constraint:
    key: str
    text: str
    because: tuple[str, ...] = field(default_factory=tuple)


def exit_gaps(answers: Mapping[str, Any]) -> list[str]:
    """Exit-readiness items not confirmed (docs/rules/data-export.md#hard-requirements)."""
    gaps = []
    for key in EXIT_READINESS_KEYS:
        question = QUESTIONS_BY_KEY[key]
        value = _value(answers, key)
        if value != YES:
            state = _("not answered") if not value else _("answered '%(v)s'") % {"v": value}
            gaps.append(f"{question.label} ({state})")
        elif question.kind == Kind.YES_NO_DAYS and _number(answers, key) is None:
            gaps.append(f"{question.label} ({_('number of days not stated')})")
    return gaps


def _answered(value: str) -> str:
    """How a yes/no question was answered, in words (never the stored slug)."""
    if not value:
        return str(_("not answered"))
    label = dict(YES_NO_CHOICES).get(value, value)
    return str(_("answered '%(v)s'") % {"v": label})


def _has_evidence(answers: Mapping[str, Any], key: str) -> bool:
    answer = answers.get(key)
    return answer is not None and bool((answer.note or "").strip() or answer.attachment)


def exit_hard_gaps(answers: Mapping[str, Any], window_days: int | None = None) -> list[str]:
    """Exit-readiness items that block an approval, each named with why.

    Being able to leave is a hard requirement, not a question to answer: each
    item must be "yes" with an evidence note or attachment, and a bounded exit
    must state its number of days, at most ``window_days`` (the case's need)
    where the case states one. "No", "not applicable" or blank blocks.
    """
    gaps = []
    for key in EXIT_READINESS_KEYS:
        question = QUESTIONS_BY_KEY[key]
        value = _value(answers, key)
        if value != YES:
            gaps.append(f"{question.label} ({_answered(value)})")
        elif not _has_evidence(answers, key):
            gaps.append(f"{question.label} ({_('no evidence note or attachment')})")
        elif question.kind == Kind.YES_NO_DAYS:
            days = _number(answers, key)
            if days is None:
                gaps.append(f"{question.label} ({_('number of days not stated')})")
            elif window_days is not None and days > window_days:
                longer = _("%(days)s days, longer than the %(window)s days the case needs") % {
                    "days": number_format(days, force_grouping=True),
                    "window": number_format(window_days, force_grouping=True),
                }
                gaps.append(f"{question.label} ({longer})")
    return gaps


# Never skipped, never waived: renting hardware whose export-control status or
# origin is not documented breaches export-control law (the US Export
# Administration Regulations for advanced computing chips, China's Export
# Control Law), whatever the business gains.
HARDWARE_HARD_KEYS = ("export_control_licence", "authorization_documents")


def hardware_hard_gaps(answers: Mapping[str, Any]) -> list[str]:
    """Export-control and authorisation answers that do not count, each named with why.

    As for the exit items, a "yes" counts only with its document on file: an evidence
    note or attachment (docs/rules/data-export.md#hard-requirements)."""
    gaps = []
    for key in HARDWARE_HARD_KEYS:
        value = _value(answers, key)
        if value != YES:
            gaps.append(f"{QUESTIONS_BY_KEY[key].label} ({_answered(value)})")
        elif not _has_evidence(answers, key):
            gaps.append(f"{QUESTIONS_BY_KEY[key].label} ({_('no evidence note or attachment')})")
    return gaps


def exit_readiness_answered_in(answers: Mapping[str, Any]) -> bool:
    """Every exit-readiness question has an answer, with the days when exit is bounded."""
    for key in EXIT_READINESS_KEYS:
        value = _value(answers, key)
        if not value:
            return False
        bounded = QUESTIONS_BY_KEY[key].kind == Kind.YES_NO_DAYS and value == YES
        if bounded and _number(answers, key) is None:
            return False
    return True


def _sensitive_without_export_assessment(answers: Mapping[str, Any]) -> list[str]:
    """Keys of the "yes" personal-information / important-data answers, when the
    data-export assessment is not completed; empty otherwise."""
    sensitive = [k for k in ("personal_information", "important_data") if _value(answers, k) == YES]
    if sensitive and _value(answers, "export_assessment_completed") != YES:
        return sensitive
    return []


def derived_constraints(answers: Mapping[str, Any]) -> list[Constraint]:
    """What the answers oblige the architecture to do
    (docs/rules/data-export.md#derived-constraints)."""
    constraints = []
    because = []
    sensitive = _sensitive_without_export_assessment(answers)
    if sensitive:
        because += [str(QUESTIONS_BY_KEY[k].label) for k in sensitive]
        because.append(str(_("the data-export assessment is not completed")))
    if _value(answers, "raw_data_leaves") == NO:
        because.append(str(_("raw data is not to be sent abroad")))
    if because:
        constraints.append(
            Constraint(
                "data_stays",
                str(
                    _(
                        "Data may not leave: only de-identified, synthetic or feature data may "
                        "be sent; training runs remotely and intermediate artefacts come back "
                        "under control."
                    )
                ),
                tuple(because),
            )
        )
    because = []
    if _value(answers, "access_logging_required") == YES:
        because.append(str(_("every access must be fully logged")))
    if _value(answers, "access_traceable") == NO:
        because.append(str(_("access subjects and locations are not yet traceable")))
    if because:
        constraints.append(
            Constraint(
                "one_entry_point",
                str(_("One audited entry point, no direct connections by individual engineers.")),
                tuple(because),
            )
        )
    gaps = exit_gaps(answers)
    if gaps:
        constraints.append(
            Constraint(
                "exit_gaps",
                str(_("Exit readiness gaps to close before production: %(gaps)s."))
                % {"gaps": "; ".join(gaps)},
                tuple(gaps),
            )
        )
    if _value(answers, "export_control_licence") == NO or (
        _value(answers, "authorization_documents") == NO
    ):
        constraints.append(
            Constraint(
                "hardware_not_cleared",
                str(_("Hardware of unconfirmed origin or licence may not enter production.")),
                (str(_("export-control, licence or authorisation documents not confirmed")),),
            )
        )
    constraints += transfer_constraints(answers)
    if _value(answers, "upstream_region_constraints") == YES:
        constraints.append(
            Constraint(
                "supply_may_tighten",
                str(_("Supply may tighten at the upstream's request: keep the exit path ready.")),
                (str(_("the upstream supplier imposes customer-region quotas")),),
            )
        )
    return constraints


# --- The regimes side by side (docs/rules/data-export.md#regimes) --------------


def transfer_constraints(answers: Mapping[str, Any]) -> list[Constraint]:
    """What the EU and UK conclusions oblige: the transfer basis before personal data goes."""
    facts = transfer_facts(answers)
    constraints = []
    for found in (eu_conclusion(facts), uk_conclusion(facts)):
        words = {"regime": found.title, "module": found.scc_module}
        if found.mechanism == TransferMechanism.EU_SCC:
            text = _(
                "%(regime)s: personal data may go to the vendor only under the standard "
                "contractual clauses, module %(module)s, signed with it, and after a transfer "
                "impact assessment, with the supplementary measures it calls for."
            )
        elif found.mechanism == TransferMechanism.UK_IDTA:
            text = _(
                "%(regime)s: personal data may go to the vendor only under the International "
                "Data Transfer Agreement or the UK Addendum signed with it, and after a "
                "transfer risk assessment."
            )
        elif found.mechanism == TransferMechanism.DEROGATION:
            text = _(
                "%(regime)s: only occasional transfers, as the named derogation allows; "
                "regular or repeated transfers need appropriate safeguards."
            )
        else:
            continue
        constraints.append(
            Constraint(f"{found.regime}_{found.mechanism}", str(text) % words, (found.reason,))
        )
    return constraints


def regime_conclusions(answers: Mapping[str, Any], *, aid: "PrcAid") -> list[RegimeConclusion]:
    """Every regime considered, side by side: the PRC aid, the EU GDPR and the UK GDPR."""
    facts = transfer_facts(answers)
    applies = prc_applies(_flag(answers, "prc_collected_in_china"), facts.exporter)
    if aid.mechanism == Mechanism.UNDETERMINED:
        applies = None
    prc = RegimeConclusion(
        Regime.PRC,
        applies,
        aid.mechanism,
        aid.reason,
        (str(aid.citation),) if aid.citation else (),
        missing=aid.missing,
        label_override=aid.label,
    )
    return [prc, eu_conclusion(facts), uk_conclusion(facts)]


def regimes_considered(conclusions: list[RegimeConclusion]) -> str:
    """One line naming every regime considered and whether it applies."""
    states = {True: _("applies"), False: _("does not apply"), None: _("cannot tell yet")}
    parts = [
        str(_("%(regime)s: %(state)s")) % {"regime": c.title, "state": states[c.applies]}
        for c in conclusions
    ]
    return str(_("Regimes considered: %(list)s.")) % {"list": "; ".join(parts)}


def applicable_transfer_regimes(conclusions: list[RegimeConclusion]) -> str:
    """The EU GDPR and UK GDPR conclusions that apply, in a few words; "" when none does."""
    return " ".join(
        str(_("%(regime)s: %(label)s.")) % {"regime": c.title, "label": c.label}
        for c in conclusions
        if c.applies and c.regime != Regime.PRC
    )


def regime_problems(conclusions: list[RegimeConclusion]) -> list[str]:
    """What an applicable EU or UK regime still needs before approval, in words."""
    return [
        str(_("%(regime)s: %(todo)s Source: %(source)s."))
        % {"regime": c.title, "todo": " ".join(c.to_do), "source": "; ".join(c.citations)}
        for c in conclusions
        if c.applies and c.to_do
    ]


# --- Sign-off, review-by, expiry ---------------------------------------------


class AssessmentState(NamedTuple):
    signed_off: bool
    expired: bool
    review_by: date | None


def state_of(
    *, signed_off_at: datetime | None, review_by: date | None, today: date
) -> AssessmentState:
    """Valid up to and including the review-by day; expired from the day after."""
    signed_off = signed_off_at is not None
    expired = signed_off and review_by is not None and today > review_by
    return AssessmentState(signed_off, expired, review_by)


def default_review_by(signed_on: date) -> date:
    return signed_on + timedelta(days=REVIEW_PERIOD_DAYS)


def review_by_errors(review_by: date, *, signed_on: date) -> list[str]:
    if review_by < signed_on:
        return [str(_("The review-by date cannot be before the sign-off date."))]
    return []


def edit_voids_sign_off(*, signed_off: bool, changed: bool) -> bool:
    """Any change to a signed-off assessment voids its sign-off; a no-op save does not."""
    return signed_off and changed


def sign_off_blockers(answers: Mapping[str, Any], *, conclusion: str, aid: "PrcAid") -> list[str]:
    """What must be answered before a legal reviewer can sign off."""
    blockers = []
    unanswered = [str(q.label) for q in QUESTIONS if q.takes_value and not _value(answers, q.key)]
    if unanswered:
        blockers.append(str(_("Unanswered: %(list)s")) % {"list": "; ".join(unanswered)})
    bounded = QUESTIONS_BY_KEY["exit_bounded_time"]
    if _value(answers, bounded.key) == YES and _number(answers, bounded.key) is None:
        blockers.append(str(_("State within how many days we can exit.")))
    hardware = hardware_hard_gaps(answers)
    if hardware and not unanswered:
        blockers.append(
            str(
                _(
                    "Export-control compliance and the hardware's authorisation documents "
                    "cannot be skipped or waived (export-control law): %(list)s"
                )
            )
            % {"list": "; ".join(hardware)}
        )
    contradiction = export_contradiction(answers)
    if contradiction:
        blockers.append(contradiction)
    if aid.mechanism == Mechanism.UNDETERMINED and not unanswered:
        blockers.append(str(_("PRC decision aid needs: %(m)s")) % {"m": "; ".join(aid.missing)})
    if not unanswered:
        facts = transfer_facts(answers)
        for found in (eu_conclusion(facts), uk_conclusion(facts)):
            if found.mechanism == TransferMechanism.UNDETERMINED:
                blockers.append(
                    str(_("%(regime)s decision aid needs: %(m)s"))
                    % {"regime": found.title, "m": "; ".join(found.missing)}
                )
    if not conclusion.strip():
        blockers.append(str(_("Write the legal and compliance conclusion.")))
    return blockers


# --- Which assessment governs an offer ----------------------------------------


def jurisdictions_differ(covered: str, vendor: str) -> bool:
    """A case assessment with no jurisdiction covers every vendor."""
    covered = covered.strip().casefold()
    return bool(covered) and covered != vendor.strip().casefold()


def governing_assessment(*, case_assessment, offer_assessment, vendor_jurisdiction: str):
    """An offer's own assessment overrides the case one, which covers only its jurisdiction."""
    if offer_assessment is not None:
        return offer_assessment
    if case_assessment is None:
        return None
    if jurisdictions_differ(case_assessment.jurisdiction, vendor_jurisdiction):
        return None
    return case_assessment


# --- PRC cross-border decision aid -------------------------------------------


class Mechanism:
    SECURITY_ASSESSMENT = "security_assessment"
    STANDARD_CONTRACT_OR_CERTIFICATION = "standard_contract_or_certification"
    EXEMPT = "exempt"
    UNDETERMINED = "undetermined"


MECHANISM_LABELS = {
    Mechanism.SECURITY_ASSESSMENT: _("Security assessment (declared via the provincial CAC)"),
    Mechanism.STANDARD_CONTRACT_OR_CERTIFICATION: _(
        "Standard contract (filed) or personal-information protection certification"
    ),
    Mechanism.EXEMPT: _("Exempt from all three mechanisms"),
    Mechanism.UNDETERMINED: _("Cannot tell yet"),
}
DISCLAIMER = _("An aid to the legal reviewer, not a legal opinion.")


@dataclass(frozen=True)
class PrcFacts:
    collected_in_china: bool | None
    important_data: bool | None
    personal_information: bool | None
    art5_exemption: str | None
    ciio: bool | None
    individuals: int | None
    sensitive_individuals: int | None


@dataclass(frozen=True)
class PrcAid:
    mechanism: str
    reason: str
    citation: Citation | None
    missing: tuple[str, ...]
    regime_key: str

    @property
    def label(self) -> str:
        return str(MECHANISM_LABELS[self.mechanism])

    @property
    def disclaimer(self) -> str:
        return str(DISCLAIMER)


def _flag(answers: Mapping[str, Any], key: str) -> bool | None:
    value = _value(answers, key)
    return None if not value else value == YES


def prc_facts(answers: Mapping[str, Any]) -> PrcFacts:
    return PrcFacts(
        collected_in_china=_flag(answers, "prc_collected_in_china"),
        important_data=_flag(answers, "important_data"),
        personal_information=_flag(answers, "personal_information"),
        art5_exemption=_value(answers, "prc_art5_exemption") or None,
        ciio=_flag(answers, "prc_ciio"),
        individuals=_number(answers, "prc_individuals_non_sensitive"),
        sensitive_individuals=_number(answers, "prc_individuals_sensitive"),
    )


def prc_mechanism(facts: PrcFacts, regime: PrcRegime) -> PrcAid:
    """The mechanism the 2022 measures and 2024 provisions call for, step by step."""

    def result(mechanism, reason, citation_key=None, missing=()):
        citation = regime.citations[citation_key] if citation_key else None
        return PrcAid(mechanism, str(reason), citation, tuple(map(str, missing)), regime.key)

    def unknown(*keys):
        labels = [QUESTIONS_BY_KEY[k].label for k in keys]
        return result(
            Mechanism.UNDETERMINED, _("Answer the questions it depends on."), None, labels
        )

    if facts.collected_in_china is None:
        return unknown("prc_collected_in_china")
    if not facts.collected_in_china:
        return result(
            Mechanism.EXEMPT,
            _("Data collected and generated abroad, with no domestic personal information or "
              "important data introduced."),
            "collected_abroad",
        )  # fmt: skip
    if facts.important_data is None:
        return unknown("important_data")
    if facts.important_data:
        return result(
            Mechanism.SECURITY_ASSESSMENT,
            _("Important data is sent abroad."),
            "important_data",
        )
    if facts.personal_information is None:
        return unknown("personal_information")
    if not facts.personal_information:
        return result(
            Mechanism.EXEMPT,
            _("Neither personal information nor important data is sent abroad."),
            "no_pi_no_important_data",
        )
    if facts.art5_exemption is None:
        return unknown("prc_art5_exemption")
    if facts.art5_exemption not in ("none", NOT_APPLICABLE):
        return result(
            Mechanism.EXEMPT, _("The whole transfer falls under Art. 5(1)–(3)."), "art5_exemption"
        )
    if facts.ciio is None:
        return unknown("prc_ciio")
    if facts.ciio:
        return result(
            Mechanism.SECURITY_ASSESSMENT,
            _("A critical-information-infrastructure operator sends personal information abroad."),
            "ciio",
        )
    missing = [
        key
        for key, number in (
            ("prc_individuals_non_sensitive", facts.individuals),
            ("prc_individuals_sensitive", facts.sensitive_individuals),
        )
        if number is None
    ]
    if missing:
        return unknown(*missing)
    individuals, sensitive = facts.individuals or 0, facts.sensitive_individuals or 0
    if (
        individuals >= regime.assessment_min_individuals
        or sensitive >= regime.assessment_min_sensitive
    ):
        return result(
            Mechanism.SECURITY_ASSESSMENT,
            _("%(n)s individuals' personal information or %(s)s individuals' sensitive personal "
              "information since 1 January: at or over %(a)s / %(b)s.")
            % {"n": individuals, "s": sensitive, "a": regime.assessment_min_individuals,
               "b": regime.assessment_min_sensitive},
            "over_assessment_floor",
        )  # fmt: skip
    if individuals >= regime.contract_min_individuals or sensitive >= regime.contract_min_sensitive:
        return result(
            Mechanism.STANDARD_CONTRACT_OR_CERTIFICATION,
            _("%(n)s individuals' personal information and %(s)s individuals' sensitive personal "
              "information since 1 January: in the band from %(c)s (or any sensitive) to below "
              "%(a)s / %(b)s.")
            % {"n": individuals, "s": sensitive, "c": regime.contract_min_individuals,
               "a": regime.assessment_min_individuals, "b": regime.assessment_min_sensitive},
            "contract_band",
        )  # fmt: skip
    return result(
        Mechanism.EXEMPT,
        _("Fewer than %(c)s individuals' personal information and no sensitive personal "
          "information since 1 January, by a handler that is not a CIIO.")
        % {"c": regime.contract_min_individuals},
        "below_contract_floor",
    )  # fmt: skip


def prc_aid(answers: Mapping[str, Any], *, on: date) -> PrcAid:
    """The decision aid under the regime in force on the given day."""
    from apps.assessments.regimes import regime_in_force

    regime = regime_in_force(on)
    if regime is None:
        reason = _("No PRC regime is recorded as in force on %(day)s.") % {"day": on.isoformat()}
        return PrcAid(Mechanism.UNDETERMINED, str(reason), None, (), "")
    return prc_mechanism(prc_facts(answers), regime)


# --- Entry points for the approval gates (docs/rules/approvals.md) -----------


def assessment_state(assessment, today: date) -> AssessmentState:
    """(signed_off, expired, review_by) of an assessment, or of none at all."""
    if assessment is None:
        return AssessmentState(False, False, None)
    return state_of(
        signed_off_at=assessment.signed_off_at, review_by=assessment.review_by, today=today
    )


def exit_readiness_answered(assessment) -> bool:
    """Whether the exit-readiness block is complete; takes the record or its answers mapping."""
    if assessment is None:
        return False
    answers = assessment if isinstance(assessment, Mapping) else assessment.answer_map()
    return exit_readiness_answered_in(answers)


# --- The decision aid as a checked step ----------------------------------------
#
# Personal Information Protection Law of the PRC, Art. 38–40: personal information
# (and, under the 2022 measures, important data) goes abroad only through a CAC
# security assessment, a filed standard contract or a certification. The answers
# must not contradict that, and the mechanism the aid names must be done (or
# judged not needed) before an approval.

EXPORT_SOURCE = _(
    "Personal Information Protection Law of the PRC, Art. 38–40; Provisions on Promoting "
    "and Regulating Cross-border Data Flows (2024)"
)
MECHANISM_SOURCES = {
    Mechanism.SECURITY_ASSESSMENT: _(
        "Personal Information Protection Law of the PRC, Art. 38–40; CAC Measures for the "
        "Security Assessment of Outbound Data Transfers; Provisions on Promoting and "
        "Regulating Cross-border Data Flows (2024)"
    ),
    Mechanism.STANDARD_CONTRACT_OR_CERTIFICATION: _(
        "Personal Information Protection Law of the PRC, Art. 38–40; CAC Measures on the "
        "Standard Contract for the Outbound Transfer of Personal Information; Provisions on "
        "Promoting and Regulating Cross-border Data Flows (2024)"
    ),
}
# The mechanisms that ask for a status; "exempt" and "cannot tell yet" do not.
NAMED_MECHANISMS = tuple(MECHANISM_SOURCES)


def _quoted_answer(answers: Mapping[str, Any], key: str) -> str:
    return str(_("“%(question)s” %(answered)s")) % {
        "question": QUESTIONS_BY_KEY[key].label,
        "answered": _answered(_value(answers, key)),
    }


def export_contradiction(answers: Mapping[str, Any]) -> str:
    """Why the answers contradict each other on data leaving the country, or "".

    The "data may not leave" constraint follows from personal information or
    important data without a completed data-export assessment; an answer that
    raw data must be sent abroad then contradicts it.
    """
    sensitive = _sensitive_without_export_assessment(answers)
    if not sensitive or _value(answers, "raw_data_leaves") != YES:
        return ""
    because = [_quoted_answer(answers, key) for key in sensitive]
    because.append(_quoted_answer(answers, "export_assessment_completed"))
    return str(
        _(
            "Contradictory answers: %(leaves)s, yet the constraints say raw data may not leave "
            "the country, because %(because)s. Personal information or important data may be "
            "sent abroad only after a security assessment, a filed standard contract or a "
            "certification (%(source)s). Change one of these answers."
        )
    ) % {
        "leaves": _quoted_answer(answers, "raw_data_leaves"),
        "because": "; ".join(because),
        "source": EXPORT_SOURCE,
    }


class MechanismStatus:
    NOT_NEEDED = "not_needed"
    IN_PROGRESS = "in_progress"
    DONE = "done"


MECHANISM_STATUS_CHOICES = (
    (MechanismStatus.NOT_NEEDED, _("Not needed")),
    (MechanismStatus.IN_PROGRESS, _("In progress")),
    (MechanismStatus.DONE, _("Done")),
)
# Approval needs one of these; "in progress" waits.
MECHANISM_STATUS_CLEARS = (MechanismStatus.NOT_NEEDED, MechanismStatus.DONE)


@dataclass(frozen=True)
class StatedStatus:
    """The mechanism status recorded at the last sign-off, and the mechanism it was for."""

    status: str | None = None
    expected_on: date | None = None
    reference: str | None = None
    stated_for: str | None = None


def stated_status(assessment) -> StatedStatus:
    return StatedStatus(
        status=assessment.mechanism_status,
        expected_on=assessment.mechanism_expected_on,
        reference=assessment.mechanism_reference,
        stated_for=assessment.mechanism_stated_for,
    )


def _status_label(status: str | None) -> str:
    return str(dict(MECHANISM_STATUS_CHOICES).get(status or "", status or "—"))


@dataclass(frozen=True)
class MechanismCheck:
    """Whether the mechanism the aid names has a status an approval accepts, in words."""

    mechanism: str
    named: bool  # the aid names a mechanism that needs a status
    held: bool
    text: str  # "" when no mechanism is named
    stated: StatedStatus

    @property
    def applies(self) -> bool:
        """The recorded status was stated for the mechanism named now."""
        return self.named and self.stated.stated_for == self.mechanism


def mechanism_check(aid: PrcAid, stated: StatedStatus, *, today: date) -> MechanismCheck:
    """The approval rule: "done" (with a reference) or "not needed" holds; "in progress"
    waits, with its expected date; a status stated for another mechanism no longer applies."""
    mechanism = aid.mechanism
    if mechanism not in NAMED_MECHANISMS:
        return MechanismCheck(mechanism, False, True, "", stated)
    words = {
        "mechanism": aid.label,
        "source": MECHANISM_SOURCES[mechanism],
        "status": _status_label(stated.status),
        "previous": str(MECHANISM_LABELS.get(stated.stated_for or "", stated.stated_for or "")),
        "date": stated.expected_on.isoformat() if stated.expected_on else "",
        "reference": (stated.reference or "").strip(),
    }

    def check(held: bool, text) -> MechanismCheck:
        return MechanismCheck(mechanism, True, held, str(text) % words, stated)

    known = stated.status in dict(MECHANISM_STATUS_CHOICES)
    if not known:
        return check(
            False,
            _(
                "%(mechanism)s: status not stated. At sign-off the legal reviewer states it: "
                "not needed, in progress (with an expected date) or done (with a reference "
                "such as the filing number). Source: %(source)s."
            ),
        )
    if stated.stated_for != mechanism:
        return check(
            False,
            _(
                "%(mechanism)s: the recorded status (%(status)s) was stated for “%(previous)s”, "
                "which the answers no longer call for; state this mechanism's status again at "
                "sign-off. Source: %(source)s."
            ),
        )
    if stated.status == MechanismStatus.NOT_NEEDED:
        return check(True, _("%(mechanism)s: not needed, as the legal reviewer stated."))
    if stated.status == MechanismStatus.DONE:
        if not words["reference"]:
            return check(
                False,
                _(
                    "%(mechanism)s: marked done, but no reference (such as the filing number) "
                    "is recorded; state it again at sign-off. Source: %(source)s."
                ),
            )
        return check(True, _("%(mechanism)s: done, reference %(reference)s."))
    if stated.expected_on is None:
        return check(
            False,
            _(
                "%(mechanism)s: in progress, with no expected date; approval waits until it is "
                "done. Source: %(source)s."
            ),
        )
    if stated.expected_on < today:
        return check(
            False,
            _(
                "%(mechanism)s: in progress, expected by %(date)s, a date now passed; approval "
                "waits until it is done. Source: %(source)s."
            ),
        )
    return check(
        False,
        _(
            "%(mechanism)s: in progress, expected by %(date)s; approval waits until it is done. "
            "Source: %(source)s."
        ),
    )


def mechanism_status_errors(
    mechanism: str,
    *,
    status: str | None,
    expected_on: date | None,
    reference: str | None,
    today: date,
) -> dict[str, str]:
    """Why the status stated at sign-off cannot be recorded, keyed by field."""
    status = status or ""
    if mechanism not in NAMED_MECHANISMS:
        if status:
            return {
                "mechanism_status": str(
                    _("The decision aid names no mechanism here, so there is no status to state.")
                )
            }
        return {}
    label = MECHANISM_LABELS[mechanism]
    if not status:
        return {
            "mechanism_status": str(
                _(
                    "State the status of “%(mechanism)s”: not needed, in progress (with an "
                    "expected date) or done (with a reference such as the filing number)."
                )
            )
            % {"mechanism": label}
        }
    if status not in dict(MECHANISM_STATUS_CHOICES):
        allowed = ", ".join(choice for choice, _label in MECHANISM_STATUS_CHOICES)
        return {
            "mechanism_status": str(
                _("'%(value)s' is not a status; use one of: %(allowed)s.")
                % {"value": status, "allowed": allowed}
            )
        }
    if status == MechanismStatus.IN_PROGRESS:
        if expected_on is None:
            return {
                "mechanism_expected_on": str(
                    _("In progress: give the date it is expected to be done.")
                )
            }
        if expected_on < today:
            return {
                "mechanism_expected_on": str(
                    _(
                        "The expected date %(date)s has passed: give the new expected date, or "
                        "record the mechanism as done."
                    )
                )
                % {"date": expected_on.isoformat()}
            }
    if status == MechanismStatus.DONE and not (reference or "").strip():
        return {
            "mechanism_reference": str(
                _("Done: give its reference, such as the filing or approval number.")
            )
        }
    return {}


def stated_fields(
    mechanism: str, *, status: str | None, expected_on: date | None, reference: str | None
) -> dict[str, Any]:
    """The model fields a sign-off records; NULL (never "") where nothing applies."""
    if mechanism not in NAMED_MECHANISMS or not status:
        return {
            "mechanism_status": None,
            "mechanism_expected_on": None,
            "mechanism_reference": None,
            "mechanism_stated_for": None,
        }
    return {
        "mechanism_status": status,
        "mechanism_expected_on": expected_on if status == MechanismStatus.IN_PROGRESS else None,
        "mechanism_reference": (reference or "").strip() or None,
        "mechanism_stated_for": mechanism,
    }
