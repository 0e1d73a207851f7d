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
