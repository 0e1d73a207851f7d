"""Thresholds of the PRC cross-border data regime, kept as data with their sources.

The decision aid in ``rules.prc_mechanism`` reads only this table, so a change
in the rules is a new ``PrcRegime`` row with its effective date and citations,
not a change of code. Counts are individuals, cumulative since 1 January of
the current year (2024 provisions Art. 5(4), 7, 8).

The result is an aid to the legal reviewer, never a legal opinion.
"""

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class LegalSource:
    key: str
    title_zh: str
    title_en: str
    issuer: str
    published: date
    effective: date


ASSESSMENT_MEASURES_2022 = LegalSource(
    key="cac-2022-11",
    title_zh="《数据出境安全评估办法》",
    title_en="Measures for the Security Assessment of Outbound Data Transfers",
    issuer="Cyberspace Administration of China (Order No. 11)",
    published=date(2022, 7, 7),
    effective=date(2022, 9, 1),
)
CROSS_BORDER_PROVISIONS_2024 = LegalSource(
    key="cac-2024-16",
    title_zh="《促进和规范数据跨境流动规定》",
    title_en="Provisions on Promoting and Regulating Cross-Border Data Flows",
    issuer="Cyberspace Administration of China (Order No. 16)",
    published=date(2024, 3, 22),
    effective=date(2024, 3, 22),
)
CIVIL_CODE = LegalSource(
    key="civil-code",
    title_zh="《中华人民共和国民法典》",
    title_en="Civil Code of the People's Republic of China",
    issuer="National People's Congress",
    published=date(2020, 5, 28),
    effective=date(2021, 1, 1),
)
SOURCES = (ASSESSMENT_MEASURES_2022, CROSS_BORDER_PROVISIONS_2024, CIVIL_CODE)


@dataclass(frozen=True)
class Citation:
    source: LegalSource
    article: str

    def __str__(self) -> str:
        return f"{self.source.title_zh} {self.article}"


def cite(source: LegalSource, article: str) -> Citation:
    return Citation(source, article)


@dataclass(frozen=True)
class PrcRegime:
    """One state of the rules: thresholds (inclusive lower bounds) and where they come from."""

    key: str
    effective: date
    # Security assessment from this many individuals (non-sensitive PI), "100万人以上".
    assessment_min_individuals: int
    # Security assessment from this many individuals' sensitive PI, "1万人以上".
    assessment_min_sensitive: int
    # Standard contract or certification from this many individuals, "10万人以上、不满100万人".
    contract_min_individuals: int
    # Any sensitive PI below the assessment floor needs a contract or certification, "不满1万人".
    contract_min_sensitive: int
    citations: dict[str, Citation]
    note: str


# 《民法典》第一千二百五十九条: "以上" includes the number itself, "不满" excludes it;
# so exactly 1,000,000 individuals calls for a security assessment.
PRC_2024 = PrcRegime(
    key="cn-2024-03-22",
    effective=date(2024, 3, 22),
    assessment_min_individuals=1_000_000,
    assessment_min_sensitive=10_000,
    contract_min_individuals=100_000,
    contract_min_sensitive=1,
    citations={
        "important_data_identified": cite(CROSS_BORDER_PROVISIONS_2024, "第二条"),
        "collected_abroad": cite(CROSS_BORDER_PROVISIONS_2024, "第四条"),
        "no_pi_no_important_data": cite(CROSS_BORDER_PROVISIONS_2024, "第三条、第七条、第八条"),
        "art5_exemption": cite(CROSS_BORDER_PROVISIONS_2024, "第五条第一款第(一)至(三)项"),
        "below_contract_floor": cite(CROSS_BORDER_PROVISIONS_2024, "第五条第一款第(四)项"),
        "ciio": cite(CROSS_BORDER_PROVISIONS_2024, "第七条第(一)项"),
        "important_data": cite(CROSS_BORDER_PROVISIONS_2024, "第七条第(二)项"),
        "over_assessment_floor": cite(CROSS_BORDER_PROVISIONS_2024, "第七条第(二)项"),
        "contract_band": cite(CROSS_BORDER_PROVISIONS_2024, "第八条"),
        "important_data_2022": cite(ASSESSMENT_MEASURES_2022, "第四条第(一)项"),
        "self_assessment": cite(ASSESSMENT_MEASURES_2022, "第五条"),
        "inclusive_bounds": cite(CIVIL_CODE, "第一千二百五十九条"),
    },
    note=(
        "The 2024 provisions prevail over the 2022 measures where they differ; "
        "the 2022 measures still govern the self-assessment and the assessment itself."
    ),
)

REGIMES: tuple[PrcRegime, ...] = (PRC_2024,)


def regime_in_force(on: date) -> PrcRegime | None:
    """The latest regime effective on the given day, or None before the first one."""
    in_force = [r for r in REGIMES if r.effective <= on]
    return max(in_force, key=lambda r: r.effective) if in_force else None


# --- EU GDPR and UK GDPR transfer rules, as data -----------------------------
#
# Chapter V of the GDPR (Art. 44–49) and of the UK GDPR: personal data goes to a
# third country on an adequacy decision (Art. 45), else on appropriate safeguards
# (Art. 46: standard contractual clauses, with a transfer impact assessment), else,
# exceptionally, on a derogation for a specific situation (Art. 49). The adequacy
# lists below are the ones in force on their ``as_of`` date: the Commission and the
# UK government add and renew decisions, so a new list is a new row, not new code.


@dataclass(frozen=True)
class PublicSource:
    """A public text cited in plain words (the EU and UK rules have no Chinese title)."""

    key: str
    title: str
    issuer: str
    published: date


GDPR = PublicSource(
    key="eu-2016-679",
    title="Regulation (EU) 2016/679 (General Data Protection Regulation)",
    issuer="European Parliament and Council",
    published=date(2016, 4, 27),
)
EU_SCC_2021 = PublicSource(
    key="eu-2021-914",
    title=(
        "Commission Implementing Decision (EU) 2021/914 on standard contractual clauses "
        "for the transfer of personal data to third countries"
    ),
    issuer="European Commission",
    published=date(2021, 6, 4),
)
EDPB_01_2020 = PublicSource(
    key="edpb-rec-01-2020",
    title=("EDPB Recommendations 01/2020 on measures that supplement transfer tools (version 2.0)"),
    issuer="European Data Protection Board",
    published=date(2021, 6, 18),
)
UK_GDPR = PublicSource(
    key="uk-gdpr",
    title="UK GDPR and the Data Protection Act 2018 (section 17A, adequacy regulations)",
    issuer="UK Parliament",
    published=date(2018, 5, 23),
)
UK_IDTA = PublicSource(
    key="uk-idta-2022",
    title=(
        "International Data Transfer Agreement and International Data Transfer Addendum "
        "to the EU Commission Standard Contractual Clauses (laid under DPA 2018 s.119A)"
    ),
    issuer="Information Commissioner's Office",
    published=date(2022, 3, 21),
)
ICO_TRA = PublicSource(
    key="ico-tra",
    title="ICO guidance on transfer risk assessments",
    issuer="Information Commissioner's Office",
    published=date(2022, 11, 17),
)
PUBLIC_SOURCES = (GDPR, EU_SCC_2021, EDPB_01_2020, UK_GDPR, UK_IDTA, ICO_TRA)


@dataclass(frozen=True)
class PlainCitation:
    source: PublicSource
    article: str

    def __str__(self) -> str:
        return f"{self.source.title}, {self.article}" if self.article else self.source.title


# Where the organisation (the exporter) and the vendor (the importer) are, as the
# questionnaire asks it (its options, named, are ``questions.IMPORTER_PLACES``).
# ``EEA``: any member state of the EU, or Iceland, Liechtenstein or Norway. The other
# codes name a country or territory that has (or, for "us" and "other", lacks) an
# adequacy decision.
CHINA, EEA, UK, OTHER = "cn", "eea", "uk", "other"
US_DPF, US_OTHER = "us_dpf", "us"


@dataclass(frozen=True)
class AdequacyList:
    """The countries a regime deems adequate, as recorded on ``as_of``."""

    key: str
    as_of: date
    adequate: frozenset[str]
    citation: PlainCitation
    note: str


# The Commission's adequacy decisions (GDPR Art. 45(3)); the latest on this list is
# the EU-US Data Privacy Framework decision of 10 July 2023.
EU_ADEQUACY = AdequacyList(
    key="eu-adequacy-2023-07-10",
    as_of=date(2023, 7, 10),
    adequate=frozenset(
        {"ad", "ar", "ca", "fo", "gg", "il", "im", "jp", "je", "nz", "kr", "ch", UK, US_DPF, "uy"}
    ),
    citation=PlainCitation(GDPR, "Art. 45(3) and the Commission's adequacy decisions"),
    note=(
        "Canada: commercial organisations under PIPEDA only. United States: only "
        "organisations certified under the EU-US Data Privacy Framework."
    ),
)
# The UK's adequacy regulations ("data bridges", DPA 2018 s.17A); the latest on this
# list is the UK Extension to the EU-US Data Privacy Framework of 12 October 2023.
UK_ADEQUACY = AdequacyList(
    key="uk-adequacy-2023-10-12",
    as_of=date(2023, 10, 12),
    adequate=frozenset(
        {EEA, "ad", "ar", "ca", "fo", "gg", "il", "im", "jp", "je", "nz", "kr", "ch", US_DPF, "uy"}
    ),
    citation=PlainCitation(UK_GDPR, "Art. 45 UK GDPR and DPA 2018 s.17A adequacy regulations"),
    note=(
        "The EEA and Gibraltar are covered. United States: only organisations certified "
        "under the UK Extension to the EU-US Data Privacy Framework."
    ),
)

# Standard contractual clauses module by the parties' roles (Decision (EU) 2021/914,
# Annex, Section I): (exporter role, importer role) → module.
CONTROLLER, PROCESSOR = "controller", "processor"
SCC_MODULES: dict[tuple[str, str], int] = {
    (CONTROLLER, CONTROLLER): 1,
    (CONTROLLER, PROCESSOR): 2,
    (PROCESSOR, PROCESSOR): 3,
    (PROCESSOR, CONTROLLER): 4,
}

EU_CITATIONS: dict[str, PlainCitation] = {
    "no_personal_data": PlainCitation(GDPR, "Art. 44 (Chapter V governs personal data)"),
    "no_eu_link": PlainCitation(GDPR, "Art. 3 and 44"),
    "inside_eea": PlainCitation(GDPR, "Art. 44 (no transfer to a third country)"),
    "adequacy": EU_ADEQUACY.citation,
    "derogation": PlainCitation(GDPR, "Art. 49(1)"),
    "scc": PlainCitation(EU_SCC_2021, "Annex, Section I, Clause 1 (modules one to four)"),
    "safeguards": PlainCitation(GDPR, "Art. 46(2)(c)"),
    "tia": PlainCitation(EDPB_01_2020, "steps 1 to 6"),
    "tia_clause": PlainCitation(EU_SCC_2021, "Annex, Clause 14"),
}
UK_CITATIONS: dict[str, PlainCitation] = {
    "no_personal_data": PlainCitation(UK_GDPR, "Art. 44 UK GDPR"),
    "not_uk_exporter": PlainCitation(UK_GDPR, "Art. 3 and 44 UK GDPR"),
    "inside_uk": PlainCitation(UK_GDPR, "Art. 44 UK GDPR (no restricted transfer)"),
    "adequacy": UK_ADEQUACY.citation,
    "derogation": PlainCitation(UK_GDPR, "Art. 49(1) UK GDPR"),
    "idta": PlainCitation(UK_IDTA, ""),
    "safeguards": PlainCitation(UK_GDPR, "Art. 46(2)(d) UK GDPR"),
    "tra": PlainCitation(ICO_TRA, ""),
}
