"""The cost guardrails held against the bills, and the unit costs (docs/rules/costs.md).

A bill whose GPUs sat idle beyond the limit, or that lists a training job beyond its
cap, is a finding of the case's register: the offer the bills are for cannot be approved
until its owners accept it. The unit costs divide the bills by what the offer's newest
load test served at its safe level, on the costs page, its API and the packet; a value
missing leaves them "not computable", never zero.
"""

import copy
import html
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from apps.approvals.models import Approval
from apps.approvals.services import case_submit_for_approval
from apps.core.roles import Role
from apps.core.services import tracked_update
from apps.costs.packet import packet_section
from apps.costs.rules import PeriodUsage, guardrail_breaches, unit_costs
from tests.acceptance.factories import load_summary, make_evidence
from tests.approvals.factories import make_ready_case
from tests.costs.factories import (
    CLEAN,
    HEADER,
    IDLE,
    TRAINING_HEADER,
    bill_csv,
    make_budget,
    make_import,
)
from tests.workloads.factories import load_test_summary

IDLE_CODE = "costs.idle_over_limit"
CAP_CODE = "costs.training_cap_exceeded"
READERS = ["priya", "lena", "tariq", "fiona", "aude", "ada"]
# CLEAN without its count of requests.
NO_REQUESTS = ",".join(c if i != 4 else "" for i, c in enumerate(CLEAN.split(",")))


@pytest.fixture(scope="module")
def _world(module_people):
    """The ready case submitted for approval; its budget picks the ready offer (so the
    bills are about it) and caps each training job at 25,000 USD and 72 hours."""
    people = module_people
    case, offer, _offers = make_ready_case(people)
    make_budget(
        people["priya"],
        case,
        offer=offer,
        training_max_spend=Decimal("25000"),
        training_max_run_hours=Decimal("72"),
    )
    case = case_submit_for_approval(actor=people["priya"], case=case)
    return {"case": case, "offer": offer}


@pytest.fixture
def world(_world, people):
    return copy.deepcopy(_world)


def _in(days: int) -> str:
    return (timezone.localdate() + timedelta(days=days)).isoformat()


def _register(api, world, code) -> list[dict]:
    response = api.get(f"/api/v1/cases/{world['case'].pk}/findings/")
    assert response.status_code == 200
    return [f for f in response.json() if f["code"] == code]


def _approvable(api, world) -> bool:
    gates = api.get(f"/api/v1/cases/{world['case'].pk}/gates/").json()
    return next(o for o in gates["offers"] if o["offer"] == world["offer"].pk)["all_held"]


def _approve(api, world):
    body = {"offer": world["offer"].pk, "decision": "approved", "comment": "Bills read"}
    return api.post(f"/api/v1/cases/{world['case'].pk}/decision/", body, format="json")


def _accept(api, world, code, key, role, reason="Reclaimed from next month"):
    body = {
        "code": code,
        "offer": world["offer"].pk,
        "key": key,
        "role": role,
        "reason": reason,
        "expires_on": _in(90),
    }
    return api.post(f"/api/v1/cases/{world['case'].pk}/findings/accept/", body, format="json")


def _rows(*cells: tuple[str, str], header: str = HEADER) -> dict:
    columns = header.split(",")
    return {
        "rows": [dict(zip(columns, [p, *c.split(",")], strict=True)) for p, c in cells],
        "file_name": "bill.json",
    }


# --- idle GPUs: procurement and finance ------------------------------------------------


def test_an_idle_bill_holds_the_approval_until_procurement_and_finance_accept_it(api_as, world):
    priya, fiona, tariq = api_as("priya"), api_as("fiona"), api_as("tariq")
    assert _approvable(tariq, world) is True
    assert _register(tariq, world, IDLE_CODE) == []

    # A month of the bills with 62 % of the GPU-hours idle, imported through the API.
    imported = priya.post(
        f"/api/v1/cases/{world['case'].pk}/costs/imports/",
        _rows(("2026-10", CLEAN), ("2026-11", IDLE)),
        format="json",
    )
    assert imported.status_code == 201, imported.content
    [finding] = _register(tariq, world, IDLE_CODE)
    assert finding["offer"] == world["offer"].pk and finding["key"] == "idle"
    assert finding["severity"] == "needs_acceptance" and finding["status"] == "open"
    assert finding["owners"] == [Role.PROCUREMENT, Role.FINANCE]
    assert finding["gate"] == "red_flags"
    assert "2026-11: 61.9 %" in finding["message"] and "limit of 30 %" in finding["message"]
    assert "2026-10" not in finding["message"]  # a clean month breaks nothing
    assert finding["fix_url"] == reverse("costs:case", args=[world["case"].pk]) + "#guardrails"
    assert _approvable(tariq, world) is False
    refused = _approve(tariq, world)
    assert refused.status_code == 400
    assert any("61.9 %" in reason for reason in refused.json()["offer"])

    # The tech lead owns no part of it; procurement alone is not enough.
    assert _accept(tariq, world, IDLE_CODE, "idle", Role.PROCUREMENT).status_code == 400
    assert _accept(priya, world, IDLE_CODE, "idle", Role.PROCUREMENT).status_code == 201
    [half] = _register(tariq, world, IDLE_CODE)
    assert half["status"] == "open" and half["awaiting"] == [Role.FINANCE]
    assert _approve(tariq, world).status_code == 400

    assert _accept(fiona, world, IDLE_CODE, "idle", Role.FINANCE).status_code == 201
    [accepted] = _register(tariq, world, IDLE_CODE)
    assert accepted["status"] == "accepted" and accepted["blocking"] is False
    assert _approvable(tariq, world) is True
    assert _approve(tariq, world).status_code == 201
    assert Approval.objects.get(case=world["case"]).decision == "approved"


def test_a_new_idle_month_reopens_the_accepted_finding(api_as, people, world):
    priya, fiona, tariq = api_as("priya"), api_as("fiona"), api_as("tariq")
    make_import(people["priya"], world["case"], ("2026-10", IDLE))
    assert _accept(priya, world, IDLE_CODE, "idle", Role.PROCUREMENT).status_code == 201
    assert _accept(fiona, world, IDLE_CODE, "idle", Role.FINANCE).status_code == 201
    assert _register(tariq, world, IDLE_CODE)[0]["status"] == "accepted"
    # Another idle month: not what the owners accepted.
    make_import(people["priya"], world["case"], ("2026-11", IDLE))
    [again] = _register(tariq, world, IDLE_CODE)
    assert again["status"] == "open" and again["awaiting"] == [Role.PROCUREMENT, Role.FINANCE]
    assert "2026-10: 61.9 %; 2026-11: 61.9 %" in again["message"]
    assert _approve(tariq, world).status_code == 400


# --- training caps: finance and the tech lead, on the pages ---------------------------


def _finding_row(page: str, world, code: str, key: str) -> str:
    anchor = f'id="finding-{code.replace(".", "-")}-{world["offer"].pk}-{key}"'
    start = page.index(anchor)
    return page[start : page.index("</article>", start)]


def test_a_training_job_beyond_its_cap_is_accepted_by_finance_and_the_tech_lead(
    browser_as, api_as, people, world
):
    case = world["case"]
    client = browser_as("priya")
    # The month's costliest training job cost 31,000 USD, its longest ran 60 hours.
    raw = bill_csv(("2026-11", f"{CLEAN},60,31000.00"), header=TRAINING_HEADER)
    upload = SimpleUploadedFile("bill.csv", raw, content_type="text/csv")
    response = client.post(reverse("costs:import", args=[case.pk]), {"file": upload})
    assert response.status_code == 302

    costs_page = html.unescape(client.get(reverse("costs:case", args=[case.pk])).content.decode())
    message = (
        "A training job cost more than the cap of 25,000.00 USD: the costliest billed cost "
        "2026-11: 31,000.00 USD."
    )
    assert message in costs_page
    assert "ran longer than the cap" not in costs_page  # 60 hours, within the 72 allowed
    assert "60 h / 31,000.00" in costs_page  # the month's training jobs as imported

    findings = reverse("approvals:findings", args=[case.pk])
    for name, role in (("fiona", Role.FINANCE), ("tariq", Role.TECH_LEAD)):
        page = html.unescape(browser_as(name).get(findings).content.decode())
        row = _finding_row(page, world, CAP_CODE, "training_max_spend")
        assert "Training job beyond its cap on the bills" in row and message in row
        assert "Finance approver, Tech lead" in row and "No open red flag" in row
        assert _approve(api_as("tariq"), world).status_code == 400
        accepted = browser_as(name).post(
            reverse("approvals:finding-accept", args=[case.pk]),
            {
                "code": CAP_CODE,
                "offer": world["offer"].pk,
                "key": "training_max_spend",
                "role": role,
                "reason": "A one-off run to fix a diverging loss",
                "expires_on": _in(60),
            },
        )
        assert accepted.status_code == 302, accepted.content
    [finding] = _register(api_as("aude"), world, CAP_CODE)
    assert finding["status"] == "accepted"
    assert {a["accepted_by"] for a in finding["acceptances"]} == {"fiona", "tariq"}
    assert _approve(api_as("tariq"), world).status_code == 201


def test_bills_within_the_caps_and_the_limit_raise_nothing(api_as, people, world):
    make_import(
        people["priya"],
        world["case"],
        ("2026-10", f"{CLEAN},72,25000.00"),  # exactly at both caps
        ("2026-11", f"{CLEAN},,"),  # a month that lists no training job
        header=TRAINING_HEADER,
    )
    tariq = api_as("tariq")
    assert _register(tariq, world, IDLE_CODE) == _register(tariq, world, CAP_CODE) == []
    assert _approvable(tariq, world) is True


# --- unit costs: the page, the API and the packet ------------------------------------------

# 2026-11 has 30 days: 2,592,000 s. The load test serves 16 requests/s and 3,200 output
# tokens/s at its safe level of 32 concurrent requests; the bill is 145,252.00 USD for
# 462,000 requests and 310,000,000 output tokens.
EXPECTED = {
    "per_request": "0.003502 USD",  # 145,252 ÷ (16 × 2,592,000)
    "per_million_tokens": "17.5121 USD",  # 145,252 ÷ (3,200 × 2,592,000) × 10⁶
    "per_request_served": "0.314398 USD",  # 145,252 ÷ 462,000
    "per_million_tokens_served": "468.5548 USD",  # 145,252 ÷ 310,000,000 × 10⁶
}


@pytest.fixture
def measured(people, world):
    make_import(people["priya"], world["case"], ("2026-11", CLEAN))
    make_evidence(people["tariq"], world["offer"], summary=load_test_summary())
    return world


@pytest.mark.parametrize("name", READERS)
def test_every_reader_of_the_costs_reads_the_unit_costs(browser_as, api_as, measured, name):
    case = measured["case"]
    body = api_as(name).get(f"/api/v1/cases/{case.pk}/costs/reconciliation/").json()
    units = body["unit_costs"]
    assert (units["first_period"], units["last_period"]) == ("2026-11", "2026-11")
    assert units["seconds"] == 2_592_000 and Decimal(units["spend"]) == Decimal("145252")
    assert units["throughput"]["safe_concurrency"] == 32
    assert Decimal(units["throughput"]["requests_per_s"]) == 16
    assert Decimal(units["throughput"]["output_tokens_per_s"]) == 3200
    values = {c["key"]: c for c in units["costs"]}
    assert Decimal(values["per_request"]["value"]) == Decimal("0.003502")
    assert Decimal(values["per_million_tokens_served"]["value"]) == Decimal("468.554839")
    assert all(c["computable"] for c in units["costs"])
    assert values["per_request"]["working"] == (
        "145,252.00 USD ÷ (16 requests/s at the safe level of 32 concurrent requests × "
        "2,592,000 s) = 0.003502 USD per request"
    )
    assert body["guardrail_breaches"] == []

    page = html.unescape(
        browser_as(name).get(reverse("costs:case", args=[case.pk])).content.decode()
    )
    assert "Unit costs" in page and "Guardrails against the bills" in page
    for shown in EXPECTED.values():
        assert shown in page
    assert "No guardrail broken in the newest 3 months billed." in page
    assert 'class="warn">not computable' not in page


def test_the_packet_chapter_shows_the_unit_costs_and_the_broken_guardrails(people, measured):
    make_import(people["priya"], measured["case"], ("2026-10", IDLE))
    section = packet_section(measured["case"])
    chapter = html.unescape(render_to_string(section.template, {"section": section}))
    assert "Unit costs" in chapter and "Guardrails against the bills" in chapter
    assert "2026-10: 61.9 %" in chapter
    # Two months now: 61 days of 145,252.00 USD each.
    assert "290,504.00 USD ÷ (16 requests/s at the safe level of 32" in chapter
    assert "5,270,400 s" in chapter
    assert "divided by what the offer's newest load test served per second" in chapter


def test_a_rate_searchs_goodput_at_the_slo_is_what_the_unit_costs_divide_by(
    api_as, browser_as, people, measured
):
    verification = make_evidence(people["tariq"], measured["offer"], summary=load_test_summary())
    goodput = {"rate_rps": 20.0, "goodput_req_s": 18.0, "goodput_tok_s": 3600.0, "gpus": 8}
    tracked_update(
        verification,
        actor=people["tariq"],
        reason="Rate search",
        fields={"headline": {"goodput_at_slo": goodput}},
    )
    case = measured["case"]
    units = api_as("tariq").get(f"/api/v1/cases/{case.pk}/costs/reconciliation/").json()
    throughput = units["unit_costs"]["throughput"]
    assert throughput["safe_concurrency"] is None and Decimal(throughput["rate_rps"]) == 20
    costs = {c["key"]: c for c in units["unit_costs"]["costs"]}
    assert costs["per_request"]["working"] == (
        "145,252.00 USD ÷ (18 requests/s of goodput at 20 requests/s, the highest rate of the "
        "open-loop rate search within the service levels, × 2,592,000 s) = 0.003113 USD "
        "per request"
    )
    page = html.unescape(browser_as("tariq").get(reverse("costs:case", args=[case.pk])).text)
    assert "measured by the open-loop rate search at 20 requests/s" in page


def test_unit_costs_are_not_computable_without_what_they_divide_by(api_as, people, world):
    case = world["case"]
    tariq = api_as("tariq")

    def costs() -> dict:
        body = tariq.get(f"/api/v1/cases/{case.pk}/costs/reconciliation/").json()
        return {c["key"]: c for c in body["unit_costs"]["costs"]}

    # No bill yet: nothing to divide.
    assert {c["value"] for c in costs().values()} == {None}
    assert costs()["per_request"]["working"] == "Not computable: no month is billed yet."

    # A bill that counts no requests, while the ready offer's verification holds no load test.
    make_import(people["priya"], case, ("2026-11", NO_REQUESTS))
    found = costs()
    assert found["per_request"]["value"] is None and found["per_request"]["computable"] is False
    assert found["per_request"]["working"] == "Not computable: the chosen offer has no load test."
    assert found["per_request_served"]["value"] is None
    assert "does not count its requests" in found["per_request_served"]["working"]
    assert Decimal(found["per_million_tokens_served"]["value"]) == Decimal("468.554839")

    # A load test where no level holds the service levels: no safe level to read.
    make_evidence(people["tariq"], world["offer"], summary=load_summary(p95_ms=2500.0))
    found = costs()
    assert found["per_million_tokens"]["value"] is None
    assert "no concurrency level" in found["per_million_tokens"]["working"]


def test_the_cost_page_says_not_computable_never_zero(browser_as, people, world):
    make_import(people["priya"], world["case"], ("2026-11", CLEAN))
    page = html.unescape(
        browser_as("fiona").get(reverse("costs:case", args=[world["case"].pk])).content.decode()
    )
    section = page[page.index('id="unit-costs"') : page.index('id="daily-spend"')]
    assert section.count('class="warn">not computable') == 2  # the two at the safe level
    assert "Not computable: the chosen offer has no load test." in section
    assert "0.000000 USD" not in section and "0.0000 USD" not in section
    assert EXPECTED["per_request_served"] in section


# --- the rules ------------------------------------------------------------------------------


def _month(period: str, **fields) -> PeriodUsage:
    values = dict(
        period=date.fromisoformat(f"{period}-01"),
        instance_hours=Decimal("100"),
        gpu_hours=Decimal("800"),
        tokens_in=0,
        tokens_out=0,
        storage_gib_months=Decimal(0),
        cross_region_gib=Decimal(0),
        amount=Decimal("1000"),
    )
    return PeriodUsage(**{**values, **fields})


@pytest.mark.parametrize(
    "worked,breached",
    [("800", False), ("561", False), ("560.01", False), ("560", True), ("0", True)],
)
def test_idle_at_the_limit_breaks_the_guardrail(worked, breached):
    # 100 instance-hours × 8 GPUs = 800 GPU-hours billed; 560 worked is exactly 30 % idle.
    found = guardrail_breaches(
        [_month("2026-05", gpu_hours=Decimal(worked))],
        gpus_per_instance=8,
        max_run_hours=None,
        max_spend=None,
        currency="USD",
    )
    assert bool(found) is breached


def test_only_the_newest_three_months_are_held_to_the_guardrails():
    months = [_month(f"2026-0{m}", gpu_hours=Decimal("0")) for m in (1, 2)]
    months += [_month(f"2026-0{m}") for m in (3, 4, 5)]
    found = guardrail_breaches(
        months, gpus_per_instance=8, max_run_hours=None, max_spend=None, currency="USD"
    )
    assert found == []  # the idle months are older than the newest three
    costs = unit_costs(months, None, currency="USD")
    assert (f"{costs.first:%Y-%m}", f"{costs.last:%Y-%m}") == ("2026-03", "2026-05")
    assert costs.spend == Decimal("3000") and costs.seconds == (31 + 30 + 31) * 86400
