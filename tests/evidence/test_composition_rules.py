"""The composition rules, table-tested on plain data: which bundle each part of an offer's
verification comes from, which bundles ran elsewhere, and what an approval relied on."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, WARN
from apps.evidence.rules.composition import (
    BENCH,
    CORRECTNESS,
    ENVIRONMENT,
    GPUS,
    HOST_NAME,
    INVENTORY,
    LOADTEST,
    NETPROBE,
    OTHER_MACHINE,
    SOAK,
    Contribution,
    Machine,
    compose,
    machine_differences,
    machine_findings,
    measured,
    pick,
    relied_on,
    section_of,
    value_changes,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
NODE = Machine("gpu-node-3", frozenset({"GPU-a", "GPU-b"}))
NODE_NO_GPU = Machine("gpu-node-3", frozenset())


def check(key: str, status: str = PASS, measured="ok", group: str | None = None) -> dict:
    return {
        "key": key,
        "group": group or key.split(".")[0],
        "title": key,
        "status": status,
        "measured": measured,
        "expected": "ok",
    }


FULL_RUN = (
    check("identity.device_count", measured=8),
    check("identity.sku"),
    check("identity.memory"),
    check("versions.driver"),
    check("versions.shm"),
    check("performance.matmul.bf16", measured="700 TFLOP/s"),
    check("service.ttft_p95.c1"),
    check("service.max_concurrency", measured=16),
    check("network.rtt"),
)
NOTHING = (
    check("identity.device_count", NOT_MEASURED, None),
    check("identity.sku", NOT_MEASURED, None),
    check("versions.shm", NOT_MEASURED, None),
    check("performance.matmul", NOT_MEASURED, None),
    check("service.ladder", NOT_MEASURED, None),
    check("network.rtt", NOT_MEASURED, None),
)
HEADLINE = {
    "gpus": 8,
    "gpu_names": ["NVIDIA H200"],
    "matmul": {"bf16": "700"},
    "bandwidth": "4,000 GB/s",
    "max_output_tok_s": 900.0,
    "ttft_p50_ms_lowest_level": 80.0,
    "max_concurrency_within_slo": 16,
}
EMPTY_HEADLINE = {"gpus": 0, "gpu_names": [], "matmul": {}, "bandwidth": None}


def run(
    n: int,
    *,
    hours: float = 0,
    checks=FULL_RUN,
    headline=None,
    runs=(),
    gpus: int | None = None,
    machine: Machine = NODE,
) -> Contribution:
    headline = dict(HEADLINE if headline is None else headline)
    return Contribution(
        bundle=n,
        sha256=f"{n:064x}",
        received_at=T0 + timedelta(hours=hours),
        measured_at=T0 + timedelta(hours=hours) - timedelta(minutes=5),
        checks=tuple(checks),
        headline=headline,
        runs=frozenset(runs),
        gpus_seen=headline.get("gpus", 0) if gpus is None else gpus,
        machine=machine,
    )


def soak_only(n: int, hours: float, machine: Machine = NODE) -> Contribution:
    return run(
        n, hours=hours, checks=NOTHING, headline=EMPTY_HEADLINE, runs=[SOAK], machine=machine
    )


def correctness_only(n: int, hours: float, machine: Machine = NODE_NO_GPU) -> Contribution:
    """A correctness run talks to the endpoint: it sees no GPU."""
    return run(
        n, hours=hours, checks=NOTHING, headline=EMPTY_HEADLINE, runs=[CORRECTNESS], machine=machine
    )


@pytest.mark.parametrize(
    "key,section",
    [
        ("identity.device_count", INVENTORY),
        ("identity.sku", INVENTORY),
        ("inventory.duplicate_uuids", INVENTORY),
        ("versions.driver", INVENTORY),
        ("versions.cuda", INVENTORY),
        ("versions.smi_driver_cuda", INVENTORY),
        ("identity.smi_uuids", INVENTORY),
        ("versions.shm", ENVIRONMENT),
        ("versions.clock_sync", ENVIRONMENT),
        ("performance.matmul", BENCH),
        ("performance.matmul.fp8", BENCH),
        ("service.ladder", LOADTEST),
        ("service.ttft_p95.c32", LOADTEST),
        ("network.rtt", NETPROBE),
        ("endpoint.auth_401", "endpoint"),  # a group the rules do not know is its own part
    ],
)
def test_each_check_belongs_to_the_part_of_the_run_it_reads(key, section):
    assert section_of(key) == section


@pytest.mark.parametrize(
    "status,value,expected",
    [
        (PASS, "8", True),
        (FAIL, None, True),
        (WARN, "", True),
        # Measured but not gradable: an RTT with no latency budget, a rate without a peak.
        (NOT_MEASURED, "0.2 ms median to 10.0.0.1:443 (n = 3)", True),
        (NOT_MEASURED, 0, True),
        (NOT_MEASURED, None, False),
        (NOT_MEASURED, "", False),
        (None, None, False),
    ],
)
def test_a_check_measured_something_when_graded_or_carrying_a_value(status, value, expected):
    assert measured({"key": "network.rtt", "status": status, "measured": value}) is expected


# (contributions, part) → the bundle it comes from (None: no bundle measured it)
PICK_TABLE = [
    ([run(1), soak_only(2, 1)], INVENTORY, 1),  # a soak measured no inventory
    ([run(1), soak_only(2, 1)], SOAK, 2),
    ([run(1), soak_only(2, 1)], CORRECTNESS, None),
    ([run(1), run(2, hours=1)], LOADTEST, 2),  # the newest that measured it
    ([run(2, hours=1), run(1)], LOADTEST, 2),  # whatever the order they are read in
    # Received at the same second: the later arrival (higher id) is the newer.
    ([run(3), run(4)], BENCH, 4),
    # The newest run saw no GPU (run elsewhere, or the GPUs vanished): the inventory of the
    # newest run that saw GPUs stands, the rest is the newest run's.
    ([run(1), run(2, hours=1, gpus=0)], INVENTORY, 1),
    ([run(1), run(2, hours=1, gpus=0)], LOADTEST, 2),
    # No run saw a GPU: the newest that took an inventory at all.
    ([run(1, gpus=0), run(2, hours=1, gpus=0)], INVENTORY, 2),
    # A run whose inventory measured nothing is not a source of it.
    ([run(1), run(2, hours=1, checks=NOTHING, gpus=0)], INVENTORY, 1),
    ([], INVENTORY, None),
    # An ungraded value is a measurement a bundle that measured nothing must not erase.
    (
        [
            run(1, checks=[check("network.rtt", NOT_MEASURED, "0.2 ms")]),
            run(2, hours=1, checks=NOTHING),
        ],
        NETPROBE,
        1,
    ),
]


@pytest.mark.parametrize("contributions,section,expected", PICK_TABLE)
def test_each_part_comes_from_the_newest_bundle_that_measured_it(contributions, section, expected):
    picked = pick(section, contributions)
    assert (picked.bundle if picked else None) == expected


def test_a_soak_and_a_correctness_run_alone_erase_nothing():
    full, soak, correctness = run(1), soak_only(2, 1), correctness_only(3, 2)
    composed = compose([full, soak, correctness], placeholders=correctness)
    assert {s: src["bundle"] for s, src in composed.sources.items()} == {
        INVENTORY: 1,
        ENVIRONMENT: 1,
        BENCH: 1,
        LOADTEST: 1,
        NETPROBE: 1,
        SOAK: 2,
        CORRECTNESS: 3,
    }
    assert [c["key"] for c in composed.checks] == [c["key"] for c in FULL_RUN]
    assert {c["bundle"] for c in composed.checks} == {1}
    assert composed.verdict == "verified"
    assert composed.headline["gpus"] == 8 and composed.headline["max_concurrency_within_slo"] == 16
    assert composed.measured_at == full.measured_at  # the checks rest on the full run alone
    assert composed.findings == []
    assert composed.sources[SOAK]["sha256"] == f"{2:064x}"
    assert composed.sources[SOAK]["received_at"] == soak.received_at.isoformat()


def test_the_parts_a_newer_run_measured_replace_only_those():
    slower = tuple(
        check("performance.matmul.bf16", WARN, "500 TFLOP/s") if c["key"].startswith("perf") else c
        for c in NOTHING
    )
    bench_only = run(
        2, hours=1, checks=slower, headline={**EMPTY_HEADLINE, "matmul": {"bf16": "5"}}
    )
    composed = compose([run(1), bench_only], placeholders=bench_only)
    by_key = {c["key"]: c for c in composed.checks}
    assert by_key["performance.matmul.bf16"]["bundle"] == 2
    assert by_key["performance.matmul.bf16"]["status"] == WARN
    assert by_key["identity.device_count"]["bundle"] == 1
    assert composed.verdict == "findings"
    assert composed.headline["matmul"] == {"bf16": "5"} and composed.headline["gpus"] == 8
    assert composed.measured_at == run(1).measured_at  # the oldest part relied on


def test_parts_no_bundle_measured_stay_listed_as_not_measured():
    soak = soak_only(1, 0)
    composed = compose([soak], placeholders=soak)
    assert composed.verdict == "insufficient"
    assert composed.sources.keys() == {SOAK}
    assert [c["bundle"] for c in composed.checks] == [None] * len(NOTHING)
    assert composed.measured_at is None
    assert composed.headline["gpus"] == 0


def test_a_failing_part_fails_the_composition_whichever_bundle_it_comes_from():
    failing = tuple(
        check("identity.device_count", FAIL, 4) if c["key"] == "identity.device_count" else c
        for c in FULL_RUN
    )
    composed = compose([run(1), run(2, hours=1, checks=failing)], placeholders=run(2))
    assert composed.verdict == "failed"


OTHER_HOST = Machine("gpu-node-9", NODE.gpu_uuids)
OTHER_GPUS = Machine("gpu-node-3", frozenset({"GPU-x", "GPU-y"}))

# (reference, other) → what differs
MACHINE_TABLE = [
    (NODE, NODE, []),
    (NODE, Machine("GPU-NODE-3", NODE.gpu_uuids), []),  # host names ignore case
    (NODE, OTHER_HOST, [HOST_NAME]),
    (NODE, OTHER_GPUS, [GPUS]),
    (NODE, Machine("gpu-node-9", frozenset({"GPU-x"})), [HOST_NAME, GPUS]),
    (NODE, Machine("gpu-node-3", frozenset({"GPU-a"})), [GPUS]),  # a card fewer
    # What one side does not know is not compared: a correctness run sees no GPU, a
    # bundle stored before machines were kept knows neither.
    (NODE, Machine("gpu-node-3", frozenset()), []),
    (NODE, Machine("", frozenset()), []),
    (Machine("", frozenset()), OTHER_GPUS, []),
]


@pytest.mark.parametrize("reference,other,expected", MACHINE_TABLE)
def test_machines_differ_by_host_name_or_gpu_uuids(reference, other, expected):
    assert [d["what"] for d in machine_differences(reference, other)] == expected


def test_a_bundle_from_another_machine_is_a_finding_against_the_inventory_bundle():
    full, soak = run(1), soak_only(2, 1, machine=OTHER_HOST)
    composed = compose([full, soak, correctness_only(3, 2)], placeholders=soak)
    [finding] = composed.findings
    assert finding["kind"] == OTHER_MACHINE
    assert finding["bundle"]["bundle"] == 2 and finding["sections"] == [SOAK]
    assert finding["reference"]["bundle"] == 1
    assert finding["reference_sections"] == [INVENTORY, ENVIRONMENT, BENCH, LOADTEST, NETPROBE]
    assert finding["differences"] == [
        {"what": HOST_NAME, "this": "gpu-node-9", "reference": "gpu-node-3"}
    ]
    assert composed.verdict == "verified"  # the measurements pass; confirming them is blocked


def test_only_bundles_composed_into_the_verification_are_compared():
    # The soak from elsewhere was followed by one on the rented machine: nothing is mixed.
    parts = [run(1), soak_only(2, 1, machine=OTHER_HOST), soak_only(3, 2)]
    assert compose(parts, placeholders=parts[-1]).findings == []


def test_without_an_inventory_the_newest_composed_bundle_is_the_reference():
    chosen = {SOAK: soak_only(1, 0), CORRECTNESS: correctness_only(2, 1, machine=OTHER_HOST)}
    [finding] = machine_findings(chosen)
    assert finding["bundle"]["bundle"] == 1 and finding["reference"]["bundle"] == 2
    assert machine_findings({}) == []


def test_a_new_run_on_another_machine_flags_the_older_parts_still_composed():
    newer_elsewhere = run(4, hours=3, machine=OTHER_GPUS)
    parts = [run(1), soak_only(2, 1), correctness_only(3, 2), newer_elsewhere]
    findings = compose(parts, placeholders=newer_elsewhere).findings
    assert [(f["bundle"]["bundle"], f["reference"]["bundle"]) for f in findings] == [(2, 4)]
    # The correctness run saw no GPU and ran on the same host name: nothing to tell apart.


# --- what an approval relied on -----------------------------------------------


def values(composition, standalone=None) -> dict:
    return relied_on(
        verdict=composition.verdict,
        checks=composition.checks,
        findings=composition.findings,
        standalone_sha256=standalone,
    )


def test_a_soak_or_correctness_run_changes_no_value_an_approval_relied_on():
    before = values(compose([run(1)], placeholders=run(1)))
    soak = soak_only(2, 1)
    after = values(compose([run(1), soak], placeholders=soak))
    assert value_changes(before, after) == []


def test_changed_values_are_named():
    before = values(compose([run(1)], placeholders=run(1)))
    failing = tuple(
        check("identity.device_count", FAIL, 4) if c["key"] == "identity.device_count" else c
        for c in FULL_RUN
    )
    faster = tuple(
        check("performance.matmul.bf16", PASS, "720 TFLOP/s")
        if c["key"] == "performance.matmul.bf16"
        else c
        for c in failing
    )
    newer = run(2, hours=1, checks=faster)
    after = values(compose([run(1), newer], placeholders=newer))
    assert value_changes(before, after) == [
        "verdict verified → failed",
        "identity.device_count pass → fail",
        "performance.matmul.bf16 measured 700 TFLOP/s → 720 TFLOP/s",
    ]


def test_parts_nobody_measured_are_no_value_relied_on():
    full = run(1, checks=FULL_RUN[:3])
    before = values(compose([full], placeholders=full))
    soak = soak_only(2, 1)  # stands in, unmeasured, for the parts no bundle measured
    after = values(compose([full, soak], placeholders=soak))
    assert value_changes(before, after) == []
    assert set(after["checks"]) == {"identity.device_count", "identity.sku", "identity.memory"}


def test_a_new_run_with_the_same_values_changes_nothing_relied_on():
    before = values(compose([run(1)], placeholders=run(1)))
    after = values(compose([run(1), run(2, hours=1)], placeholders=run(2, hours=1)))
    assert value_changes(before, after) == []


def test_a_bundle_from_another_machine_changes_what_was_relied_on():
    before = values(compose([run(1)], placeholders=run(1)))
    elsewhere = soak_only(2, 1, machine=OTHER_HOST)
    after = values(compose([run(1), elsewhere], placeholders=elsewhere))
    assert value_changes(before, after) == ["bundles from another machine"]
    assert value_changes(after, before) == ["machine finding gone"]


def test_checks_added_or_dropped_are_changes():
    before = {"verdict": "verified", "checks": {"a.x": [PASS, 1, 1]}, "blocked": []}
    after = {"verdict": "verified", "checks": {"a.y": [WARN, 1, 1]}, "blocked": []}
    assert value_changes(before, after) == ["a.x no longer checked", "a.y newly checked (warn)"]
    expected = {"verdict": "verified", "checks": {"a.x": [PASS, 1, 2]}, "blocked": []}
    assert value_changes(before, expected) == ["a.x expected value changed"]


def test_a_verification_recorded_before_composition_stands_alone():
    # It cannot say which values a newer bundle kept: another bundle is a change.
    same = compose([run(1)], placeholders=run(1))
    assert value_changes(values(same, "a" * 64), values(same, "b" * 64)) == [
        "verified from another bundle"
    ]
    assert value_changes(values(same, "a" * 64), values(same, "a" * 64)) == []
