"""Whose expected answers judge a correctness run, and how long a pattern may take.

Through the public surface: bundles uploaded with a harness token to POST /api/v1/evidence/,
the acceptance read back at /api/v1/acceptance-plans/<id>/state/ and the bundle's page.
docs/rules/evidence.md#expected-answers states the rule.
"""

import copy
import hashlib
import json
import time

import pytest
from diligence_harness.correctness import summarise
from diligence_harness.workload_sets import read_sample_set
from django.db import connection
from django.urls import reverse
from rest_framework.test import APIClient

from apps.evidence import recompute_acceptance
from apps.evidence.acceptance import correctness_measurements_for_offer
from apps.evidence.models import EvidenceBundle
from apps.workloads import rules as workload_rules
from apps.workloads.models import WorkloadSet
from tests.acceptance.factories import approved_offer, make_plan
from tests.evidence.factories import bundle_for, make_token, serialise
from tests.evidence.test_soak_correctness import acceptance_bundles  # noqa: F401 (fixture)
from tests.factories import FULL_SPEC, make_case, make_offer
from tests.workloads.setfiles import jsonl

pytestmark = pytest.mark.whole_case

URL = "/api/v1/evidence/"


def post(issued, document: dict):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issued.token}")
    raw = serialise(bundle_for(document, issued.record))
    return client.post(URL, data=raw, content_type="application/json")


def _reference_artifact(document: dict) -> dict:
    name = document["steps"]["correctness"]["result"]["reference"]["artifact"]
    [artifact] = [a for a in document["artifacts"] if a["name"] == name]
    return artifact


def with_reference(document: dict, reference: dict) -> dict:
    """The bundle carrying ``reference`` as its reference file, every digest made to agree:
    what anyone holding the token can write."""
    text = json.dumps(reference, sort_keys=True)
    data = text.encode("utf-8")
    artifact = _reference_artifact(document)
    assert artifact["encoding"] != "base64"
    artifact.update(content=text, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    for entry in document["manifest"]["artifacts"]:
        if entry["name"] == artifact["name"]:
            entry.update(size=artifact["size"], sha256=artifact["sha256"])
    result = document["steps"]["correctness"]["result"]
    result["reference"]["sha256"] = artifact["sha256"]
    result["summary"] = summarise(result["items"])
    return document


def forged(document: dict, *, answer, comparison=None) -> dict:
    """Every answer replaced by ``answer(item)``, and a reference file written to match
    (with ``comparison(item)`` where given), each item stated as passed."""
    doc = copy.deepcopy(document)
    result = doc["steps"]["correctness"]["result"]
    reference = json.loads(_reference_artifact(doc)["content"])
    by_id = {entry["id"]: entry for entry in reference["items"]}
    for item in result["items"]:
        entry = by_id[item["id"]]
        item["received"] = answer(item)
        item["expected"] = entry["output"] = item["received"]
        if comparison is not None:
            item["comparison"] = entry["comparison"] = comparison(item)
        item["passed"], item["reason"] = True, ""
    return with_reference(doc, reference)


def correctness_layer(api_as, plan) -> dict:
    state = api_as("aude").get(f"/api/v1/acceptance-plans/{plan.pk}/state/").json()
    return next(layer for layer in state["layers"] if layer["layer"] == "correctness")


@pytest.fixture
def world(people, tariq):
    case, offer = approved_offer(people)
    return {
        "case": case,
        "offer": offer,
        "plan": make_plan(tariq, offer),
        "issued": make_token(tariq, case, offer),
    }


# --- a reference that came only inside the bundle ----------------------------------------


def test_an_all_wrong_run_with_a_forged_reference_does_not_pass(
    world,
    api_as,
    acceptance_bundles,  # noqa: F811
):
    document = forged(
        acceptance_bundles["correctness"],
        answer=lambda item: "I do not know",
        comparison=lambda item: {"kind": "exact"},
    )
    response = post(world["issued"], document)
    assert response.status_code == 201, response.json()

    layer = correctness_layer(api_as, world["plan"])
    assert layer["status"] == "in_progress"
    [core] = [r for r in layer["reasons"] if r.startswith("Core set against the reference")]
    assert "not verified" in core and "came only inside the bundle" in core, core
    assert "100" not in core
    [run] = correctness_measurements_for_offer(world["offer"])
    assert run.verified is False


def test_the_bundle_page_says_a_run_judged_by_its_own_reference_is_not_verified(
    tariq,
    browser_as,
    acceptance_bundles,  # noqa: F811
):
    case = make_case(tariq)
    issued = make_token(tariq, case, make_offer(tariq, case, spec=FULL_SPEC))
    response = post(issued, forged(acceptance_bundles["correctness"], answer=lambda i: "no"))
    assert response.status_code == 201, response.json()
    page = browser_as("aude").get(reverse("evidence:detail", args=[response.json()["id"]]))
    assert page.status_code == 200
    assert 'id="correctness-not-verified"' in page.content.decode()


@pytest.mark.postgres  # the pinned reference is found by a JSON comparison in SQL
def test_the_same_reference_judges_once_a_tech_lead_pinned_a_run_that_carried_it(
    world,
    tariq,
    api_as,
    acceptance_bundles,  # noqa: F811
):
    own = make_token(tariq, world["case"])  # the team's own baseline hardware
    baseline = post(own, acceptance_bundles["baseline_correctness"])
    assert baseline.status_code == 201, baseline.json()
    assert post(world["issued"], acceptance_bundles["correctness"]).status_code == 201
    assert correctness_layer(api_as, world["plan"])["status"] == "in_progress"  # not yet

    pinned = api_as("tariq").post(
        "/api/v1/baselines/",
        {"bundle": baseline.json()["id"], "reason": "Our own hardware, same weights"},
        format="json",
    )
    assert pinned.status_code == 201, pinned.json()
    layer = correctness_layer(api_as, world["plan"])
    assert layer["status"] == "failed"
    [core] = [r for r in layer["reasons"] if r.startswith("Core set against the reference")]
    assert "8 of 9" in core and "arith-mul" in core, core

    # A forged reference is another file: the pinned one does not vouch for it.
    forged_run = forged(acceptance_bundles["correctness"], answer=lambda item: "no")
    assert post(world["issued"], forged_run).status_code == 201
    assert correctness_layer(api_as, world["plan"])["status"] == "in_progress"


# --- the case's own sample set -------------------------------------------------------------

SAMPLES = [
    {"id": "capital", "input": "Capital of France?", "expected": "Paris",
     "comparison": {"kind": "exact"}},
    {"id": "sum", "input": "17 + 25?", "expected": "42",
     "comparison": {"kind": "numeric", "abs_tol": 0}},
    {"id": "code", "input": "An order code, please.", "expected": r"[A-Z]{3}-\d{4}",
     "comparison": {"kind": "regex"}},
    {"id": "slow", "input": "Say many a's.", "expected": "(a|aa)+$",
     "comparison": {"kind": "regex"}},
]  # fmt: skip


def sample_set_run(document: dict, samples_raw: bytes, sha256: str, tmp_path, answers: dict):
    """A correctness run of the case's sample set, answering ``answers`` (by id), whose
    carried reference file says those answers were the expected ones."""
    path = tmp_path / "samples.jsonl"
    path.write_bytes(samples_raw)
    sample_set = read_sample_set(str(path), source="case", name="customer-samples")
    doc = copy.deepcopy(document)
    result = doc["steps"]["correctness"]["result"]
    template = result["items"][0]
    result["items"] = [
        template
        | {
            "id": item["id"],
            "core": item["core"],
            "input_sha256": item["input_sha256"],
            "comparison": item["comparison"],
            "expected": answers[item["id"]],
            "received": answers[item["id"]],
            "passed": True,
            "reason": "",
        }
        for item in sample_set.items
    ]
    doc["workload_sets"] = {"sample_set": sample_set.describe()}
    assert doc["workload_sets"]["sample_set"]["sha256"] == sha256
    reference = {
        "format": "diligence-correctness-reference/1",
        "items": [
            {k: i[k] for k in ("id", "core", "input_sha256", "comparison")}
            | {"output": i["expected"]}
            for i in result["items"]
        ],
    }
    return with_reference(doc, reference)


def test_a_run_of_the_case_sample_set_is_judged_against_the_stored_copy(
    world,
    api_as,
    acceptance_bundles,  # noqa: F811
    tmp_path,
):
    raw = jsonl(SAMPLES)
    uploaded = api_as("tariq").post(
        f"/api/v1/cases/{world['case'].pk}/workload-sets/?kind=samples&name=customer-samples",
        data=raw,
        content_type="application/x-ndjson",
    )
    assert uploaded.status_code == 201, uploaded.json()
    sha256 = WorkloadSet.objects.get().sha256
    wrong = {"capital": "Lyon", "sum": "41", "code": "nope", "slow": "a" * 40 + "!"}
    document = sample_set_run(acceptance_bundles["correctness"], raw, sha256, tmp_path, wrong)

    started = time.monotonic()
    response = post(world["issued"], document)
    assert response.status_code == 201, response.json()
    assert time.monotonic() - started < 5

    run = EvidenceBundle.objects.get(pk=response.json()["id"]).summary["correctness"]
    assert run["reference_source"] == "case_set" and run["reference_sha256"] == sha256
    assert run["reference_name"] == "customer-samples v1 (expected answers)"
    reasons = {item["id"]: item["reason"] for item in run["items"]}
    assert [item["expected"] for item in run["items"]][:3] == ["Paris", "42", r"[A-Z]{3}-\d{4}"]
    assert run["passed"] == 0 and run["core_total"] == 4
    assert reasons["slow"].startswith("not judged: the pattern took longer than")
    layer = correctness_layer(api_as, world["plan"])
    assert layer["status"] == "failed"
    [core] = [r for r in layer["reasons"] if r.startswith("Core set against the reference")]
    assert "0 of 4" in core, core

    # Right answers pass, and an item the run left out counts against it.
    right = {"capital": "Paris", "sum": "42", "code": "ABC-1234", "slow": "aaaa"}
    document = sample_set_run(acceptance_bundles["correctness"], raw, sha256, tmp_path, right)
    result = document["steps"]["correctness"]["result"]
    result["items"] = [item for item in result["items"] if item["id"] != "sum"]
    with_reference(document, json.loads(_reference_artifact(document)["content"]))
    assert post(world["issued"], document).status_code == 201
    newest = correctness_measurements_for_offer(world["offer"])[0]
    assert newest.verified
    assert {i.item_id: (i.passed, i.reason) for i in newest.items} == {
        "capital": (True, ""),
        "sum": (False, "not answered in this run"),
        "code": (True, ""),
        "slow": (True, ""),
    }


# --- patterns that never end ---------------------------------------------------------------


def test_a_pattern_that_backtracks_without_end_neither_stalls_nor_passes(
    world,
    acceptance_bundles,  # noqa: F811
):
    """The reported stall: (a+)+$ against 28 a's and a mark held the server ~15 s."""
    patterns = {
        "arith-add": ("(a+)+$", "a" * 28 + "!"),
        "arith-mul": ("(a|aa)+$", "a" * 40 + "!"),
        "arith-div": ("a" * 1001, "a" * 1001),
        # Braces re reads literally, which the regex module would read as fuzzy matching.
        "unit-seconds": ("(?:gpu){e<=1}", "gpx"),
        "sqrt-two": ("(unclosed", "(unclosed"),
    }

    def answer(item):
        return patterns[item["id"]][1] if item["id"] in patterns else "x"

    def comparison(item):
        if item["id"] in patterns:
            return {"kind": "regex"}
        return item["comparison"]

    document = forged(acceptance_bundles["correctness"], answer=answer, comparison=comparison)
    result = document["steps"]["correctness"]["result"]
    reference = json.loads(_reference_artifact(document)["content"])
    for entry in reference["items"]:
        if entry["id"] in patterns:
            entry["output"] = patterns[entry["id"]][0]
    for item in result["items"]:
        if item["id"] in patterns:
            item["expected"] = patterns[item["id"]][0]
    with_reference(document, reference)

    started = time.monotonic()
    response = post(world["issued"], document)
    elapsed = time.monotonic() - started
    assert response.status_code == 201, response.json()
    assert elapsed < 5, elapsed
    run = EvidenceBundle.objects.get(pk=response.json()["id"]).summary["correctness"]
    judged = {item["id"]: item for item in run["items"]}
    assert not any(judged[name]["passed"] for name in patterns)
    assert judged["arith-add"]["reason"] in (
        "does not match the expected pattern",
        "not judged: the pattern took longer than 0.1 s to match",
    )
    assert judged["arith-mul"]["reason"] == (
        "not judged: the pattern took longer than 0.1 s to match"
    )
    assert judged["arith-div"]["reason"] == (
        "the expected pattern is refused: longer than 1000 characters"
    )
    assert judged["unit-seconds"]["reason"] == "does not match the expected pattern"
    assert judged["sqrt-two"]["reason"].startswith(
        "the expected pattern is refused: not a regular expression"
    )


def test_a_run_spends_at_most_its_time_budget_on_patterns():
    budget = workload_rules.MatchBudget(total_s=0.25, each_s=0.1)
    reasons = [
        workload_rules.compare_answer("regex", "(a|aa)+$", "a" * 40 + "!", budget)
        for _ in range(10)
    ]
    assert all(not passed for passed, _reason in reasons)
    assert reasons[-1][1] == "not judged: this run's patterns took their 0.25 s between them"


def test_the_server_gives_a_sample_the_digest_the_harness_gives_it(tmp_path):
    lines = SAMPLES + [
        {"id": "sys", "input": "Hi", "expected": "Hello", "system": "Be brief.",
         "max_tokens": 12, "core": False, "comparison": {"kind": "exact"}},
    ]  # fmt: skip
    path = tmp_path / "samples.jsonl"
    path.write_bytes(jsonl(lines))
    harness_items = read_sample_set(str(path)).items
    server = list(workload_rules.expected_answers([jsonl(lines)], {line["id"] for line in lines}))
    assert [a.input_sha256 for a in server] == [i["input_sha256"] for i in harness_items]
    assert [a.core for a in server] == [i["core"] for i in harness_items]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_answers_are_matched_with_no_transaction_open(
    people,
    tariq,
    acceptance_bundles,  # noqa: F811
    monkeypatch,
):
    """A pattern is matched before the upload's write transaction opens, so no database
    lock (SQLite's one writer) is held while it runs."""
    case, offer = approved_offer(people)
    issued = make_token(tariq, case, offer)
    seen = []
    original = recompute_acceptance.compare

    def watched(*args, **kwargs):
        seen.append(connection.in_atomic_block)
        return original(*args, **kwargs)

    monkeypatch.setattr(recompute_acceptance, "compare", watched)
    document = forged(
        acceptance_bundles["correctness"],
        answer=lambda item: "yes",
        comparison=lambda item: {"kind": "regex"},
    )
    assert post(issued, document).status_code == 201
    assert seen and not any(seen)
