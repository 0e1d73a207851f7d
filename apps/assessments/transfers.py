"""EU GDPR and UK GDPR transfer rules, beside the PRC ones (docs/rules/data-export.md).

Pure functions on plain answers, as ``rules``: ``answers`` maps a question key to
any object with ``value`` (str). Each regime gives a conclusion: whether it
applies, the mechanism it calls for with its citations, the SCC module, whether a
transfer impact (or risk) assessment is needed, and what is still to be done.
The adequacy lists and citations are data (``apps.assessments.regimes``).

The result is an aid to the legal reviewer, never a legal opinion.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_lazy as _

from apps.assessments.questions import IMPORTER_PLACES, NOT_APPLICABLE, QUESTIONS_BY_KEY, YES
from apps.assessments.regimes import (
    CHINA,
    EEA,
    EU_ADEQUACY,
    EU_CITATIONS,
    SCC_MODULES,
    UK,
    UK_ADEQUACY,
    UK_CITATIONS,
    AdequacyList,
    PlainCitation,
)


class Regime:
    PRC = "prc"
    EU_GDPR = "eu_gdpr"
    UK_GDPR = "uk_gdpr"


REGIME_LABELS = {
    Regime.PRC: _("PRC cross-border data rules"),
    Regime.EU_GDPR: _("EU GDPR (Chapter V transfers)"),
    Regime.UK_GDPR: _("UK GDPR (restricted transfers)"),
}


class TransferMechanism:
    NOT_APPLICABLE = "not_applicable"
    ADEQUACY = "adequacy"
    EU_SCC = "eu_scc"
    UK_IDTA = "uk_idta_or_addendum"
    DEROGATION = "derogation"
    UNDETERMINED = "undetermined"


TRANSFER_MECHANISM_LABELS = {
    TransferMechanism.NOT_APPLICABLE: _("Does not apply to this transfer"),
    TransferMechanism.ADEQUACY: _("Adequacy: no further transfer mechanism needed"),
    TransferMechanism.EU_SCC: _(
        "Appropriate safeguards: EU standard contractual clauses and a transfer impact assessment"
    ),
    TransferMechanism.UK_IDTA: _(
        "Appropriate safeguards: the International Data Transfer Agreement or the UK Addendum, "
        "and a transfer risk assessment"
    ),
    TransferMechanism.DEROGATION: _("Derogation for a specific situation, named by the reviewer"),
    TransferMechanism.UNDETERMINED: _("Cannot tell yet"),
}


@dataclass(frozen=True)
class TransferFacts:
    personal_information: bool | None
    exporter: str | None  # cn / eea / uk / other
    subjects_in_eea: bool | None
    importer: str | None  # a code of IMPORTER_PLACES
    exporter_role: str | None
    importer_role: str | None
    derogation: str | None
    scc_signed: bool | None
    tia_done: bool | None
    uk_tool_signed: bool | None
    uk_tra_done: bool | None


def _value(answers: Mapping[str, Any], key: str) -> str:
    answer = answers.get(key)
    return (answer.value or "") if answer is not None else ""


def _flag(answers: Mapping[str, Any], key: str) -> bool | None:
    value = _value(answers, key)
    return None if not value else value == YES


def transfer_facts(answers: Mapping[str, Any]) -> TransferFacts:
    return TransferFacts(
        personal_information=_flag(answers, "personal_information"),
        exporter=_value(answers, "exporter_established") or None,
        subjects_in_eea=_flag(answers, "gdpr_subjects_in_eea"),
        importer=_value(answers, "importer_country") or None,
        exporter_role=_value(answers, "exporter_role") or None,
        importer_role=_value(answers, "importer_role") or None,
        derogation=_value(answers, "transfer_derogation") or None,
        scc_signed=_flag(answers, "gdpr_scc_signed"),
        tia_done=_flag(answers, "gdpr_tia_done"),
        uk_tool_signed=_flag(answers, "uk_transfer_tool_signed"),
        uk_tra_done=_flag(answers, "uk_tra_done"),
    )


@dataclass(frozen=True)
class RegimeConclusion:
    """One regime's conclusion, with its citations and what is still to be done."""

    regime: str
    applies: bool | None  # None: cannot tell yet
    mechanism: str
    reason: str
    citations: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    scc_module: int | None = None
    assessment_needed: bool = False  # a transfer impact (EU) or risk (UK) assessment
    to_do: tuple[str, ...] = ()  # what blocks approval until done
    adequacy_as_of: str | None = None  # the date of the adequacy list read
    # The PRC aid's own label (its mechanisms are its own, ``rules.MECHANISM_LABELS``).
    label_override: str | None = None

    @property
    def title(self) -> str:
        return str(REGIME_LABELS[self.regime])

    @property
    def label(self) -> str:
        if self.label_override:
            return self.label_override
        return str(TRANSFER_MECHANISM_LABELS[self.mechanism])

    @property
    def held(self) -> bool:
        return not self.to_do

    def as_dict(self) -> dict[str, Any]:
        """As the report, the packet and the API give it."""
        return {
            "regime": self.regime,
            "title": self.title,
            "applies": self.applies,
            "mechanism": self.mechanism,
            "label": self.label,
            "reason": self.reason,
            "citations": list(self.citations),
            "still_needed": list(self.missing),
            "scc_module": self.scc_module,
            "assessment_needed": self.assessment_needed,
            "to_do": list(self.to_do),
            "adequacy_as_of": self.adequacy_as_of,
        }


def _place(code: str | None) -> str:
    return str(dict(IMPORTER_PLACES).get(code or "", code or "—"))


def _labels(*keys: str) -> tuple[str, ...]:
    return tuple(str(QUESTIONS_BY_KEY[k].label) for k in keys)


def _cites(*citations: PlainCitation) -> tuple[str, ...]:
    return tuple(str(c) for c in citations)


def _undetermined(regime: str, *keys: str) -> RegimeConclusion:
    return RegimeConclusion(
        regime,
        None,
        TransferMechanism.UNDETERMINED,
        str(_("Answer the questions it depends on.")),
        missing=_labels(*keys),
    )


def _not_applicable(regime: str, reason, citation: PlainCitation) -> RegimeConclusion:
    return RegimeConclusion(
        regime, False, TransferMechanism.NOT_APPLICABLE, str(reason), _cites(citation)
    )


def _adequate(regime: str, facts: TransferFacts, adequacy: AdequacyList) -> RegimeConclusion:
    reason = _(
        "%(country)s is on the adequacy list as recorded on %(date)s: the data may go there "
        "without a further transfer mechanism."
    ) % {"country": _place(facts.importer), "date": adequacy.as_of.isoformat()}
    return RegimeConclusion(
        regime,
        True,
        TransferMechanism.ADEQUACY,
        str(reason),
        _cites(adequacy.citation),
        adequacy_as_of=adequacy.as_of.isoformat(),
    )


def _derogation(regime: str, facts: TransferFacts, citation: PlainCitation) -> RegimeConclusion:
    from apps.assessments.questions import DEROGATIONS

    named = str(dict(DEROGATIONS).get(facts.derogation or "", facts.derogation))
    reason = _(
        "No adequacy decision for %(country)s; the legal reviewer names a derogation: "
        "%(derogation)s. Derogations are exceptions for occasional transfers, not for "
        "regular or repeated ones."
    ) % {"country": _place(facts.importer), "derogation": named}
    return RegimeConclusion(
        regime, True, TransferMechanism.DEROGATION, str(reason), _cites(citation)
    )


def _has_derogation(facts: TransferFacts) -> bool:
    return facts.derogation not in (None, "none", NOT_APPLICABLE)


def _personal_data_sent(regime: str, facts: TransferFacts, cites) -> RegimeConclusion | None:
    """The conclusion where the answers stop before the regime's own test (no personal
    data sent, or not yet said; the organisation's place not yet said); None otherwise."""
    if facts.personal_information is None:
        return _undetermined(regime, "personal_information")
    if not facts.personal_information:
        return _not_applicable(
            regime, _("No personal data is sent: the transfer rules govern personal data only."),
            cites["no_personal_data"],
        )  # fmt: skip
    if facts.exporter is None:
        return _undetermined(regime, "exporter_established")
    return None


def _adequacy_or_derogation(
    regime: str, facts: TransferFacts, adequacy: AdequacyList, cites
) -> RegimeConclusion | None:
    """The conclusion for a destination with an adequacy finding, or a transfer on a
    derogation (or one not yet said); None where safeguards are needed."""
    if facts.importer in adequacy.adequate:
        return _adequate(regime, facts, adequacy)
    if facts.derogation is None:
        return _undetermined(regime, "transfer_derogation")
    if _has_derogation(facts):
        return _derogation(regime, facts, cites["derogation"])
    return None


def eu_conclusion(facts: TransferFacts, adequacy: AdequacyList = EU_ADEQUACY) -> RegimeConclusion:
    """GDPR Chapter V: does it apply, and which transfer basis it calls for."""
    regime, cites = Regime.EU_GDPR, EU_CITATIONS
    if (found := _personal_data_sent(regime, facts, cites)) is not None:
        return found
    if facts.exporter != EEA:
        if facts.subjects_in_eea is None:
            return _undetermined(regime, "gdpr_subjects_in_eea")
        if not facts.subjects_in_eea:
            return _not_applicable(
                regime,
                _("The organisation is not established in the EU or the EEA, and no data "
                  "subjects are there."),
                cites["no_eu_link"],
            )  # fmt: skip
    if facts.importer is None:
        return _undetermined(regime, "importer_country")
    if facts.importer == EEA:
        return _not_applicable(
            regime,
            _("The vendor is in the EU or the EEA: no transfer to a third country."),
            cites["inside_eea"],
        )
    if (found := _adequacy_or_derogation(regime, facts, adequacy, cites)) is not None:
        return found
    module = SCC_MODULES.get((facts.exporter_role or "", facts.importer_role or ""))
    if module is None:
        return _undetermined(regime, "exporter_role", "importer_role")
    to_do = []
    if facts.scc_signed is not True:
        to_do.append(
            str(_("EU standard contractual clauses, module %(module)s, not yet signed with the "
                  "vendor.") % {"module": module})
        )  # fmt: skip
    if facts.tia_done is not True:
        to_do.append(str(_("The transfer impact assessment is not yet completed.")))
    reason = _(
        "No adequacy decision for %(country)s (adequacy list as recorded on %(date)s): "
        "appropriate safeguards are needed, the standard contractual clauses in module "
        "%(module)s for these roles, with a transfer impact assessment of the law and practice "
        "of the destination and any supplementary measures it calls for."
    ) % {"country": _place(facts.importer), "date": adequacy.as_of.isoformat(), "module": module}
    return RegimeConclusion(
        regime,
        True,
        TransferMechanism.EU_SCC,
        str(reason),
        _cites(cites["safeguards"], cites["scc"], cites["tia_clause"], cites["tia"]),
        scc_module=module,
        assessment_needed=True,
        to_do=tuple(to_do),
        adequacy_as_of=adequacy.as_of.isoformat(),
    )


def uk_conclusion(facts: TransferFacts, adequacy: AdequacyList = UK_ADEQUACY) -> RegimeConclusion:
    """UK GDPR: a restricted transfer by a UK organisation, and what it calls for."""
    regime, cites = Regime.UK_GDPR, UK_CITATIONS
    if (found := _personal_data_sent(regime, facts, cites)) is not None:
        return found
    if facts.exporter != UK:
        return _not_applicable(
            regime,
            _("The organisation is not established in the United Kingdom."),
            cites["not_uk_exporter"],
        )
    if facts.importer is None:
        return _undetermined(regime, "importer_country")
    if facts.importer == UK:
        return _not_applicable(
            regime,
            _("The vendor is in the United Kingdom: no restricted transfer."),
            cites["inside_uk"],
        )
    if (found := _adequacy_or_derogation(regime, facts, adequacy, cites)) is not None:
        return found
    to_do = []
    if facts.uk_tool_signed is not True:
        to_do.append(
            str(_("The International Data Transfer Agreement or the UK Addendum is not yet "
                  "signed with the vendor."))
        )  # fmt: skip
    if facts.uk_tra_done is not True:
        to_do.append(str(_("The transfer risk assessment is not yet completed.")))
    reason = _(
        "No UK adequacy regulations for %(country)s (list as recorded on %(date)s): the "
        "International Data Transfer Agreement, or the UK Addendum to the EU standard "
        "contractual clauses, is needed, with a transfer risk assessment."
    ) % {"country": _place(facts.importer), "date": adequacy.as_of.isoformat()}
    return RegimeConclusion(
        regime,
        True,
        TransferMechanism.UK_IDTA,
        str(reason),
        _cites(cites["safeguards"], cites["idta"], cites["tra"]),
        assessment_needed=True,
        to_do=tuple(to_do),
        adequacy_as_of=adequacy.as_of.isoformat(),
    )


def prc_applies(collected_in_china: bool | None, exporter: str | None) -> bool | None:
    """The PRC rules govern data collected or generated in mainland China."""
    if collected_in_china is None:
        return True if exporter == CHINA else None
    return collected_in_china
