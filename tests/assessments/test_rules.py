"""The pure rules of the data-export self-assessment, table by table.

Thresholds cite 《促进和规范数据跨境流动规定》(2024) Art. 5, 7, 8 and the Civil Code
Art. 1259 reading of "以上" (inclusive) and "不满" (exclusive).
"""

from datetime import UTC, date, datetime
from types import SimpleNamespace

import pytest

from apps.assessments.questions import EXIT_READINESS_KEYS, QUESTIONS, QUESTIONS_BY_KEY
from apps.assessments.regimes import PRC_2024, REGIMES, SOURCES, regime_in_force
from apps.assessments.rules import (
    Answer,
    Mechanism,
    PrcFacts,
    answers_errors,
    assessment_state,
    default_review_by,
    derived_constraints,
    edit_voids_sign_off,
    exit_gaps,
    exit_readiness_answered,
    governing_assessment,
    jurisdictions_differ,
    prc_aid,
    prc_mechanism,
    review_by_errors,
    sign_off_blockers,
    state_of,
)


def answers(**values):
    """``key="yes"`` or ``key=("yes", 30)`` or ``key=12000`` for counts."""
    result = {}
    for key, given in values.items():
        if isinstance(given, tuple):
            result[key] = Answer(*given)
        elif isinstance(given, int):
            result[key] = Answer("", given)
        else:
            result[key] = Answer(given)
    return result


EXIT_READY = dict(
    image_rebuildable="yes",
    data_fully_exportable="yes",
    orchestration_portable="yes",
    exit_bounded_time=("yes", 30),
)

LICENCE = "Export licence filed with the contract"
# docs/rules/data-export.md#hard-requirements: each "yes" with its document on file.
HARDWARE_ON_FILE = {
    "export_control_licence": Answer("yes", note=LICENCE),
    "authorization_documents": Answer("yes", attachment="assessments/origin.pdf"),
}


# docs/rules/data-export.md: every question the rule asks.
SEED_QUESTIONS = [
    "purpose",  # 算力用途(推理/训练/微调)
    "purpose_declared",  # 算力用途是否已申报
    "data_classified",  # 数据分级
    "raw_data_leaves",  # 是否需要出境
    "personal_information",  # 是否含个人信息
    "important_data",  # 或重要数据
    "export_assessment_completed",  # 是否已完成必要的数据出境评估
    "upstream_region_constraints",  # 上游供应方对客户地域构成是否有比例要求
    "access_personnel_defined",  # 访问人员范围
    "access_traceable",  # 访问主体与访问地点是否可追溯
    "access_logging_required",  # 访问行为需完整留痕
    "lawful_source",  # 来源合法性
    "deidentification_rules",  # 脱敏规则
    "retention_period",  # 留存期限
    "audit_requirements",  # 审计要求 / 可审计
    "cross_border_legal_basis",  # 跨境传输需有明确依据
    "export_control_licence",  # 出口管制与许可
    "authorization_documents",  # 授权凭证
    "image_rebuildable",  # 镜像可重建
    "data_fully_exportable",  # 数据可全量导出
    "orchestration_portable",  # 编排文件可迁移
    "exit_bounded_time",  # 可在限定时间内迁移退出
    "prc_collected_in_china",  # PRC decision aid inputs (issue 3)
    "prc_ciio",
    "prc_art5_exemption",
    "prc_individuals_non_sensitive",
    "prc_individuals_sensitive",
    # Where the data and the parties are, picking the EU GDPR and UK GDPR regimes.
    "exporter_established",
    "gdpr_subjects_in_eea",
    "importer_country",
    "exporter_role",
    "importer_role",
    "transfer_derogation",
    "gdpr_scc_signed",
    "gdpr_tia_done",
    "uk_transfer_tool_signed",
    "uk_tra_done",
]


def test_every_seed_question_is_in_the_default_questionnaire():
    assert [q.key for q in QUESTIONS] == SEED_QUESTIONS
    # The written conclusion (书面结论) is the assessment's own field, required to sign off.
    blockers = sign_off_blockers({}, conclusion="", aid=prc_aid({}, on=date(2026, 1, 1)))
    assert any("conclusion" in b for b in blockers)
    assert set(EXIT_READINESS_KEYS) <= set(QUESTIONS_BY_KEY)
    assert all(q.source for q in QUESTIONS)


@pytest.mark.parametrize(
    "given,errors",
    [
        ({"personal_information": {"value": "yes"}}, set()),
        ({"personal_information": {"value": ""}}, set()),
        ({"personal_information": {"value": "maybe"}}, {"personal_information"}),
        ({"purpose": {"value": "training"}}, set()),
        ({"purpose": {"value": "yes"}}, {"purpose"}),
        ({"no_such_question": {"value": "yes"}}, {"no_such_question"}),
        ({"prc_individuals_sensitive": {"number": 12}}, set()),
        ({"prc_individuals_sensitive": {"number": "lots"}}, {"prc_individuals_sensitive__number"}),
        ({"prc_individuals_sensitive": {"number": -1}}, {"prc_individuals_sensitive__number"}),
        ({"prc_individuals_sensitive": {"value": "yes"}}, {"prc_individuals_sensitive"}),
        ({"personal_information": {"number": 3}}, {"personal_information__number"}),
        ({"exit_bounded_time": {"value": "yes", "number": 45}}, set()),
    ],
)
def test_answer_input_errors_name_the_field(given, errors):
    found = answers_errors(given)
    assert set(found) == errors
    for key in errors:
        assert found[key]


def test_unknown_value_error_lists_the_allowed_answers():
    message = answers_errors({"important_data": {"value": "maybe"}})["important_data"]
    assert "'maybe'" in message and "yes, no, not_applicable" in message


# --- Derived constraints (docs/rules/data-export.md#derived-constraints) -------

CONSTRAINT_CASES = [
    ("nothing answered: only exit gaps", {}, {"exit_gaps"}),
    ("PI, not cleared", dict(personal_information="yes", **EXIT_READY), {"data_stays"}),
    (
        "important data, not cleared",
        dict(important_data="yes", export_assessment_completed="no", **EXIT_READY),
        {"data_stays"},
    ),
    (
        "PI cleared by a completed assessment",
        dict(personal_information="yes", export_assessment_completed="yes", **EXIT_READY),
        set(),
    ),
    ("raw data stays by decision", dict(raw_data_leaves="no", **EXIT_READY), {"data_stays"}),
    ("no PI, no important data", dict(personal_information="no", **EXIT_READY), set()),
    ("full logging", dict(access_logging_required="yes", **EXIT_READY), {"one_entry_point"}),
    ("untraceable access", dict(access_traceable="no", **EXIT_READY), {"one_entry_point"}),
    ("traceable, no logging duty", dict(access_traceable="yes", **EXIT_READY), set()),
    (
        "hardware licence missing",
        dict(export_control_licence="no", **EXIT_READY),
        {"hardware_not_cleared"},
    ),
    ("region quota", dict(upstream_region_constraints="yes", **EXIT_READY), {"supply_may_tighten"}),
]


@pytest.mark.parametrize(
    "label,given,expected", CONSTRAINT_CASES, ids=[c[0] for c in CONSTRAINT_CASES]
)
def test_derived_constraints(label, given, expected):
    assert {c.key for c in derived_constraints(answers(**given))} == expected


def test_data_stays_constraint_says_what_may_be_sent_and_why():
    (constraint,) = derived_constraints(answers(personal_information="yes", **EXIT_READY))
    assert "only de-identified, synthetic or feature data may be sent" in constraint.text
    assert any("personal information" in reason for reason in constraint.because)


def test_exit_gap_constraint_lists_each_gap():
    given = answers(image_rebuildable="no", data_fully_exportable="yes", exit_bounded_time="yes")
    gaps = exit_gaps(given)
    assert len(gaps) == 3  # image "no", orchestration unanswered, bounded exit without days
    assert any("number of days not stated" in g for g in gaps)
    (constraint,) = [c for c in derived_constraints(given) if c.key == "exit_gaps"]
    assert constraint.because == tuple(gaps)


@pytest.mark.parametrize(
    "given,answered",
    [
        (EXIT_READY, True),
        ({**EXIT_READY, "exit_bounded_time": "no"}, True),  # answered "no" is answered
        ({**EXIT_READY, "exit_bounded_time": "yes"}, False),  # days missing
        ({k: v for k, v in EXIT_READY.items() if k != "image_rebuildable"}, False),
        ({**EXIT_READY, "orchestration_portable": "not_applicable"}, True),
    ],
)
def test_exit_readiness_answered(given, answered):
    assert exit_readiness_answered(answers(**given)) is answered
    record = SimpleNamespace(answer_map=lambda: answers(**given))
    assert exit_readiness_answered(record) is answered
    assert exit_readiness_answered(None) is False


# --- Sign-off, review-by and expiry (docs/rules/data-export.md#review-by-date) ---

SIGNED = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "signed_off_at,review_by,today,expected",
    [
        (None, None, date(2026, 1, 10), (False, False, None)),
        (SIGNED, date(2026, 4, 10), date(2026, 4, 9), (True, False, date(2026, 4, 10))),
        # Exactly on the review-by date it still holds; the day after it has expired.
        (SIGNED, date(2026, 4, 10), date(2026, 4, 10), (True, False, date(2026, 4, 10))),
        (SIGNED, date(2026, 4, 10), date(2026, 4, 11), (True, True, date(2026, 4, 10))),
    ],
)
def test_state_and_expiry(signed_off_at, review_by, today, expected):
    assert (
        tuple(state_of(signed_off_at=signed_off_at, review_by=review_by, today=today)) == expected
    )
    record = SimpleNamespace(signed_off_at=signed_off_at, review_by=review_by)
    assert tuple(assessment_state(record, today)) == expected
    assert tuple(assessment_state(None, today)) == (False, False, None)


def test_default_review_by_is_ninety_days_after_sign_off():
    assert default_review_by(date(2026, 1, 10)) == date(2026, 4, 10)
    assert default_review_by(date(2024, 12, 31)) == date(2025, 3, 31)


def test_review_by_cannot_precede_sign_off():
    assert review_by_errors(date(2026, 1, 9), signed_on=date(2026, 1, 10))
    assert review_by_errors(date(2026, 1, 10), signed_on=date(2026, 1, 10)) == []


@pytest.mark.parametrize(
    "signed_off,changed,voids",
    [(True, True, True), (True, False, False), (False, True, False), (False, False, False)],
)
def test_editing_after_sign_off_voids_it(signed_off, changed, voids):
    assert edit_voids_sign_off(signed_off=signed_off, changed=changed) is voids


# --- Which assessment governs an offer ------------------------------------------


def _assessment(jurisdiction):
    return SimpleNamespace(jurisdiction=jurisdiction)


@pytest.mark.parametrize(
    "case_j,offer_has_own,vendor_j,expected",
    [
        ("Singapore", False, "Singapore", "case"),
        ("singapore ", False, "Singapore", "case"),  # spelling differences do not matter
        ("", False, "Japan", "case"),  # a case assessment without jurisdiction covers all
        ("Singapore", False, "Japan", None),  # differs and no offer assessment: not covered
        ("Singapore", True, "Japan", "offer"),  # the offer's own overrides the case one
        ("Singapore", True, "Singapore", "offer"),
        (None, False, "Japan", None),
    ],
)
def test_offer_assessment_overrides_case_where_jurisdiction_differs(
    case_j, offer_has_own, vendor_j, expected
):
    case_level = None if case_j is None else _assessment(case_j)
    own = _assessment(vendor_j) if offer_has_own else None
    chosen = governing_assessment(
        case_assessment=case_level, offer_assessment=own, vendor_jurisdiction=vendor_j
    )
    assert chosen is {"case": case_level, "offer": own, None: None}[expected]


def test_jurisdictions_differ():
    assert jurisdictions_differ("Singapore", "Japan")
    assert not jurisdictions_differ("", "Japan")
    assert not jurisdictions_differ("JAPAN", "japan")


# --- PRC decision aid (2024 provisions Art. 4, 5, 7, 8; 2022 measures Art. 4) -----------

SA, SCC, EX, UN = (
    Mechanism.SECURITY_ASSESSMENT,
    Mechanism.STANDARD_CONTRACT_OR_CERTIFICATION,
    Mechanism.EXEMPT,
    Mechanism.UNDETERMINED,
)


def facts(**overrides):
    base = dict(
        collected_in_china=True,
        important_data=False,
        personal_information=True,
        art5_exemption="none",
        ciio=False,
        individuals=0,
        sensitive_individuals=0,
    )
    return PrcFacts(**{**base, **overrides})


PRC_CASES = [
    (
        "collected abroad (Art. 4)",
        facts(collected_in_china=False, important_data=True),
        EX,
        "第四条",
    ),
    ("important data, non-CIIO (Art. 7(2))", facts(important_data=True), SA, "第七条第(二)项"),
    ("important data beats Art. 5", facts(important_data=True, art5_exemption="hr"), SA, "第七条"),
    ("no PI, no important data", facts(personal_information=False), EX, "第三条"),
    ("CIIO sending PI (Art. 7(1))", facts(ciio=True, individuals=10), SA, "第七条第(一)项"),
    ("CIIO under HR exemption (Art. 5(2))", facts(ciio=True, art5_exemption="hr"), EX, "第五条"),
    (
        "contract necessity (Art. 5(1))",
        facts(art5_exemption="contract", individuals=5_000_000),
        EX,
        "第五条",
    ),
    ("emergency (Art. 5(3))", facts(art5_exemption="emergency"), EX, "第五条"),
    ("0 individuals", facts(), EX, "第五条第一款第(四)项"),
    ("99,999 individuals", facts(individuals=99_999), EX, "第五条第一款第(四)项"),
    ("100,000 individuals (以上 includes)", facts(individuals=100_000), SCC, "第八条"),
    ("999,999 individuals (不满 excludes)", facts(individuals=999_999), SCC, "第八条"),
    ("1,000,000 individuals", facts(individuals=1_000_000), SA, "第七条第(二)项"),
    ("1 sensitive", facts(sensitive_individuals=1), SCC, "第八条"),
    ("9,999 sensitive", facts(sensitive_individuals=9_999), SCC, "第八条"),
    ("10,000 sensitive", facts(sensitive_individuals=10_000), SA, "第七条第(二)项"),
    (
        "n.a. exemption counts as none",
        facts(art5_exemption="not_applicable", individuals=200_000),
        SCC,
        "第八条",
    ),
]


@pytest.mark.parametrize("label,given,mechanism,article", PRC_CASES, ids=[c[0] for c in PRC_CASES])
def test_prc_decision_aid(label, given, mechanism, article):
    aid = prc_mechanism(given, PRC_2024)
    assert aid.mechanism == mechanism
    assert article in str(aid.citation)
    assert aid.regime_key == PRC_2024.key
    assert aid.disclaimer == "An aid to the legal reviewer, not a legal opinion."


@pytest.mark.parametrize(
    "given,missing",
    [
        (facts(collected_in_china=None), "mainland China"),
        (facts(important_data=None), "important data"),
        (facts(personal_information=None), "personal information"),
        (facts(art5_exemption=None), "Art. 5"),
        (facts(ciio=None), "critical-information-infrastructure"),
        (facts(individuals=None), "non-sensitive"),
        (facts(sensitive_individuals=None), "sensitive personal"),
    ],
)
def test_prc_decision_aid_names_what_it_still_needs(given, missing):
    aid = prc_mechanism(given, PRC_2024)
    assert aid.mechanism == UN and aid.citation is None
    assert any(missing in m for m in aid.missing)


def test_prc_aid_reads_answers_and_the_regime_in_force():
    given = answers(
        prc_collected_in_china="yes",
        important_data="no",
        personal_information="yes",
        prc_art5_exemption="none",
        prc_ciio="no",
        prc_individuals_non_sensitive=150_000,
        prc_individuals_sensitive=0,
    )
    assert prc_aid(given, on=date(2026, 1, 1)).mechanism == SCC
    before = prc_aid(given, on=date(2024, 3, 21))
    assert before.mechanism == UN and "No PRC regime" in before.reason


def test_regime_table_cites_its_sources_and_effective_dates():
    assert regime_in_force(date(2024, 3, 22)) is PRC_2024
    assert regime_in_force(date(2024, 3, 21)) is None
    assert PRC_2024.effective == date(2024, 3, 22)
    keys = {s.key for s in SOURCES}
    for regime in REGIMES:
        assert regime.citations and all(c.source.key in keys for c in regime.citations.values())
    titles = {c.source.title_zh for c in PRC_2024.citations.values()}
    assert {"《数据出境安全评估办法》", "《促进和规范数据跨境流动规定》"} <= titles
    assert (
        PRC_2024.assessment_min_individuals,
        PRC_2024.assessment_min_sensitive,
        PRC_2024.contract_min_individuals,
    ) == (1_000_000, 10_000, 100_000)


def test_sign_off_blockers():
    full = {q.key: Answer("yes") for q in QUESTIONS if q.takes_value}
    full.update(HARDWARE_ON_FILE)
    full["purpose"] = Answer("inference")
    full["prc_art5_exemption"] = Answer("none")
    full["exit_bounded_time"] = Answer("yes", 30)
    full["prc_collected_in_china"] = Answer("no")
    aid = prc_aid(full, on=date(2026, 1, 1))
    assert sign_off_blockers(full, conclusion="Cleared.", aid=aid) == []
    assert sign_off_blockers(full, conclusion=" ", aid=aid)
    full["exit_bounded_time"] = Answer("yes")
    assert any("days" in b for b in sign_off_blockers(full, conclusion="Cleared.", aid=aid))
    full["exit_bounded_time"] = Answer("yes", 30)
    full["prc_collected_in_china"] = Answer("yes")
    full["important_data"] = Answer("no")
    full["prc_ciio"] = Answer("no")
    aid = prc_aid(full, on=date(2026, 1, 1))  # counts missing
    assert any("PRC decision aid" in b for b in sign_off_blockers(full, conclusion="x", aid=aid))


# --- Hard requirements: exit readiness with evidence; export control never skipped ---

NOTE = "Runbook tested on staging"
EXIT_CONFIRMED = {
    "image_rebuildable": Answer("yes", note=NOTE),
    "data_fully_exportable": Answer("yes", attachment="assessments/export-test.pdf"),
    "orchestration_portable": Answer("yes", note=NOTE),
    "exit_bounded_time": Answer("yes", 30, note=NOTE),
}


@pytest.mark.parametrize(
    "change,gap",
    [
        ({}, None),
        ({"image_rebuildable": Answer("no", note=NOTE)}, "(answered 'No')"),
        ({"image_rebuildable": Answer("not_applicable", note=NOTE)}, "(answered 'Not applicable')"),
        ({"orchestration_portable": Answer("")}, "(not answered)"),
        ({"data_fully_exportable": None}, "(not answered)"),
        ({"image_rebuildable": Answer("yes")}, "(no evidence note or attachment)"),
        ({"image_rebuildable": Answer("yes", note="   ")}, "(no evidence note or attachment)"),
        ({"exit_bounded_time": Answer("yes", None, note=NOTE)}, "(number of days not stated)"),
        ({"exit_bounded_time": Answer("no", note=NOTE)}, "(answered 'No')"),
    ],
)
def test_exit_hard_gaps(change, gap):
    from apps.assessments.rules import exit_hard_gaps

    given = {k: v for k, v in {**EXIT_CONFIRMED, **change}.items() if v is not None}
    gaps = exit_hard_gaps(given)
    if gap is None:
        assert gaps == []
    else:
        assert len(gaps) == 1 and gaps[0].endswith(gap)
        (key,) = change
        assert gaps[0].startswith(str(QUESTIONS_BY_KEY[key].label))


@pytest.mark.parametrize(
    "days,window,gap",
    [
        (30, None, None),  # the case states no need: any stated number holds
        (30, 30, None),  # exactly the need holds
        (30, 45, None),
        (31, 30, "(31 days, longer than the 30 days the case needs)"),
        (1200, 30, "(1,200 days, longer than the 30 days the case needs)"),
    ],
)
def test_exit_hard_gaps_hold_the_stated_exit_to_the_cases_window(days, window, gap):
    from apps.assessments.rules import exit_hard_gaps

    given = {**EXIT_CONFIRMED, "exit_bounded_time": Answer("yes", days, note=NOTE)}
    gaps = exit_hard_gaps(given, window)
    if gap is None:
        assert gaps == []
    else:
        assert gaps == [f"{QUESTIONS_BY_KEY['exit_bounded_time'].label} {gap}"]


@pytest.mark.parametrize(
    "export_control,authorisation,gaps,named",
    [
        (("yes", LICENCE), ("yes", "", "origin.pdf"), 0, ""),
        (("no", LICENCE), ("yes", LICENCE), 1, "answered 'No'"),
        (("yes", LICENCE), ("",), 1, "not answered"),
        (("na",), ("no",), 2, "answered '"),
        # A "yes" counts only with its document, as an exit item does.
        (("yes",), ("yes", LICENCE), 1, "no evidence note or attachment"),
        (("yes", LICENCE), ("yes", "  "), 1, "no evidence note or attachment"),
    ],
)
def test_hardware_hard_gaps_and_sign_off(export_control, authorisation, gaps, named):
    from apps.assessments.rules import hardware_hard_gaps

    def answer(value, note="", attachment=""):
        return Answer(value, note=note, attachment=attachment)

    full = {q.key: Answer("yes") for q in QUESTIONS if q.takes_value}
    full["purpose"] = Answer("inference")
    full["prc_art5_exemption"] = Answer("none")
    full["exit_bounded_time"] = Answer("yes", 30)
    full["prc_collected_in_china"] = Answer("no")
    full["export_control_licence"] = answer(*export_control)
    full["authorization_documents"] = answer(*authorisation)
    found = hardware_hard_gaps(full)
    assert len(found) == gaps
    assert all(named in gap for gap in found)
    aid = prc_aid(full, on=date(2026, 1, 1))
    blockers = sign_off_blockers(full, conclusion="Cleared.", aid=aid)
    hardware_blockers = [b for b in blockers if "export-control law" in b]
    # An unanswered item is already reported as unanswered; a "no" or a "yes" without its
    # document is refused by name.
    assert bool(hardware_blockers) == (gaps > 0 and authorisation[0] != "")


def test_every_question_cites_a_public_source_in_both_languages():
    from django.utils import translation

    for question in QUESTIONS_BY_KEY.values():
        english = str(question.source)
        assert english and not any(w in english for w in ("seed", "DESIGN", "§", ".py"))
        with translation.override("zh-hans"):
            assert str(question.source) != english, english
