"""The versions the acceptance plan expects, checked against what the harness measured
(docs/rules/acceptance.md#versions-the-plan-expects), and the report's columns per level
(docs/rules/acceptance.md#report)."""

import pytest
from django.urls import reverse

from apps.acceptance import packet, rules
from apps.acceptance.models import AcceptancePlan
from apps.acceptance.rules import FAILED, IN_PROGRESS, NOT_MEASURED, PASSED, MeasuredVersions
from tests.acceptance.factories import approved_offer, load_summary, make_evidence, make_plan
from tests.acceptance.test_demo_and_packet import _render

DEMO = "driver 550.127.05, CUDA 12.4, vLLM 0.6.4, NCCL 2.21.5"
SOFTWARE = {
    "python": "3.11.9",
    "torch": "2.5.1+cu124",
    "cuda_runtime": "12.4",
    "cudnn": "90100",
    "nccl": "2.21.5",
    "cublas": "12.4.5",
}
MEASURED = MeasuredVersions(inventory=True, driver="550.127.05", software=SOFTWARE)


# --- the plan's text ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "pairs"),
    [
        (DEMO, (("driver", "550.127.05"), ("CUDA", "12.4"), ("vLLM", "0.6.4"), ("NCCL", "2.21.5"))),
        ("PyTorch: 2.5; python=3.11 ; cuDNN v9.1,", (("PyTorch", "2.5"), ("python", "3.11"),
                                                    ("cuDNN", "9.1"))),
        ("NVIDIA driver 550.127.05", (("NVIDIA driver", "550.127.05"),)),
        ("", ()),
        (" , ; ", ()),
    ],
)  # fmt: skip
def test_the_plan_names_each_version(text, pairs):
    assert rules.parse_versions(text) == pairs


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("CUDA latest", "“CUDA latest” is not a name and a version, e.g. “CUDA 12.4”"),
        ("driver 550.127.05 and CUDA 12.4", "“driver 550.127.05 and CUDA 12.4” holds more"),
        ("12.4", "“12.4” is not a name and a version"),
        ("CUDA 12.4, cuda 12.5", "cuda is named twice"),
    ],
)
def test_text_that_is_not_a_list_of_versions_is_refused(text, error):
    with pytest.raises(ValueError, match=error):
        rules.parse_versions(text)


@pytest.mark.parametrize(
    ("stated", "measured", "matches"),
    [
        ("12.4", "12.4", True),
        ("12.4", "12.4.1", True),
        ("12.4", "12.40", False),
        ("12.4.1", "12.4", False),
        ("550.127.05", "550.127.05", True),
        ("550", "550.127.05", True),
        ("2.5.1", "2.5.1+cu124", True),
        ("2.5", "2.5.1+cu124", True),
        ("2.21.5", "2.21.6", False),
    ],
)
def test_a_stated_version_matches_itself_or_a_release_of_it(stated, measured, matches):
    assert rules.version_matches(stated, measured) is matches


# --- the criterion --------------------------------------------------------------------------


def _criterion(text, versions=MEASURED):
    return rules.plan_versions_criterion(rules.parse_versions(text), versions)


def test_every_version_as_measured_passes():
    criterion = _criterion("driver 550.127.05, CUDA 12.4; NCCL 2.21.5, PyTorch 2.5, cuDNN 9.1")
    assert criterion.status == PASSED, criterion
    assert criterion.measured == (
        "driver 550.127.05; CUDA 12.4; NCCL 2.21.5; PyTorch 2.5.1+cu124; cuDNN 9.1.0"
    )
    assert criterion.reason == ""


def test_a_name_the_harness_does_not_measure_is_never_a_pass():
    criterion = _criterion("TensorRT-LLM 0.9, NCCL 2.21.5")
    assert criterion.status == NOT_MEASURED
    assert criterion.reason == "TensorRT-LLM: the harness does not report the TensorRT-LLM version"
    assert "TensorRT-LLM not measured" in criterion.measured
    assert "NCCL 2.21.5" in criterion.measured


def test_serving_runtimes_are_measured_where_the_harness_found_them():
    criterion = _criterion(DEMO)
    assert criterion.status == NOT_MEASURED
    assert criterion.reason == (
        "vLLM: not installed where the harness ran (run it where the runtime is)"
    )
    assert "vLLM not measured" in criterion.measured and "NCCL 2.21.5" in criterion.measured
    found = MeasuredVersions(
        inventory=True, driver="550.127.05", software={**SOFTWARE, "vllm": "0.6.4.post1"}
    )
    assert _criterion(DEMO, found).status == PASSED
    assert _criterion("SGLang 0.3", found).status == NOT_MEASURED
    other = MeasuredVersions(software={**SOFTWARE, "sglang": "0.4.1"})
    assert _criterion("SGLang 0.3", other).status == FAILED


def test_a_mismatch_fails_naming_stated_and_measured():
    criterion = _criterion("driver 550.127.05, CUDA 12.1, vLLM 0.6.4")
    assert criterion.status == FAILED
    assert criterion.reason == (
        "CUDA: stated 12.1, measured 12.4; vLLM: not installed where the harness ran (run it "
        "where the runtime is)"
    )
    assert "measured driver 550.127.05; CUDA 12.4" in criterion.explanation


@pytest.mark.parametrize(
    ("versions", "reason"),
    [
        (None, "CUDA: no verification yet"),
        (MeasuredVersions(inventory=True, driver="550.127.05"),
         "CUDA: no environment with software versions measured yet"),
        (MeasuredVersions(inventory=True, software={"python": "3.11.9", "torch_reason": "absent"}),
         "CUDA: read through PyTorch, which the harness did not find on the machine"),
    ],
)  # fmt: skip
def test_a_version_not_measured_says_why(versions, reason):
    criterion = _criterion("CUDA 12.4", versions)
    assert criterion.status == NOT_MEASURED and criterion.reason == reason


def test_no_inventory_leaves_the_driver_not_measured():
    criterion = _criterion("driver 550", MeasuredVersions(software=SOFTWARE))
    assert criterion.status == NOT_MEASURED
    assert criterion.reason == "driver: no inventory measured yet"


def test_blank_expected_versions_leave_the_criterion_out():
    assert rules.plan_versions_criterion((), MEASURED) is None
    layer = rules.connectivity_layer(
        rules.AcceptanceInputs(
            criteria=rules.PlanCriteria(), slo=rules.Slo(1500, 0.5, 90), versions=MEASURED
        )
    )
    assert "plan_versions" not in {c.key for c in layer.criteria}
    stated = rules.connectivity_layer(
        rules.AcceptanceInputs(
            criteria=rules.PlanCriteria(expected_versions=rules.parse_versions("vLLM 0.6.4")),
            slo=rules.Slo(1500, 0.5, 90),
            versions=MEASURED,
        )
    )
    [criterion] = [c for c in stated.criteria if c.key == "plan_versions"]
    assert criterion.status == NOT_MEASURED and stated.status == IN_PROGRESS


# --- through the API and the pages ------------------------------------------------------------


def _connectivity(api, plan_id) -> dict:
    state = api.get(f"/api/v1/acceptance-plans/{plan_id}/state/").json()
    return next(layer for layer in state["layers"] if layer["layer"] == "connectivity")


def _plan_versions(api, plan_id) -> dict:
    layer = _connectivity(api, plan_id)
    return next(c for c in layer["criteria"] if c["key"] == "plan_versions")


@pytest.mark.django_db
def test_the_plans_versions_through_the_api_the_page_and_the_report(api_as, browser_as, people):
    summary = {
        **load_summary(),
        "driver": {"driver_version": "550.127.05", "cuda_driver_version": "12.6"},
        "software": SOFTWARE,
    }
    case, offer = approved_offer(people, summary=summary)
    tariq = api_as("tariq")
    url = "/api/v1/acceptance-plans/"
    bad = {"offer": offer.pk, "expected_versions": "CUDA latest"}
    refused = tariq.post(url, bad, format="json")
    assert refused.status_code == 400
    assert refused.json()["expected_versions"] == [
        "Not a list of versions: “CUDA latest” is not a name and a version, e.g. “CUDA 12.4”."
    ]
    assert not AcceptancePlan.objects.exists()  # nothing half-written

    created = tariq.post(url, {"offer": offer.pk, "expected_versions": DEMO}, format="json")
    assert created.status_code == 201, created.content
    plan = created.json()
    assert "correctness_tolerance" not in plan  # never applied, so not offered
    criterion = _plan_versions(tariq, plan["id"])
    assert criterion["status"] == "not_measured"
    assert criterion["reason"] == (
        "vLLM: not installed where the harness ran (run it where the runtime is)"
    )
    assert any(
        r.startswith("Versions the plan expects: measured driver 550.127.05; CUDA 12.4")
        for r in _connectivity(tariq, plan["id"])["reasons"]
    )

    edited = tariq.patch(
        f"{url}{plan['id']}/",
        {"expected_versions": "driver 550.127.05; cuda 12.4; PyTorch 2.5.1", "version": 1,
         "change_reason": "vLLM is ours to install"},
        format="json",
    )  # fmt: skip
    assert edited.status_code == 200, edited.content
    assert _plan_versions(tariq, plan["id"])["status"] == "passed"

    tariq.patch(
        f"{url}{plan['id']}/",
        {"expected_versions": "driver 550.127.05, CUDA 12.1", "version": 2,
         "change_reason": "The quote says 12.1"},
        format="json",
    )  # fmt: skip
    failed = _plan_versions(tariq, plan["id"])
    assert failed["status"] == "failed" and failed["reason"] == "CUDA: stated 12.1, measured 12.4"
    assert _connectivity(tariq, plan["id"])["status"] == "failed"

    # The page and the signed report say the same, and how answers are compared.
    compared = (
        "The answers are compared each item by its own comparison: exact after whitespace "
        "normalisation, or a number within the item's tolerance"
    )
    page = browser_as("aude").get(reverse("acceptance:plan", args=[plan["id"]])).content.decode()
    report = _render(packet.packet_section(case))
    for html in (page, report):
        assert "Versions the plan expects" in html
        assert "CUDA: stated 12.1, measured 12.4" in html
        assert compared in html
        assert "tolerance: exact" not in html

    # The form no longer offers the free-text tolerance, and refuses what is not a list.
    edit = reverse("acceptance:plan_edit", args=[plan["id"]])
    form = browser_as("tariq").get(edit).content.decode()
    assert 'name="expected_versions"' in form and 'name="correctness_tolerance"' not in form
    body = {
        "soak_minutes": 30, "expected_versions": "CUDA twelve", "correctness_pass_pct": "100",
        "ladder": "1,4,8,16,32", "fault_minimum": 3, "baseline_throughput_tolerance_pct": "10",
        "baseline_latency_tolerance_pct": "10", "baseline_error_rate_tolerance_points": "0.1",
        "notes": "", "change_reason": "Typo", "version": 3,
    }  # fmt: skip
    again = browser_as("tariq").post(edit, body)
    assert again.status_code == 200
    assert "“CUDA twelve” is not a name and a version" in again.content.decode()
    assert AcceptancePlan.objects.get().expected_versions == "driver 550.127.05, CUDA 12.1"


@pytest.mark.django_db
def test_the_report_shows_throughput_p99_and_end_to_end_latency_per_level(
    people, tariq, browser_as
):
    case, offer = approved_offer(people)  # a load test received before e2e was kept
    plan = make_plan(tariq, offer)
    page = browser_as("aude").get(reverse("acceptance:plan", args=[plan.pk])).content.decode()
    for html in (page, _render(packet.packet_section(case))):
        ladder = html[html.index("Throughput (output tokens/s)") :]
        ladder = ladder[: ladder.index("</table>")]
        assert "<td>3,200</td>" in ladder  # 100 output tokens/s × concurrency 32
        assert ladder.count("too few samples for P99") == 5  # 200 requests, not 662
        assert ladder.count("not in this load test's summary") == 5

    # A later load test with enough requests and the end-to-end latency of each level.
    make_evidence(tariq, offer, summary=load_summary(n=700, e2e_ms=4000.0))
    page = browser_as("aude").get(reverse("acceptance:plan", args=[plan.pk])).content.decode()
    for html in (page, _render(packet.packet_section(case))):
        ladder = html[html.index("Throughput (output tokens/s)") :]
        ladder = ladder[: ladder.index("</table>")]
        assert "too few samples for P99" not in ladder and "not in this load" not in ladder
        assert "<td>1,000</td>" in ladder  # P99 TTFT: 1.25 × the P95 of 800 ms
        assert "<td>4,016 / 6,024</td>" in ladder  # concurrency 16: P95 4,016, P99 1.5×
