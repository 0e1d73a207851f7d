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

# 2026.2: where the organisation, the data subjects and the vendor are, and the EU and UK
# transfer rules. Assessments answered on 2026.1 keep their version; their new questions
# read as unanswered, which leaves the PRC rules alone in force, as before.
QUESTIONNAIRE_VERSION = "2026.2"

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
BLOCK_PARTIES = _("Where the data and the parties are")
BLOCK_EU_UK = _("EU and UK transfer rules (decision aid)")


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

# Where the organisation (the exporter) is established: picks the EU and UK regimes.
EXPORTER_PLACES = (
    ("cn", _("Mainland China")),
    ("eea", _("A country of the EU or the EEA")),
    ("uk", _("United Kingdom")),
    ("other", _("Elsewhere")),
)
# Where the vendor (the importer) that receives the data is: the adequacy lists
# (apps/assessments/regimes.py) name these codes.
IMPORTER_PLACES = (
    ("cn", _("Mainland China")),
    ("eea", _("A country of the EU or the EEA")),
    ("uk", _("United Kingdom")),
    ("ad", _("Andorra")),
    ("ar", _("Argentina")),
    ("ca", _("Canada (commercial organisations)")),
    ("fo", _("Faroe Islands")),
    ("gg", _("Guernsey")),
    ("il", _("Israel")),
    ("im", _("Isle of Man")),
    ("jp", _("Japan")),
    ("je", _("Jersey")),
    ("nz", _("New Zealand")),
    ("kr", _("Republic of Korea")),
    ("ch", _("Switzerland")),
    ("uy", _("Uruguay")),
    ("us_dpf", _("United States (organisation certified under the Data Privacy Framework)")),
    ("us", _("United States (not certified under the Data Privacy Framework)")),
    ("other", _("Any other country or territory")),
)
ROLES = (
    ("controller", _("Controller (decides why and how the data is processed)")),
    ("processor", _("Processor (processes the data on another's behalf)")),
    (NOT_APPLICABLE, _("Not applicable")),
)
# GDPR and UK GDPR Art. 49(1): derogations for specific situations, named by the reviewer.
DEROGATIONS = (
    ("none", _("None: the transfer rests on adequacy or safeguards")),
    (NOT_APPLICABLE, _("Not applicable")),
    ("consent", _("Explicit consent after being told of the risks (Art. 49(1)(a))")),
    ("contract_subject", _("Necessary for a contract with the individual (Art. 49(1)(b))")),
    (
        "contract_interest",
        _("Necessary for a contract in the individual's interest (Art. 49(1)(c))"),
    ),
    ("public_interest", _("Important reasons of public interest (Art. 49(1)(d))")),
    ("legal_claims", _("Establishing, exercising or defending legal claims (Art. 49(1)(e))")),
    ("vital_interests", _("Vital interests, the individual unable to consent (Art. 49(1)(f))")),
    ("public_register", _("Made from a public register (Art. 49(1)(g))")),
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
SRC_GDPR_3_44 = _(
    "Regulation (EU) 2016/679 (GDPR), Art. 3 and 44; UK GDPR, Art. 3 and 44: who the "
    "transfer rules bind"
)
SRC_GDPR_45 = _("GDPR and UK GDPR, Art. 45: adequacy decisions and the UK adequacy regulations")
SRC_SCC_ROLES = _(
    "Commission Implementing Decision (EU) 2021/914: the module of the standard "
    "contractual clauses follows the parties' roles"
)
SRC_GDPR_49 = _("GDPR and UK GDPR, Art. 49: derogations for specific situations")
SRC_GDPR_46_TIA = _(
    "GDPR Art. 46; Decision (EU) 2021/914, Clause 14; EDPB Recommendations 01/2020 on "
    "supplementary measures"
)
SRC_UK_IDTA = _(
    "UK GDPR Art. 46; the International Data Transfer Agreement or the UK Addendum to the "
    "EU standard contractual clauses; ICO guidance on transfer risk assessments"
)
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
    Q("exporter_established", _("Where is the organisation (the exporter) established?"),
      Kind.CHOICE, BLOCK_PARTIES, SECTION_ACTIVITY, SRC_GDPR_3_44, EXPORTER_PLACES,
      help=_("The organisation that sends the data. An establishment in the EU or the EEA "
             "brings in the EU GDPR transfer rules; one in the United Kingdom, the UK GDPR "
             "ones. Data collected in mainland China brings in the PRC rules whatever the "
             "answer.")),
    Q("gdpr_subjects_in_eea", _("Are any of the individuals whose personal data is sent in "
      "the EU or the EEA?"), Kind.YES_NO, BLOCK_PARTIES, SECTION_ACTIVITY, SRC_GDPR_3_44,
      help=_("Where the people the data is about are, e.g. customers in Germany. With data "
             "subjects in the EU or the EEA, the EU GDPR transfer rules apply when the vendor "
             "is outside it.")),
    Q("importer_country", _("Where is the vendor (the importer) that receives the data?"),
      Kind.CHOICE, BLOCK_PARTIES, SECTION_ACTIVITY, SRC_GDPR_45, IMPORTER_PLACES,
      help=_("The country of the organisation that receives or can access the data; the "
             "vendor's jurisdiction on record is a guide. A United States organisation counts "
             "as certified only when it is on the Data Privacy Framework list (for UK data, "
             "with its UK Extension).")),
    Q("exporter_role", _("What is the organisation's role for this data?"), Kind.CHOICE,
      BLOCK_PARTIES, SECTION_ACTIVITY, SRC_SCC_ROLES, ROLES),
    Q("importer_role", _("What is the vendor's role for this data?"), Kind.CHOICE,
      BLOCK_PARTIES, SECTION_ACTIVITY, SRC_SCC_ROLES, ROLES,
      help=_("A compute vendor that only runs our workloads on our instructions is usually a "
             "processor.")),
    Q("transfer_derogation", _("Does the transfer rest, exceptionally, on a derogation for a "
      "specific situation?"), Kind.CHOICE, BLOCK_EU_UK, SECTION_RISK, SRC_GDPR_49,
      DEROGATIONS,
      help=_("Only for occasional transfers where no adequacy decision or safeguard can be "
             "used; the legal reviewer names which one.")),
    Q("gdpr_scc_signed", _("Are the EU standard contractual clauses, in the module the aid "
      "names, signed with the vendor?"), Kind.YES_NO, BLOCK_EU_UK, SECTION_RISK,
      SRC_GDPR_46_TIA),
    Q("gdpr_tia_done", _("Is the transfer impact assessment completed, with any "
      "supplementary measures it calls for?"), Kind.YES_NO, BLOCK_EU_UK, SECTION_RISK,
      SRC_GDPR_46_TIA),
    Q("uk_transfer_tool_signed", _("Is the International Data Transfer Agreement, or the UK "
      "Addendum to the EU standard contractual clauses, signed with the vendor?"),
      Kind.YES_NO, BLOCK_EU_UK, SECTION_RISK, SRC_UK_IDTA),
    Q("uk_tra_done", _("Is the UK transfer risk assessment completed?"), Kind.YES_NO,
      BLOCK_EU_UK, SECTION_RISK, SRC_UK_IDTA),
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
