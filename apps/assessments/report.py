"""The assessment in the section structure of the official report template.

《数据出境风险自评估报告(模板)》, attached to the CAC's declaration guide for the
data-export security assessment, has four parts: 一、自评估工作概述;
二、出境活动整体情况; 三、拟出境活动的风险评估情况; 四、出境活动风险自评估结论.
The same dictionary feeds the printable page, the JSON and the Markdown download.
"""

import posixpath

from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from apps.assessments.questions import (
    SECTION_ACTIVITY,
    SECTION_CONCLUSION,
    SECTION_OVERVIEW,
    SECTION_RISK,
)
from apps.assessments.selectors import AssessmentSummary

SECTIONS = (
    (SECTION_OVERVIEW, "一", "自评估工作概述", "Overview of the self-assessment"),
    (SECTION_ACTIVITY, "二", "出境活动整体情况", "The export activity as a whole"),
    (SECTION_RISK, "三", "拟出境活动的风险评估情况", "Risk assessment of the proposed export"),
    (SECTION_CONCLUSION, "四", "出境活动风险自评估结论", "Conclusion of the self-assessment"),
)
DISCLAIMER_TITLE = "PRC cross-border regime — decision aid"
REGIMES_TITLE = "Transfer regimes side by side — decision aid"


def _who(user) -> str | None:
    return None if user is None else (user.get_full_name() or user.get_username())


def _item(row) -> dict:
    answer = row.answer
    return {
        "key": row.question.key,
        "question": str(row.question.label),
        "answer": row.display or None,
        "note": answer.note if answer else "",
        "attachment": posixpath.basename(answer.attachment.name)
        if answer and answer.attachment
        else None,
        "source": str(row.question.source),
    }


def build_report(summary: AssessmentSummary) -> dict:
    assessment = summary.assessment
    by_section: dict[str, list[dict]] = {key: [] for key, *_rest in SECTIONS}
    for row in summary.rows:
        by_section[row.question.section].append(_item(row))
    aid = summary.aid
    facts = {
        "case": assessment.case.name,
        "scope": str(assessment.offer.vendor) if assessment.offer is not None else "whole case",
        "jurisdiction": assessment.jurisdiction or "every vendor of the case",
        "questionnaire_version": assessment.questionnaire_version,
        "status": summary.status,
        "signed_off_by": _who(assessment.signed_off_by),
        "signed_off_at": assessment.signed_off_at.isoformat() if assessment.signed_off_at else None,
        "review_by": assessment.review_by.isoformat() if assessment.review_by else None,
        "voided_sign_off": assessment.voided_sign_off or None,
    }
    extras: dict[str, dict[str, object]] = {
        SECTION_OVERVIEW: {"facts": facts},
        SECTION_RISK: {
            "derived_constraints": [
                {"key": c.key, "text": c.text, "because": list(c.because)}
                for c in summary.constraints
            ],
        },
        SECTION_CONCLUSION: {
            "conclusion": assessment.conclusion,
            "prc_decision_aid": {
                "mechanism": aid.mechanism,
                "label": aid.label,
                "reason": aid.reason,
                "citation": str(aid.citation) if aid.citation else None,
                "still_needed": list(aid.missing),
                "regime": aid.regime_key,
                "disclaimer": aid.disclaimer,
                "mechanism_status": summary.mechanism.text or None,
                "contradiction": summary.contradiction or None,
            },
            "regimes": {
                "considered": summary.regimes_considered,
                "disclaimer": aid.disclaimer,
                "conclusions": [c.as_dict() for c in summary.regimes],
            },
        },
    }
    return {
        "title": "数据出境风险自评估报告 — Data-export risk self-assessment report",
        "generated_at": timezone.now().isoformat(timespec="seconds"),
        "sections": [
            {
                "number": number,
                "title_zh": zh,
                "title_en": en,
                "items": by_section[key],
                **extras.get(key, {}),
            }
            for key, number, zh, en in SECTIONS
        ],
    }


def _md(text: str) -> str:
    # Answers are user text: keep them on their line and out of Markdown syntax.
    return " ".join(str(text).split()).replace("|", "\\|").replace("#", "\\#")


# How the overview's facts are named where people read them (the page, Markdown);
# the JSON keeps the keys.
FACT_LABELS = {
    "case": _("Case"),
    "scope": _("Scope"),
    "jurisdiction": _("Jurisdiction"),
    "questionnaire_version": _("Questionnaire version"),
    "status": _("Status"),
    "signed_off_by": _("Signed off by"),
    "signed_off_at": _("Signed off at"),
    "review_by": _("Review by"),
    "voided_sign_off": _("Voided sign-off"),
}
STATUS_LABELS = {"draft": _("Draft"), "signed_off": _("Signed off"), "expired": _("Expired")}


def labelled_facts(facts: dict) -> list[tuple[str, object]]:
    """The overview's facts as (label, value) pairs, each status in words."""
    return [
        (
            str(FACT_LABELS.get(name, name)),
            str(STATUS_LABELS.get(value, value)) if name == "status" else value,
        )
        for name, value in facts.items()
    ]


def report_markdown(report: dict) -> str:
    lines = [f"# {report['title']}", "", f"_Generated {report['generated_at']}_", ""]
    for section in report["sections"]:
        lines += [f"## {section['number']}、{section['title_zh']} — {section['title_en']}", ""]
        for label, value in labelled_facts(section.get("facts", {})):
            lines.append(f"- **{label}**: {_md(str(value)) if value else '—'}")
        if section["items"]:
            lines += ["", "| Question | Answer | Note | Attachment |", "| --- | --- | --- | --- |"]
            for item in section["items"]:
                lines.append(
                    f"| {_md(item['question'])} | {_md(item['answer'] or '—')} | "
                    f"{_md(item['note']) or ''} | {_md(item['attachment'] or '')} |"
                )
        if "derived_constraints" in section:
            lines += ["", "### Derived constraints", ""]
            for c in section["derived_constraints"] or [{"text": "None.", "because": []}]:
                because = f" (because: {_md('; '.join(c['because']))})" if c["because"] else ""
                lines.append(f"- {_md(c['text'])}{because}")
        if "conclusion" in section:
            lines += ["", _md(section["conclusion"]) or "_No written conclusion yet._"]
            aid = section["prc_decision_aid"]
            lines += [
                "",
                f"### {DISCLAIMER_TITLE}",
                "",
                f"> {aid['disclaimer']}",
                "",
                f"- **Mechanism**: {aid['label']}",
                f"- **Why**: {_md(aid['reason'])}",
                f"- **Source**: {aid['citation'] or '—'}",
            ]
            if aid["still_needed"]:
                lines.append(f"- **Still needed**: {_md('; '.join(aid['still_needed']))}")
            if aid["mechanism_status"]:
                lines.append(f"- **Status**: {_md(aid['mechanism_status'])}")
            if aid["contradiction"]:
                lines.append(f"- **Contradiction**: {_md(aid['contradiction'])}")
            regimes = section["regimes"]
            lines += ["", f"### {REGIMES_TITLE}", "", f"> {regimes['disclaimer']}", ""]
            lines += [_md(regimes["considered"]), ""]
            for c in regimes["conclusions"]:
                lines.append(f"- **{_md(c['title'])}**: {_md(c['label'])}. {_md(c['reason'])}")
                if c["scc_module"]:
                    lines.append(f"  - SCC module: {c['scc_module']}")
                if c["assessment_needed"]:
                    lines.append("  - Transfer impact / risk assessment: needed")
                if c["citations"]:
                    lines.append(f"  - Sources: {_md('; '.join(c['citations']))}")
                if c["still_needed"]:
                    lines.append(f"  - Still needed: {_md('; '.join(c['still_needed']))}")
                if c["to_do"]:
                    lines.append(f"  - Still to do: {_md(' '.join(c['to_do']))}")
        lines.append("")
    return "\n".join(lines)
