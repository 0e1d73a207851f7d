"""The endpoint security rule, table-tested: each probe judged pass / fail / not measured."""

import pytest

from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, Check, verdict
from apps.evidence.rules import security as rule


def _probe(name, status, expected, **extra):
    return {"probe": name, "ran": status is not None, "status": status, "expected": expected}


def _result(**probes) -> dict:
    return {"url_path": "/v1/models", "statuses": {}, "probes": list(probes.values())}


def _burst(counts: dict, rps=2, requests=9, **extra) -> dict:
    return {
        "probe": "rate_limit",
        "ran": True,
        "declared_rps": rps,
        "requests": requests,
        "status_counts": counts,
        "expected": 429,
        **extra,
    }


def _by_key(checks) -> dict:
    return {c.key: c for c in checks}


@pytest.mark.parametrize(
    ("status", "expected_status", "words"),
    [
        (401, PASS, "refused as expected"),
        (200, FAIL, "answered HTTP 200 (accepted) where HTTP 401 (refused: not authenticated)"),
        (403, FAIL, "answered HTTP 403 (refused: not permitted) where HTTP 401"),
        (404, FAIL, "answered HTTP 404 (not found) where HTTP 401"),
        ("error: connection refused", NOT_MEASURED, "got no HTTP answer"),
    ],
)
def test_no_token_probe(status, expected_status, words):
    check = _by_key(rule.judge(_result(n=_probe("no_token", status, 401))))[rule.NO_TOKEN]
    assert check.status == expected_status
    assert words in check.detail
    assert check.expected == "HTTP 401 (refused: not authenticated)"


@pytest.mark.parametrize(
    ("probe", "expected_status", "words"),
    [
        (_probe("forbidden_token", 403, 403), PASS, "refused as expected"),
        (_probe("forbidden_token", 200, 403), FAIL, "HTTP 200 (accepted) where HTTP 403"),
        (_probe("forbidden_token", 401, 403), FAIL, "HTTP 401 (refused: not authenticated) where"),
        (
            {"probe": "forbidden_token", "ran": False, "status": None, "expected": 403,
             "reason": "no such token supplied"},
            NOT_MEASURED,
            "Not run: no such token supplied.",
        ),
        (None, NOT_MEASURED, "Not run: no such token supplied."),
    ],
)  # fmt: skip
def test_forbidden_token_probe(probe, expected_status, words):
    probes = {"w": _probe("wrong_token", 401, 401)}
    if probe is not None:
        probes["f"] = probe
    check = _by_key(rule.judge(_result(**probes)))[rule.FORBIDDEN_TOKEN]
    assert check.status == expected_status
    assert words in check.detail


@pytest.mark.parametrize(
    ("burst", "declared", "expected_status", "words"),
    [
        (_burst({"200": 3, "429": 6}), None, PASS, "6 of 9 requests answered HTTP 429"),
        (_burst({"200": 9}), None, FAIL, "none was answered HTTP 429"),
        (_burst({"200": 8, "error: timed out": 1}), None, FAIL, "HTTP 200 × 8"),
        (_burst({"401": 9}), None, NOT_MEASURED, "refused for its token"),
        (_burst({"error: refused": 9}), None, NOT_MEASURED, "got an HTTP answer"),
        # The vendor declares 10/s; a burst sized for 2/s never went over it.
        (_burst({"200": 9}, rps=2), 10, NOT_MEASURED, "below the declared 10 requests/s"),
        (_burst({"200": 20, "429": 5}, rps=10, requests=25), 10, PASS, "5 of 25"),
        (
            {"probe": "rate_limit", "ran": False, "status": None, "expected": 429,
             "reason": "no rate limit declared"},
            None,
            NOT_MEASURED,
            "no rate limit was declared",
        ),
        (
            {"probe": "rate_limit", "ran": False, "status": None, "expected": 429},
            5,
            NOT_MEASURED,
            "not given the declared rate limit of 5 requests/s",
        ),
    ],
)  # fmt: skip
def test_rate_limit_probe(burst, declared, expected_status, words):
    check = _by_key(rule.judge(_result(r=burst), declared))[rule.RATE_LIMIT]
    assert check.status == expected_status
    assert words in (check.measured or "") + " " + check.detail


def test_no_probe_step_is_not_measured_everywhere():
    checks = rule.judge(None)
    assert [c.key for c in checks] == list(rule.KEYS)
    assert {c.status for c in checks} == {NOT_MEASURED}
    assert all("no endpoint security probe" in c.detail for c in checks)


def test_an_older_bundle_is_read_from_its_statuses_and_burst():
    older = {
        "url_path": "/v1/models",
        "statuses": {"no_token": 401, "wrong_token": 200, "valid_token": 200},
        "rate_limit": {"declared_rps": 5, "requests": 15, "status_counts": {"200": 10, "429": 5}},
    }
    checks = _by_key(rule.judge(older))
    assert checks[rule.NO_TOKEN].status == PASS
    assert checks[rule.WRONG_TOKEN].status == FAIL
    assert checks[rule.FORBIDDEN_TOKEN].status == NOT_MEASURED
    assert checks[rule.RATE_LIMIT].status == PASS


@pytest.mark.parametrize(
    ("statuses", "held", "failed", "missing", "not_run"),
    [
        ({k: PASS for k in rule.KEYS}, True, [], [], []),
        (
            {rule.NO_TOKEN: PASS, rule.WRONG_TOKEN: PASS, rule.RATE_LIMIT: PASS,
             rule.FORBIDDEN_TOKEN: NOT_MEASURED},
            True, [], [], [rule.FORBIDDEN_TOKEN],
        ),
        (
            {rule.NO_TOKEN: FAIL, rule.WRONG_TOKEN: PASS, rule.RATE_LIMIT: NOT_MEASURED,
             rule.FORBIDDEN_TOKEN: FAIL},
            False, [rule.NO_TOKEN, rule.FORBIDDEN_TOKEN], [rule.RATE_LIMIT], [],
        ),
        # A verification without the probes: every required one is missing.
        ({}, False, [], [rule.NO_TOKEN, rule.WRONG_TOKEN, rule.RATE_LIMIT],
         [rule.FORBIDDEN_TOKEN]),
    ],
)  # fmt: skip
def test_gate_state(statuses, held, failed, missing, not_run):
    checks = [{"key": k, "title": "t", "status": s} for k, s in statuses.items()]
    checks.append({"key": "network.rtt", "status": FAIL})  # another part: not read here
    state = rule.gate_state(checks)
    assert state.held is held
    assert [c["key"] for c in state.failed] == failed
    assert [c["key"] for c in state.missing] == missing
    assert [c["key"] for c in state.not_run] == not_run


@pytest.mark.parametrize(
    ("tokens_scoped", "held", "missing", "not_run"),
    [
        (True, False, [rule.FORBIDDEN_TOKEN], []),
        (False, True, [], [rule.FORBIDDEN_TOKEN]),
        (None, True, [], [rule.FORBIDDEN_TOKEN]),
    ],
)
def test_scoped_tokens_make_the_forbidden_token_probe_required(
    tokens_scoped, held, missing, not_run
):
    """docs/rules/evidence.md#endpoint-security: "not run" never passes a required probe."""
    statuses = {rule.NO_TOKEN: PASS, rule.WRONG_TOKEN: PASS, rule.RATE_LIMIT: PASS}
    checks = [{"key": k, "title": "t", "status": s} for k, s in statuses.items()]
    checks.append({"key": rule.FORBIDDEN_TOKEN, "title": "t", "status": NOT_MEASURED})
    state = rule.gate_state(checks, tokens_scoped)
    assert state.held is held and state.forbidden_unmeasured
    assert [c["key"] for c in state.missing] == missing
    assert [c["key"] for c in state.not_run] == not_run
    assert state.tokens_scoped is tokens_scoped
    passed = [*checks[:3], {"key": rule.FORBIDDEN_TOKEN, "title": "t", "status": PASS}]
    assert rule.gate_state(passed, tokens_scoped).held
    assert not rule.gate_state(passed, tokens_scoped).forbidden_unmeasured


def test_the_context_says_when_the_forbidden_token_probe_is_required():
    from apps.evidence.rules import Context, Facts

    facts = Facts(authprobe=_result(no=_probe("no_token", 401, 401)))
    scoped = _by_key(rule.checks(facts, Context(declared={"tokens_scoped": True})))
    plain = _by_key(rule.checks(facts, Context(declared={"tokens_scoped": False})))
    assert scoped[rule.FORBIDDEN_TOKEN].tolerance == (
        "only HTTP 403; required: the declared spec says the API tokens are scoped"
    )
    assert plain[rule.FORBIDDEN_TOKEN].tolerance == "only HTTP 403"
    # The other probes read the same either way.
    assert scoped[rule.NO_TOKEN].tolerance == plain[rule.NO_TOKEN].tolerance


def test_the_probes_leave_the_spec_verdict_to_the_other_checks():
    essentials = [
        Check(k, "identity", "", PASS)
        for k in ("identity.device_count", "identity.sku", "identity.memory", "performance.matmul")
    ]
    failing = Check(rule.NO_TOKEN, "security", "", FAIL)
    assert verdict([*essentials, failing]) == "verified"
    assert verdict([*essentials, Check("network.rtt", "network", "", FAIL)]) == "failed"
