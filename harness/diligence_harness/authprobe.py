"""Does the endpoint refuse unauthenticated and wrongly authenticated requests,
and does it enforce a declared rate limit? (seed 004 §5 item 4 安全验证:
no token → 401, over the limit → 429.)

Never a flood: the rate-limit burst is bounded to 2× the declared per-second
limit plus 5, capped at 60 requests, sent over at most ~1 second.
"""

import concurrent.futures
import secrets
import urllib.error
import urllib.request

from diligence_harness.findings import finding
from diligence_harness.streamclient import parse_endpoint

MAX_BURST = 60


def _status(url: str, token: str | None, timeout_s: float = 15.0) -> int | str:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, headers=headers, method="GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError) as exc:
        return f"error: {exc}"


def run_authprobe(
    endpoint: str, api_key: str | None, rate_limit_rps: float | None
) -> tuple[dict, list[dict]]:
    """Probe GET /v1/models (cheap, no tokens generated); returns (result, findings)."""
    base = parse_endpoint(endpoint)
    url = f"{base.scheme}://{base.host_header}{base.base_path}/v1/models"
    wrong = "diligence-wrong-" + secrets.token_hex(8)
    checks = {
        "no_token": _status(url, None),
        "wrong_token": _status(url, wrong),
        "valid_token": _status(url, api_key) if api_key else None,
    }
    findings = []
    if checks["no_token"] not in (401, 403):
        findings.append(
            _finding(
                "AUTH-NO-TOKEN",
                "fail",
                "request without a token was not refused",
                checks["no_token"],
            )
        )
    if checks["wrong_token"] not in (401, 403):
        findings.append(
            _finding(
                "AUTH-WRONG-TOKEN",
                "fail",
                "request with a wrong token was not refused",
                checks["wrong_token"],
            )
        )
    result: dict[str, object] = {"url_path": "/v1/models", "statuses": checks, "rate_limit": None}
    if rate_limit_rps:
        rate_limit = _burst(url, api_key, rate_limit_rps)
        result["rate_limit"] = rate_limit
        if rate_limit["status_counts"].get("429", 0) == 0:
            findings.append(
                _finding(
                    "AUTH-RATE-LIMIT",
                    "warn",
                    "a burst above the declared rate limit got no 429",
                    None,
                )
            )
    return result, findings


def _burst(url: str, api_key: str | None, rate_limit_rps: float) -> dict:
    count = min(MAX_BURST, int(rate_limit_rps * 2) + 5)
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(count, 16)) as pool:
        statuses = list(pool.map(lambda _i: _status(url, api_key), range(count)))
    counts: dict = {}
    for status in statuses:
        counts[str(status)] = counts.get(str(status), 0) + 1
    return {"declared_rps": rate_limit_rps, "requests": count, "status_counts": counts}


def _finding(check_id: str, severity: str, message: str, status) -> dict:
    return finding(check_id, severity, None, message, step="authprobe", status=status)
