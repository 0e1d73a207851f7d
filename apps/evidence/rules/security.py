"""Endpoint security: does the inference endpoint refuse what it must refuse?

The harness sends a few requests and records the HTTP status each got; the
server judges each against what an OpenAI-compatible endpoint is expected to
answer (RFC 9110 and RFC 6585: 401 without valid credentials, 403 for
credentials without the permission, 429 over the rate limit). A probe that did
not run, or got no HTTP answer, is "not measured", never a pass.

These checks are listed with the verification, composed like its other parts,
but leave its verdict (what the hardware and the service measured) to the
other checks: an approval gate of their own reads them (``gate_state``).
"""

from dataclasses import dataclass

from django.utils.translation import gettext_noop as _noop

from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, Check, Context, Facts
from apps.evidence.wording import phrase, phrases

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

GROUP = "security"
PREFIX = GROUP + "."
NO_TOKEN = "security.no_token"
WRONG_TOKEN = "security.wrong_token"
FORBIDDEN_TOKEN = "security.forbidden_token"
RATE_LIMIT = "security.rate_limit"
KEYS = (NO_TOKEN, WRONG_TOKEN, FORBIDDEN_TOKEN, RATE_LIMIT)
# Without these the evidence cannot say the endpoint refuses strangers and floods; the
# token of another model is only probed where the operator could supply one.
REQUIRED = (NO_TOKEN, WRONG_TOKEN, RATE_LIMIT)


def required_keys(tokens_scoped: bool | None) -> tuple[str, ...]:
    """The probes that must pass. Where the declared spec says the API tokens are scoped,
    a token without the permission must be shown refused too; where it says no or nothing,
    that probe stays optional (docs/rules/evidence.md#endpoint-security)."""
    return (*REQUIRED, FORBIDDEN_TOKEN) if tokens_scoped is True else REQUIRED


# Every sentence is stored in English and worded for the reader where it is shown
# (apps.evidence.wording).
NOT_SUPPLIED = phrase("no such token supplied")
NOT_RECORDED = phrase("not recorded in the bundle")

SOURCE_AUTH = phrase(
    "HTTP semantics (RFC 9110): 401 without valid credentials, 403 without permission"
)
SOURCE_RATE = phrase("HTTP status 429 Too Many Requests (RFC 6585) over the declared rate limit")

MEANING = {
    200: phrase("accepted", context="HTTP answer"),
    401: phrase("refused: not authenticated"),
    403: phrase("refused: not permitted"),
    404: phrase("not found"),
    429: phrase("refused: too many requests"),
}
HTTP_MEANING = phrase("HTTP %(status)s (%(meaning)s)")
ONLY_HTTP = phrase("only HTTP %(status)s")
NO_PROBE = phrase("The bundle has no endpoint security probe.")
NOT_RUN = phrase("Not run: %(reason)s.")
NO_ANSWER = phrase("Sent %(sent)s; it got no HTTP answer (%(status)s).")
REFUSED = phrase("Sent %(sent)s; it was refused as expected.")
WRONG_ANSWER = phrase(
    "Sent %(sent)s; the endpoint answered %(answer)s where %(expected)s was expected."
)
SCOPED_REQUIRED = phrase("required: the declared spec says the API tokens are scoped")
RATE_EXPECTED = phrase("at least one HTTP 429 (refused: too many requests)")
RATE_TOLERANCE = phrase("any request over the limit answered HTTP 429")
NOT_GIVEN_RATE = phrase(
    "Not run: the harness was not given the declared rate limit of %(rps)s requests/s."
)
NO_RATE = phrase("Not run: no rate limit was declared for the endpoint.")
BURST_BELOW = phrase(
    "The burst was sized for %(burst)s requests/s, below the declared %(rps)s requests/s, "
    "so it never went over the limit."
)
RPS = phrase("%(rps)s requests/s")
DECLARED_LIMIT = phrase("the declared limit")
NO_HTTP_ANSWER = phrase("None of the %(requests)s requests got an HTTP answer.")
REFUSED_COUNT = phrase("%(refused)s of %(requests)s requests answered HTTP 429")
BURST_SENT = phrase("Sent %(requests)s requests within about a second, over %(limit)s.")
TOKEN_REFUSED = phrase(
    "Every request of the burst was refused for its token, so the limit was never "
    "reached: the harness needs a valid key for this probe."
)
NOT_ENFORCED = phrase(
    "Sent %(requests)s requests within about a second, over %(limit)s; none was answered "
    "HTTP 429, so the endpoint did not enforce its rate limit."
)

TITLES = {
    NO_TOKEN: _noop("Request without a token is refused"),
    WRONG_TOKEN: _noop("Request with a wrong token is refused"),
    FORBIDDEN_TOKEN: _noop("Token without the permission is refused"),
    RATE_LIMIT: _noop("Requests over the rate limit are refused"),
}

# Per token probe: the probe's name in the bundle, the status expected, what was sent.
_SENT = phrases(
    "a request without a token",
    "a request with a made-up token",
    "a request with a token scoped to another model or lacking the permission",
)
_TOKEN_PROBES = (
    (NO_TOKEN, "no_token", 401, _SENT[0]),
    (WRONG_TOKEN, "wrong_token", 401, _SENT[1]),
    (FORBIDDEN_TOKEN, "forbidden_token", 403, _SENT[2]),
)


def status_words(status: int) -> str:
    """'HTTP 401 (refused: not authenticated)'."""
    meaning = MEANING.get(status)
    if meaning is None and 200 <= status < 300:
        meaning = MEANING[200]
    return HTTP_MEANING % {"status": status, "meaning": meaning} if meaning else f"HTTP {status}"


def _status(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _probes(result: dict) -> dict[str, dict]:
    """The bundle's probes by name; an older bundle only has the statuses and the burst."""
    found: dict[str, dict] = {}
    for probe in result.get("probes") or []:
        if isinstance(probe, dict) and isinstance(probe.get("probe"), str):
            found[probe["probe"]] = probe
    statuses = result.get("statuses")
    for name, status in (statuses if isinstance(statuses, dict) else {}).items():
        if name not in found and status is not None:
            found[name] = {"probe": name, "ran": True, "status": status}
    burst = result.get("rate_limit")
    if "rate_limit" not in found and isinstance(burst, dict):
        found["rate_limit"] = {"probe": "rate_limit", "ran": True, **burst}
    return found


def checks(facts: Facts, context: Context) -> list[Check]:
    declared = context.declared
    return judge(facts.authprobe, declared.get("rate_limit_rps"), declared.get("tokens_scoped"))


def judge(result: dict | None, declared_rps=None, tokens_scoped: bool | None = None) -> list[Check]:
    """One check per probe. ``result``: the bundle's probe section (None: it did not run);
    ``declared_rps``: the rate limit the vendor declared in writing, if any;
    ``tokens_scoped``: whether the declared spec says the API tokens are scoped (None: it
    does not say), which makes the probe of a token without the permission required."""
    if not isinstance(result, dict):
        found = [check_token_probe(key, None, code, sent) for key, _n, code, sent in _TOKEN_PROBES]
        found = [*found, check_rate_limit(None, False, declared_rps)]
    else:
        probes = _probes(result)
        found = []
        for key, name, expected, sent in _TOKEN_PROBES:
            unrecorded = NOT_SUPPLIED if key == FORBIDDEN_TOKEN else NOT_RECORDED
            probe = probes.get(name) or {"ran": False, "reason": unrecorded}
            found.append(check_token_probe(key, probe, expected, sent))
        found.append(check_rate_limit(probes.get("rate_limit"), True, declared_rps))
    if tokens_scoped is True:
        # Required, as the declared spec said when it was judged; the gate reads the
        # declared spec as it stands (``gate_state``).
        for check in found:
            if check.key == FORBIDDEN_TOKEN:
                check.tolerance = f"{check.tolerance}; {SCOPED_REQUIRED}"
    return found


def _check(key: str, expected: str, source: str) -> Check:
    return Check(key, GROUP, TITLES[key], NOT_MEASURED, expected=expected, source=source)


def check_token_probe(key: str, probe: dict | None, expected: int, sent: str) -> Check:
    check = _check(key, status_words(expected), SOURCE_AUTH)
    check.tolerance = ONLY_HTTP % {"status": expected}
    if probe is None:
        check.detail = NO_PROBE
        return check
    if not probe.get("ran", True):
        check.detail = NOT_RUN % {"reason": str(probe.get("reason") or NOT_SUPPLIED)}
        return check
    status = _status(probe.get("status"))
    if status is None:
        check.detail = NO_ANSWER % {"sent": sent, "status": probe.get("status") or "none"}
        return check
    check.measured = status_words(status)
    if status == expected:
        check.status = PASS
        check.detail = REFUSED % {"sent": sent}
        return check
    check.status = FAIL
    check.detail = WRONG_ANSWER % {
        "sent": sent,
        "answer": status_words(status),
        "expected": status_words(expected),
    }
    return check


def _counts(probe: dict) -> dict[int, int]:
    counts: dict[int, int] = {}
    raw = probe.get("status_counts")
    for name, count in (raw if isinstance(raw, dict) else {}).items():
        try:
            status = int(name)
        except (TypeError, ValueError):
            continue  # a connection error, not an HTTP answer
        if isinstance(count, int) and count > 0:
            counts[status] = counts.get(status, 0) + count
    return counts


def _answers(counts: dict[int, int]) -> str:
    return ", ".join(f"HTTP {status} × {n}" for status, n in sorted(counts.items()))


def check_rate_limit(probe: dict | None, probed: bool, declared_rps=None) -> Check:
    check = _check(RATE_LIMIT, RATE_EXPECTED, SOURCE_RATE)
    check.tolerance = RATE_TOLERANCE
    if not probed:
        check.detail = NO_PROBE
        return check
    if probe is None or not probe.get("ran", True):
        if declared_rps:
            check.detail = NOT_GIVEN_RATE % {"rps": f"{float(declared_rps):g}"}
        else:
            check.detail = NO_RATE
        return check
    burst_rps = probe.get("declared_rps")
    burst_rps = burst_rps if isinstance(burst_rps, int | float) and burst_rps > 0 else None
    if declared_rps and burst_rps and burst_rps < float(declared_rps):
        check.detail = BURST_BELOW % {"burst": f"{burst_rps:g}", "rps": f"{float(declared_rps):g}"}
        return check
    counts = _counts(probe)
    total = sum(counts.values())
    requests = probe.get("requests") if isinstance(probe.get("requests"), int) else total
    limit = RPS % {"rps": f"{burst_rps:g}"} if burst_rps else DECLARED_LIMIT
    if not total:
        check.detail = NO_HTTP_ANSWER % {"requests": requests}
        return check
    refused = counts.get(429, 0)
    if refused:
        check.status = PASS
        check.measured = REFUSED_COUNT % {"refused": refused, "requests": requests}
        check.detail = BURST_SENT % {"requests": requests, "limit": limit}
        return check
    if set(counts) <= {401, 403}:
        check.measured = _answers(counts)
        check.detail = TOKEN_REFUSED
        return check
    check.status = FAIL
    check.measured = _answers(counts)
    check.detail = NOT_ENFORCED % {"requests": requests, "limit": limit}
    return check


# --- what the approval gate reads -------------------------------------------


@dataclass(frozen=True)
class SecurityState:
    """The endpoint's probes as the gate reads them, each a check (dict) of the verification."""

    failed: tuple[dict, ...] = ()
    missing: tuple[dict, ...] = ()  # required, not measured
    not_run: tuple[dict, ...] = ()  # optional, not measured
    passed: tuple[dict, ...] = ()
    tokens_scoped: bool | None = None  # as the declared spec says it now (None: not stated)

    @property
    def held(self) -> bool:
        return not self.failed and not self.missing

    @property
    def forbidden_unmeasured(self) -> bool:
        """The probe of a token without the permission was not measured."""
        return any(c.get("key") == FORBIDDEN_TOKEN for c in self.missing + self.not_run)


def gate_state(checks: list[dict], tokens_scoped: bool | None = None) -> SecurityState:
    """Sort a verification's checks: a probe missing from it counts as not measured.

    ``tokens_scoped``: what the offer's declared spec says now, so a claim made after the
    probes ran still makes the probe of a token without the permission required."""
    mine = {c["key"]: c for c in checks if str(c.get("key", "")).startswith(PREFIX)}
    required = required_keys(tokens_scoped)
    failed, missing, not_run, passed = [], [], [], []
    for key in KEYS:
        check = mine.get(key) or {"key": key, "title": TITLES[key], "status": NOT_MEASURED}
        status = check.get("status")
        if status == FAIL:
            failed.append(check)
        elif status == PASS:
            passed.append(check)
        elif key in required:
            missing.append(check)
        else:
            not_run.append(check)
    return SecurityState(
        tuple(failed), tuple(missing), tuple(not_run), tuple(passed), tokens_scoped
    )
