"""The transfer regimes side by side: PRC, EU GDPR and UK GDPR (docs/rules/data-export.md).

A table of where the organisation, the data subjects and the vendor are, the
parties' roles and the kind of data, against the regimes that apply, the EU
mechanism with its SCC module and transfer impact assessment, and the UK one;
then the same conclusions through the assessment page, the API and the gate.
"""

import copy
from datetime import date

import pytest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import escape

from apps.assessments import packet as assessments_packet
from apps.assessments.questions import IMPORTER_PLACES
from apps.assessments.regimes import EU_ADEQUACY, UK_ADEQUACY
from apps.assessments.rules import (
    Answer,
    derived_constraints,
    prc_aid,
    regime_conclusions,
    regime_problems,
    regimes_considered,
    sign_off_blockers,
)
from apps.assessments.transfers import TransferMechanism as M
from tests.approvals.factories import make_ready_case
from tests.assessments.factories import complete_answers, make_assessment
from tests.factories import make_case, make_offer, make_vendor
from tests.pages import whole_case

TODAY = date(2026, 6, 1)
C, P = "controller", "processor"
NA, SCC, ADQ, IDTA = M.NOT_APPLICABLE, M.EU_SCC, M.ADEQUACY, M.UK_IDTA


def _answers(
    *, exporter, subjects_eea, importer, roles=(C, P), personal="yes", in_china="no", **more
):
    given = complete_answers(
        personal_information=personal,
        prc_collected_in_china=in_china,
        exporter_established=exporter,
        gdpr_subjects_in_eea=subjects_eea,
        importer_country=importer,
        exporter_role=roles[0],
        importer_role=roles[1],
        gdpr_scc_signed="no",
        gdpr_tia_done="no",
        uk_transfer_tool_signed="no",
        uk_tra_done="no",
        **more,
    )
    return {key: Answer(**value) for key, value in given.items()}


def _by_regime(answers) -> dict:
    aid = prc_aid(answers, on=TODAY)
    return {c.regime: c for c in regime_conclusions(answers, aid=aid)}


# exporter, data subjects in the EU/EEA, importer, roles, data kind (personal?), collected
# in China → regimes that apply, EU mechanism, SCC module, TIA needed, UK mechanism, TRA needed
ROWS = [
    # An EU-established organisation sends customer names to a vendor in a non-adequate country.
    ("eea", "yes", "other", (C, P), "yes", "no", {"eu_gdpr"}, SCC, 2, True, NA, False),
    ("eea", "yes", "us", (C, P), "yes", "no", {"eu_gdpr"}, SCC, 2, True, NA, False),
    ("eea", "no", "cn", (C, C), "yes", "no", {"eu_gdpr"}, SCC, 1, True, NA, False),
    ("eea", "yes", "other", (P, P), "yes", "no", {"eu_gdpr"}, SCC, 3, True, NA, False),
    ("eea", "yes", "other", (P, C), "yes", "no", {"eu_gdpr"}, SCC, 4, True, NA, False),
    # Adequacy: no further mechanism, no module, no impact assessment.
    ("eea", "yes", "jp", (C, P), "yes", "no", {"eu_gdpr"}, ADQ, None, False, NA, False),
    ("eea", "yes", "us_dpf", (C, P), "yes", "no", {"eu_gdpr"}, ADQ, None, False, NA, False),
    ("eea", "yes", "uk", (C, P), "yes", "no", {"eu_gdpr"}, ADQ, None, False, NA, False),
    # Inside the EEA, or no personal data: no transfer under Chapter V.
    ("eea", "yes", "eea", (C, P), "yes", "no", set(), NA, None, False, NA, False),
    ("eea", "yes", "other", (C, P), "no", "no", set(), NA, None, False, NA, False),
    # Organisation outside the EU with data subjects in it.
    ("other", "yes", "other", (C, P), "yes", "no", {"eu_gdpr"}, SCC, 2, True, NA, False),
    # A Chinese organisation sends data collected in China to a German vendor: PRC only.
    ("cn", "no", "eea", (C, P), "yes", "yes", {"prc"}, NA, None, False, NA, False),
    ("cn", "no", "other", (C, P), "yes", "yes", {"prc"}, NA, None, False, NA, False),
    # A UK organisation: the IDTA or the UK Addendum and a risk assessment, unless adequate.
    ("uk", "no", "other", (C, P), "yes", "no", {"uk_gdpr"}, NA, None, False, IDTA, True),
    ("uk", "no", "us", (C, P), "yes", "no", {"uk_gdpr"}, NA, None, False, IDTA, True),
    ("uk", "no", "eea", (C, P), "yes", "no", {"uk_gdpr"}, NA, None, False, ADQ, False),
    ("uk", "no", "kr", (C, P), "yes", "no", {"uk_gdpr"}, NA, None, False, ADQ, False),
    ("uk", "no", "us_dpf", (C, P), "yes", "no", {"uk_gdpr"}, NA, None, False, ADQ, False),
    ("uk", "no", "uk", (C, P), "yes", "no", set(), NA, None, False, NA, False),
    # A UK organisation with customers in the EU sends to a non-adequate country: both.
    ("uk", "yes", "other", (C, P), "yes", "no", {"eu_gdpr", "uk_gdpr"}, SCC, 2, True, IDTA, True),
    # Data from China by an EU organisation to a non-adequate country: PRC and EU side by side.
    ("eea", "yes", "other", (C, P), "yes", "yes", {"prc", "eu_gdpr"}, SCC, 2, True, NA, False),
]  # fmt: skip


@pytest.mark.parametrize(
    "exporter,subjects,importer,roles,personal,in_china,regimes,eu,module,tia,uk,tra", ROWS
)
def test_regime_table(
    exporter, subjects, importer, roles, personal, in_china, regimes, eu, module, tia, uk, tra
):
    answers = _answers(
        exporter=exporter,
        subjects_eea=subjects,
        importer=importer,
        roles=roles,
        personal=personal,
        in_china=in_china,
    )
    found = _by_regime(answers)
    assert {key for key, c in found.items() if c.applies} == regimes
    assert (found["eu_gdpr"].mechanism, found["eu_gdpr"].scc_module) == (eu, module)
    assert found["eu_gdpr"].assessment_needed is tia
    assert (found["uk_gdpr"].mechanism, found["uk_gdpr"].assessment_needed) == (uk, tra)
    for conclusion in found.values():
        assert conclusion.citations, conclusion  # each conclusion names its sources
    # Safeguards not yet in place are what an approval waits for, each named with its source.
    problems = " ".join(regime_problems(list(found.values())))
    if eu == M.EU_SCC:
        assert f"module {module}, not yet signed" in problems
        assert "Commission Implementing Decision (EU) 2021/914" in problems
        assert "transfer impact assessment is not yet completed" in problems
    if uk == M.UK_IDTA:
        assert "International Data Transfer Agreement" in problems
        assert "transfer risk assessment is not yet completed" in problems
    if not {eu, uk} & {M.EU_SCC, M.UK_IDTA}:
        assert problems == ""


def test_signed_safeguards_clear_the_problems_but_keep_the_constraint():
    answers = _answers(exporter="eea", subjects_eea="yes", importer="other")
    for key in ("gdpr_scc_signed", "gdpr_tia_done"):
        answers[key] = Answer("yes")
    found = _by_regime(answers)
    assert found["eu_gdpr"].held and regime_problems(list(found.values())) == []
    keys = [c.key for c in derived_constraints(answers)]
    assert "eu_gdpr_eu_scc" in keys


@pytest.mark.parametrize(
    "derogation,mechanism",
    [("consent", M.DEROGATION), ("legal_claims", M.DEROGATION), ("none", M.EU_SCC)],
)
def test_a_derogation_named_by_the_reviewer_replaces_the_safeguards(derogation, mechanism):
    answers = _answers(
        exporter="eea", subjects_eea="yes", importer="other", transfer_derogation=derogation
    )
    eu = _by_regime(answers)["eu_gdpr"]
    assert eu.mechanism == mechanism
    if mechanism == M.DEROGATION:
        assert eu.scc_module is None and not eu.assessment_needed and eu.held
        assert "Art. 49(1)" in eu.citations[0]
        assert "eu_gdpr_derogation" in [c.key for c in derived_constraints(answers)]


def test_unknown_roles_leave_the_eu_aid_undetermined_and_block_sign_off():
    answers = _answers(exporter="eea", subjects_eea="yes", importer="other", roles=("", ""))
    answers.pop("exporter_role")
    answers.pop("importer_role")
    eu = _by_regime(answers)["eu_gdpr"]
    assert eu.mechanism == M.UNDETERMINED and eu.applies is None
    assert any("role" in m for m in eu.missing)
    answers["exporter_role"] = Answer("not_applicable")
    answers["importer_role"] = Answer("not_applicable")
    blockers = sign_off_blockers(answers, conclusion="Ok.", aid=prc_aid(answers, on=TODAY))
    assert any(b.startswith("EU GDPR") and "role" in b for b in blockers)


def test_an_assessment_from_before_the_eu_and_uk_questions_keeps_its_prc_only_result():
    given = complete_answers(personal_information="yes", prc_collected_in_china="yes")
    for key in (
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
    ):
        given.pop(key)
    answers = {key: Answer(**value) for key, value in given.items()}
    found = _by_regime(answers)
    assert found["prc"].applies is True
    assert found["eu_gdpr"].applies is None and found["uk_gdpr"].applies is None
    # Nothing new blocks its approval, and its constraints are today's.
    assert regime_problems(list(found.values())) == []
    assert all(not c.key.startswith(("eu_", "uk_")) for c in derived_constraints(answers))


def test_the_aid_names_every_regime_it_considered():
    answers = _answers(exporter="cn", subjects_eea="no", importer="eea", in_china="no")
    conclusions = list(_by_regime(answers).values())
    line = regimes_considered(conclusions)
    for words in (
        "PRC cross-border data rules: does not apply",
        "EU GDPR (Chapter V transfers): does not apply",
        "UK GDPR (restricted transfers): does not apply",
    ):
        assert words in line


def test_the_adequacy_lists_are_dated_data():
    assert EU_ADEQUACY.as_of == date(2023, 7, 10) and "jp" in EU_ADEQUACY.adequate
    assert "us" not in EU_ADEQUACY.adequate and "us_dpf" in EU_ADEQUACY.adequate
    assert "eea" in UK_ADEQUACY.adequate and "uk" not in UK_ADEQUACY.adequate
    # Every country on a list is one the questionnaire offers.
    offered = {code for code, _label in IMPORTER_PLACES}
    assert EU_ADEQUACY.adequate <= offered and UK_ADEQUACY.adequate <= offered


# --- Through the page, the API and the approval gate --------------------------

ASSESSMENTS = "/api/v1/data-export-assessments/"
GERMAN_EXPORT = {
    "personal_information": {"value": "yes"},
    "export_assessment_completed": {"value": "yes"},
    "prc_collected_in_china": {"value": "no"},
    "exporter_established": {"value": "eea"},
    "gdpr_subjects_in_eea": {"value": "yes"},
    "importer_country": {"value": "other"},
    "exporter_role": {"value": "controller"},
    "importer_role": {"value": "processor"},
    "transfer_derogation": {"value": "none"},
    "gdpr_scc_signed": {"value": "no"},
    "gdpr_tia_done": {"value": "no"},
}


def test_assessment_page_and_api_show_the_regimes_side_by_side(api_as, browser_as, priya, lena):
    case = make_case(priya)
    make_offer(priya, case, vendor=make_vendor(priya, jurisdiction="India"))
    assessment = make_assessment(lena, case)
    current = api_as("lena").get(f"{ASSESSMENTS}{assessment.pk}/").json()
    response = api_as("lena").patch(
        f"{ASSESSMENTS}{assessment.pk}/",
        {"answers": GERMAN_EXPORT, "change_reason": "Names", "version": current["version"]},
        format="json",
    )
    assert response.status_code == 200, response.content
    regimes = response.json()["transfer_regimes"]
    by_regime = {c["regime"]: c for c in regimes["conclusions"]}
    assert list(by_regime) == ["prc", "eu_gdpr", "uk_gdpr"]
    eu = by_regime["eu_gdpr"]
    assert (eu["applies"], eu["mechanism"], eu["scc_module"]) == (True, "eu_scc", 2)
    assert eu["assessment_needed"] is True and eu["adequacy_as_of"] == "2023-07-10"
    assert any("Regulation (EU) 2016/679" in c for c in eu["citations"])
    assert any("Recommendations 01/2020" in c for c in eu["citations"])
    assert by_regime["prc"]["applies"] is False and by_regime["uk_gdpr"]["applies"] is False
    assert "not a legal opinion" in regimes["disclaimer"]

    html = browser_as("aude").get(reverse("assessments:detail", args=[assessment.pk]))
    page = html.content.decode()
    assert escape(regimes["considered"]) in page
    assert "Standard contractual clauses: module 2" in page
    assert "Transfer impact assessment needed" in page
    report = browser_as("aude").get(reverse("assessments:report_md", args=[assessment.pk]))
    assert "SCC module: 2" in report.content.decode()
    case_page = whole_case(browser_as("tariq"), case.pk).content.decode()
    assert escape(regimes["considered"]) in case_page
    section = assessments_packet.packet_section(case)
    packet = render_to_string(section.template, {**section.context, "section": section})
    assert escape(regimes["considered"]) in packet and "module 2" in packet


@pytest.fixture(scope="module")
def _ready(module_people):
    case, offer, _offers = make_ready_case(module_people)
    return case, offer


def _assessment_gate(api, case, offer) -> dict:
    data = api.get(f"/api/v1/cases/{case.pk}/gates/").json()
    entry = next(o for o in data["offers"] if o["offer"] == offer.pk)
    return next(g for g in entry["gates"] if g["key"] == "assessment")


def test_an_unsigned_transfer_basis_blocks_the_gate_until_done(_ready, people, api_as):
    case, offer = copy.deepcopy(_ready)
    legal, tech = api_as("lena"), api_as("tariq")
    assessment = case.data_export_assessments.get()
    assert _assessment_gate(tech, case, offer)["held"]

    def answer(given):
        current = legal.get(f"{ASSESSMENTS}{assessment.pk}/").json()
        body = {"answers": given, "change_reason": "EU customers", "version": current["version"]}
        response = legal.patch(f"{ASSESSMENTS}{assessment.pk}/", body, format="json")
        assert response.status_code == 200, response.content

    answer({**GERMAN_EXPORT, "prc_art5_exemption": {"value": "contract"}})
    gate = _assessment_gate(tech, case, offer)
    assert not gate["held"]
    assert "module 2, not yet signed" in gate["reason"]
    assert "transfer impact assessment is not yet completed" in gate["reason"]

    answer({"gdpr_scc_signed": {"value": "yes"}, "gdpr_tia_done": {"value": "yes"}})
    gate = _assessment_gate(tech, case, offer)
    assert "not yet signed" not in gate["reason"] and "not yet completed" not in gate["reason"]

    # Signed off again, the gate holds and names the EU conclusion beside the PRC one.
    version = legal.get(f"{ASSESSMENTS}{assessment.pk}/").json()["version"]
    signed = legal.post(
        f"{ASSESSMENTS}{assessment.pk}/sign-off/", {"version": version}, format="json"
    )
    assert signed.status_code == 200, signed.content
    gate = _assessment_gate(tech, case, offer)
    assert gate["held"], gate["reason"]
    assert "EU GDPR (Chapter V transfers): Appropriate safeguards" in gate["reason"]
