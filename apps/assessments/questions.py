"""The default data-export self-assessment questionnaire (docs/rules/data-export.md).

Each question names the rule it comes from and the section of the
official data-export risk self-assessment report (数据出境风险自评估报告) it is
reported under, so the export follows that template's structure.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy as _

from apps.core.bounds import DAYS_MAX

if TYPE_CHECKING:
    # Labels are lazy translations, rendered in the reader's language.
    from django.utils.functional import _StrOrPromise

QUESTIONNAIRE_VERSION = "2026.1"

YES, NO, NOT_APPLICABLE = "yes", "no", "not_applicable"
YES_NO_CHOICES = ((YES, _("Yes")), (NO, _("No")), (NOT_APPLICABLE, _("Not applicable")))


class Kind:
    YES_NO = "yes_no"  # yes / no / not applicable
    CHOICE = "choice"  # one of the question's own options
    COUNT = "count"  # a whole number of individuals
    YES_NO_DAYS = "yes_no_days"  # yes / no / n.a., and a number of days when yes


# The most individuals an answer counts (more than any country's population).
INDIVIDUALS_MAX = 2_000_000_000


# Sections of the official report template; the keys order the export.
SECTION_OVERVIEW = "overview"  # 一、自评估工作概述
SECTION_ACTIVITY = "activity"  # 二、出境活动整体情况
SECTION_RISK = "risk"  # 三、拟出境活动的风险评估情况
SECTION_CONCLUSION = "conclusion"  # 四、出境活动风险自评估结论

# Blocks of the browser form, in the order a legal reviewer works through them.
BLOCK_SCOPE = _("Purpose and data")
BLOCK_ACCESS = _("Access")
BLOCK_BASELINE = _("Data compliance baseline")
BLOCK_HARDWARE = _("Hardware export control and authorisation")
BLOCK_EXIT = _("Exit readiness")
BLOCK_PRC = _("PRC cross-border regime (decision aid)")


@dataclass(frozen=True)
class Question:
    key: str
    label: "_StrOrPromise"
    kind: str
    block: "_StrOrPromise"
    section: str
    source: "_StrOrPromise"
    options: "tuple[tuple[str, _StrOrPromise], ...]" = ()
    help: "_StrOrPromise" = ""

    @property
    def choices(self) -> "tuple[tuple[str, _StrOrPromise], ...]":
        return self.options if self.kind == Kind.CHOICE else YES_NO_CHOICES

    @property
    def takes_value(self) -> bool:
        return self.kind != Kind.COUNT

    @property
    def takes_number(self) -> bool:
        return self.kind in (Kind.COUNT, Kind.YES_NO_DAYS)

    @property
    def number_max(self) -> int:
        """The largest number the answer takes: days up to ten years, or individuals."""
        return DAYS_MAX if self.kind == Kind.YES_NO_DAYS else INDIVIDUALS_MAX


PURPOSES = (
    ("inference", _("Inference")),
    ("training", _("Training")),
    ("fine_tuning", _("Fine-tuning")),
)

# 《促进和规范数据跨境流动规定》(2024) Art. 5(1)–(3): exemptions for the whole transfer.
ART5_EXEMPTIONS = (
    ("none", _("None of these")),
    (NOT_APPLICABLE, _("Not applicable")),
    ("contract", _("Necessary to conclude or perform a contract with the individual (Art. 5(1))")),
    ("hr", _("Cross-border HR management under lawful labour rules (Art. 5(2))")),
    ("emergency", _("Emergency: protecting life, health or property (Art. 5(3))")),
)

# Where each question comes from, in words a reviewer can look up: the statute and
# article, or the practice it follows where no statute speaks.
SRC_ASSESSMENT_4 = _("Measures for the Security Assessment of Outbound Data Transfers, Art. 4")
SRC_ASSESSMENT_5_1 = _(
    "Measures for the Security Assessment of Outbound Data Transfers, Art. 5(1): purpose "
    "and scope of the transfer"
)
SRC_ASSESSMENT_5_2 = _(
    "Measures for the Security Assessment of Outbound Data Transfers, Art. 5(2): the data "
    "sent abroad and its risks"
)
SRC_DSL_21 = _("Data Security Law, Art. 21: data classified by importance")
SRC_PIPL_19 = _("Personal Information Protection Law, Art. 19: kept no longer than needed")
SRC_PIPL_38 = _("Personal Information Protection Law, Art. 38: a legal basis to send abroad")
SRC_PIPL_51 = _(
    "Personal Information Protection Law, Art. 51: access permissions, encryption and "
    "de-identification"
)
SRC_PIPL_54 = _("Personal Information Protection Law, Art. 54: regular compliance audits")
SRC_CSL_21 = _("Cybersecurity Law, Art. 21(3): activity logged and the logs kept")
SRC_GENAI_7 = _(
    "Interim Measures for the Management of Generative AI Services, Art. 7: lawful sources "
    "of training data"
)
SRC_EXPORT_CONTROL = _(
    "US Export Administration Regulations (advanced computing chips) and the PRC Export Control Law"
)
SRC_EXIT = _(
    "Exit strategy for a critical outsourced service, as the EU Digital Operational "
    "Resilience Act asks (Art. 28(8))"
)
SRC_SUPPLIER = _("The upstream supplier's terms of supply")
SRC_2024_2 = _("Provisions on Promoting and Regulating Cross-Border Data Flows (2024), Art. 2")
SRC_2024_4 = _("Provisions on Promoting and Regulating Cross-Border Data Flows (2024), Art. 4")
SRC_2024_5 = _(
    "Provisions on Promoting and Regulating Cross-Border Data Flows (2024), Art. 5(1)–(3)"
)
SRC_2024_5_4 = _(
    "Provisions on Promoting and Regulating Cross-Border Data Flows (2024), Art. 5(4), 7(2) and 8"
)
SRC_2024_7_1 = _("Provisions on Promoting and Regulating Cross-Border Data Flows (2024), Art. 7(1)")
SRC_2024_7_2 = _(
    "Provisions on Promoting and Regulating Cross-Border Data Flows (2024), Art. 7(2) and 8"
)

Q = Question
# fmt: off
QUESTIONS: tuple[Question, ...] = (
    Q("purpose", _("Purpose of the compute"), Kind.CHOICE, BLOCK_SCOPE, SECTION_ACTIVITY,
      SRC_ASSESSMENT_5_1, PURPOSES),
    Q("purpose_declared", _("Has the purpose of the compute been declared?"), Kind.YES_NO,
      BLOCK_SCOPE, SECTION_ACTIVITY, SRC_ASSESSMENT_5_1),
    Q("data_classified", _("Has the data been classified by sensitivity?"), Kind.YES_NO,
      BLOCK_SCOPE, SECTION_ACTIVITY, SRC_DSL_21),
    Q("raw_data_leaves", _("Must raw training or inference data be sent abroad?"), Kind.YES_NO,
      BLOCK_SCOPE, SECTION_ACTIVITY, SRC_ASSESSMENT_5_2),
    Q("personal_information", _("Does the training or inference data contain personal "
      "information?"), Kind.YES_NO, BLOCK_SCOPE, SECTION_RISK, SRC_PIPL_38),
    Q("important_data", _("Does it contain important data (as notified or published by the "
      "authorities)?"), Kind.YES_NO, BLOCK_SCOPE, SECTION_RISK, SRC_2024_2,
      help=_("2024 provisions Art. 2: data not notified or published as important data need "
             "not be declared as such.")),
    Q("export_assessment_completed", _("Has the required data-export assessment been "
      "completed?"), Kind.YES_NO, BLOCK_SCOPE, SECTION_OVERVIEW, SRC_ASSESSMENT_4),
    Q("upstream_region_constraints", _("Does the upstream supplier require a share of "
      "customers from particular regions?"), Kind.YES_NO, BLOCK_SCOPE, SECTION_ACTIVITY,
      SRC_SUPPLIER),
    Q("access_personnel_defined", _("Is the set of people who may access the remote "
      "resources defined?"), Kind.YES_NO, BLOCK_ACCESS, SECTION_ACTIVITY,
      SRC_PIPL_51),
    Q("access_traceable", _("Are access subjects and access locations traceable?"),
      Kind.YES_NO, BLOCK_ACCESS, SECTION_RISK, SRC_CSL_21),
    Q("access_logging_required", _("Must every access be fully logged?"), Kind.YES_NO,
      BLOCK_ACCESS, SECTION_RISK, SRC_CSL_21),
    Q("lawful_source", _("Is the data's source lawful and documented?"), Kind.YES_NO,
      BLOCK_BASELINE, SECTION_RISK, SRC_GENAI_7),
    Q("deidentification_rules", _("Are de-identification rules defined and applied?"),
      Kind.YES_NO, BLOCK_BASELINE, SECTION_RISK, SRC_PIPL_51),
    Q("retention_period", _("Is a retention period set for the data and artefacts?"),
      Kind.YES_NO, BLOCK_BASELINE, SECTION_RISK, SRC_PIPL_19),
    Q("audit_requirements", _("Are audit requirements defined (model versions, calls, "
      "permission and configuration changes logged)?"), Kind.YES_NO, BLOCK_BASELINE,
      SECTION_RISK, SRC_PIPL_54),
    Q("cross_border_legal_basis", _("Does the cross-border transfer have a clear legal "
      "basis?"), Kind.YES_NO, BLOCK_BASELINE, SECTION_RISK, SRC_PIPL_38),
    Q("export_control_licence", _("Are the hardware's export-control status and licences "
      "confirmed?"), Kind.YES_NO, BLOCK_HARDWARE, SECTION_RISK, SRC_EXPORT_CONTROL),
    Q("authorization_documents", _("Are the contract, authorisation documents and written "
      "spec on file (no hardware of unknown origin in production)?"), Kind.YES_NO,
      BLOCK_HARDWARE, SECTION_RISK, SRC_EXPORT_CONTROL),
    Q("image_rebuildable", _("Can the container images be rebuilt elsewhere?"), Kind.YES_NO,
      BLOCK_EXIT, SECTION_RISK, SRC_EXIT),
    Q("data_fully_exportable", _("Can all data be exported in full?"), Kind.YES_NO,
      BLOCK_EXIT, SECTION_RISK, SRC_EXIT),
    Q("orchestration_portable", _("Are the orchestration files portable to another "
      "provider?"), Kind.YES_NO, BLOCK_EXIT, SECTION_RISK,
      SRC_EXIT),
    Q("exit_bounded_time", _("Can we exit within a bounded time? (number of days)"),
      Kind.YES_NO_DAYS, BLOCK_EXIT, SECTION_RISK, SRC_EXIT),
    Q("prc_collected_in_china", _("Was the data collected or generated in mainland China?"),
      Kind.YES_NO, BLOCK_PRC, SECTION_ACTIVITY, SRC_2024_4),
    Q("prc_ciio", _("Is the data handler a critical-information-infrastructure operator?"),
      Kind.YES_NO, BLOCK_PRC, SECTION_ACTIVITY, SRC_2024_7_1),
    Q("prc_art5_exemption", _("Does the whole transfer fall under an Art. 5 exemption?"),
      Kind.CHOICE, BLOCK_PRC, SECTION_RISK, SRC_2024_5, ART5_EXEMPTIONS),
    Q("prc_individuals_non_sensitive", _("Individuals whose (non-sensitive) personal "
      "information is sent abroad since 1 January this year"), Kind.COUNT, BLOCK_PRC,
      SECTION_ACTIVITY, SRC_2024_5_4,
      help=_("Cumulative, including this transfer; leave out individuals exempt under "
             "Art. 3, 4 and 5(1)–(3).")),
    Q("prc_individuals_sensitive", _("Individuals whose sensitive personal information is "
      "sent abroad since 1 January this year"), Kind.COUNT, BLOCK_PRC, SECTION_ACTIVITY,
      SRC_2024_7_2),
)
# fmt: on

QUESTIONS_BY_KEY: dict[str, Question] = {q.key: q for q in QUESTIONS}
EXIT_READINESS_KEYS = (
    "image_rebuildable",
    "data_fully_exportable",
    "orchestration_portable",
    "exit_bounded_time",
)


def blocks() -> list[tuple[str, list[Question]]]:
    """Questions grouped by form block, in questionnaire order."""
    grouped: dict[str, list[Question]] = {}
    for question in QUESTIONS:
        grouped.setdefault(str(question.block), []).append(question)
    return list(grouped.items())
