"""A representative load test (docs/rules/evidence.md#a-representative-load-test).

Where the case holds prompt sets of its own, the offer's newest load test must have run
one of them, each length tier with at least its share of the set's prompts among the
requests sent; otherwise it is a finding that holds the approval up until the tech lead
accepts it.
"""

import copy
import html
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.approvals.models import Approval
from apps.approvals.services import case_submit_for_approval
from apps.core.roles import Role
from apps.workloads.rules import CasePromptSet, load_shortfall
from tests.acceptance.factories import make_evidence
from tests.approvals.factories import make_ready_case
from tests.workloads.factories import BUILT_IN, EVEN, load_test_summary, ran
from tests.workloads.setfiles import jsonl, prompt_lines

CODE = "workloads.load_not_representative"


@pytest.fixture(scope="module")
def _world(module_people):
    case, offer, _offers = make_ready_case(module_people)
    case = case_submit_for_approval(actor=module_people["priya"], case=case)
    return {"case": case, "offer": offer}


@pytest.fixture
def world(_world, people):
    """The ready case submitted for approval; no prompt set of its own yet."""
    return copy.deepcopy(_world)


def _upload(api, world, raw: bytes, name="support tickets") -> dict:
    response = api.post(
        f"/api/v1/cases/{world['case'].pk}/workload-sets/?kind=prompts&name={name}",
        data=raw,
        content_type="application/x-ndjson",
    )
    assert response.status_code == 201, response.content
    return response.json()


def _uneven() -> bytes:
    """Six short prompts for every two medium and two long ones: 60 / 20 / 20 %."""
    lines = prompt_lines(per_tier=6)
    return jsonl([line for line in lines if line["tier"] == "short" or line["id"][-1] in "01"])


def _findings(api, world) -> list[dict]:
    response = api.get(f"/api/v1/cases/{world['case'].pk}/findings/")
    assert response.status_code == 200
    return [f for f in response.json() if f["code"] == CODE]


def _approve(api, world):
    body = {"offer": world["offer"].pk, "decision": "approved", "comment": "Load test read"}
    return api.post(f"/api/v1/cases/{world['case'].pk}/decision/", body, format="json")


def _accept(api, world, key, role=Role.TECH_LEAD):
    body = {
        "code": CODE,
        "offer": world["offer"].pk,
        "key": key,
        "role": role,
        "reason": "The vendor's endpoint serves this mix for the pilot",
        "expires_on": (timezone.localdate() + timedelta(days=90)).isoformat(),
    }
    return api.post(f"/api/v1/cases/{world['case'].pk}/findings/accept/", body, format="json")


def _set(world, uploaded: dict):
    return world["case"].workload_sets.get(pk=uploaded["id"])


def test_a_load_test_on_built_in_prompts_waits_for_the_tech_lead(api_as, people, world):
    tariq, priya = api_as("tariq"), api_as("priya")
    make_evidence(people["tariq"], world["offer"], summary=load_test_summary(prompt_set=BUILT_IN))
    # Without a prompt set of the case's own there is no mix to hold the load test to.
    assert _findings(tariq, world) == []

    _upload(tariq, world, jsonl(prompt_lines(per_tier=4)))
    [finding] = _findings(tariq, world)
    assert finding["offer"] == world["offer"].pk and finding["key"] == "set"
    assert finding["severity"] == "needs_acceptance" and finding["status"] == "open"
    assert finding["owners"] == [Role.TECH_LEAD] and finding["gate"] == "verification"
    assert "it ran the harness's built-in prompts" in finding["message"]
    assert "'support tickets'" in finding["message"]
    assert finding["fix_url"] == reverse("evidence:case", args=[world["case"].pk])
    refused = _approve(tariq, world)
    assert refused.status_code == 400
    assert any("built-in prompts" in reason for reason in refused.json()["offer"])

    assert _accept(priya, world, "set", Role.PROCUREMENT).status_code == 400  # not an owner
    assert _accept(tariq, world, "set").status_code == 201
    [accepted] = _findings(tariq, world)
    assert accepted["status"] == "accepted" and accepted["blocking"] is False
    assert _approve(tariq, world).status_code == 201
    assert Approval.objects.get(case=world["case"]).decision == "approved"


def test_a_tier_below_its_share_is_named_with_both_shares(api_as, browser_as, people, world):
    tariq = api_as("tariq")
    uploaded = _upload(tariq, world, _uneven())
    assert {t: v["count"] for t, v in uploaded["statistics"]["tiers"].items()} == {
        "short": 6,
        "medium": 2,
        "long": 2,
    }
    # The harness sends every tier the same number of requests: a third each.
    summary = load_test_summary(prompt_set=ran(_set(world, uploaded)), sent=EVEN)
    make_evidence(people["tariq"], world["offer"], summary=summary)
    [finding] = _findings(tariq, world)
    assert finding["key"] == "tiers"
    assert "ran the case's prompt set 'support tickets' v1" in finding["message"]
    assert "the short prompts 33.3 % of the requests against 60 % of the set" in finding["message"]
    assert "medium" not in finding["message"]  # above their share: never short
    assert _approve(tariq, world).status_code == 400

    page = browser_as("tariq").get(reverse("approvals:findings", args=[world["case"].pk]))
    text = html.unescape(page.content.decode())
    row = text[text.index(f'id="finding-workloads-load_not_representative-{world["offer"].pk}') :]
    row = row[: row.index("</article>")]
    assert "Load test not representative of the case's workload" in row
    assert "Passing spec verification" in row and "Tech lead" in row

    # Accepted, it holds until a new load test changes what it rests on.
    assert _accept(tariq, world, "tiers").status_code == 201
    assert _findings(tariq, world)[0]["status"] == "accepted"
    skewed = load_test_summary(
        prompt_set=ran(_set(world, uploaded)), sent={"short": 50, "medium": 100, "long": 100}
    )
    make_evidence(people["tariq"], world["offer"], summary=skewed)
    [reopened] = _findings(tariq, world)
    assert reopened["status"] == "open" and "the short prompts 20 %" in reopened["message"]


def test_a_load_test_that_gives_each_tier_its_share_raises_nothing(api_as, people, world):
    tariq = api_as("tariq")
    even = _upload(tariq, world, jsonl(prompt_lines(per_tier=4)), name="even")
    make_evidence(
        people["tariq"],
        world["offer"],
        summary=load_test_summary(prompt_set=ran(_set(world, even))),
    )
    assert _findings(tariq, world) == []
    # An uneven set, sent at its own mix.
    uneven = _upload(tariq, world, _uneven(), name="uneven")
    mix = {"short": 126, "medium": 42, "long": 42}
    summary = load_test_summary(prompt_set=ran(_set(world, uneven)), sent=mix)
    make_evidence(people["tariq"], world["offer"], summary=summary)
    assert _findings(tariq, world) == []


@pytest.mark.parametrize(
    "sent,short",
    [
        ({"short": 55, "medium": 25, "long": 20}, []),  # 55 % against 60 %: within 5 points
        ({"short": 54, "medium": 26, "long": 20}, ["short"]),
        ({"short": 60, "medium": 40}, ["long"]),  # a tier not sent at all
    ],
)
def test_each_tier_gets_its_share_less_five_points(sent, short):
    case_set = CasePromptSet("s", 1, "a" * 64, {"short": 6, "medium": 2, "long": 2})
    cells = [{"prompt_set": tier, "n": n} for tier, n in sent.items()]
    found = load_shortfall([case_set], {"sha256": "a" * 64}, cells)
    if not short:
        assert found is None
    else:
        assert found is not None and found.key == "tiers"
        assert [t for t in ("short", "medium", "long") if f"the {t} prompts" in found.message] == (
            short
        )


def test_nothing_to_judge_without_a_load_test_or_a_case_set():
    case_set = CasePromptSet("s", 1, "a" * 64, {"short": 1})
    assert load_shortfall([case_set], BUILT_IN, []) is None  # no load test in the bundle
    assert load_shortfall([], BUILT_IN, [{"prompt_set": "short", "n": 3}]) is None
    unrecorded = load_shortfall([case_set], None, [{"prompt_set": "short", "n": 3}])
    assert unrecorded is not None and "no recorded prompt set" in unrecorded.message
