"""Does the endpoint refuse unauthenticated and wrongly authenticated requests,
and does it enforce a declared rate limit? (no token → 401, a token without the
permission → 403, over the limit → 429; the server judges the statuses.)

Never a flood: the rate-limit burst is bounded to 2× the declared per-second
limit plus 5, capped at 60 requests, sent over at most ~1 second.
"""

import concurrent.futures
import json
import secrets
import urllib.error
import urllib.request

from diligence_harness.findings import finding
from diligence_harness.streamclient import parse_endpoint

MAX_BURST = 60


def _status(
    url: str, token: str | None, timeout_s: float = 15.0, body: dict | None = None
) -> int | str:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    method = "POST" if data is not None else "GET"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError) as exc:
        return f"error: {exc}"


NO_FORBIDDEN_TOKEN = "no such token supplied"
NO_RATE_LIMIT = "no rate limit declared"


def _probe(name: str, sent: str, expected: int, status: int | str | None, reason: str = ""):
    probe: dict[str, object] = {"probe": name, "ran": status is not None, "sent": sent}
    probe |= {"status": status, "expected": expected}
    if reason:
        probe["reason"] = reason
    return probe


def run_authprobe(
    endpoint: str,
    api_key: str | None,
    rate_limit_rps: float | None,
    *,
    forbidden_token: str | None = None,
    model: str | None = None,
) -> tuple[dict, list[dict]]:
    """Probe the endpoint; returns (result, findings).

    Each probe is recorded with what was sent, the status answered and the status
    expected: no token and a made-up token → 401; a token scoped to another model or
    without the permission → 403, only where the operator supplies one; a burst over the
    declared rate limit → 429, only where a rate limit is declared. GET /v1/models
    generates no tokens; the forbidden token asks for one token of ``model`` when known.
    """
    base = parse_endpoint(endpoint)
    root = f"{base.scheme}://{base.host_header}{base.base_path}"
    url = f"{root}/v1/models"
    wrong = "diligence-wrong-" + secrets.token_hex(8)
    checks = {
        "no_token": _status(url, None),
        "wrong_token": _status(url, wrong),
        "valid_token": _status(url, api_key) if api_key else None,
    }
    probes = [
        _probe("no_token", "GET /v1/models without a token", 401, checks["no_token"]),
        _probe("wrong_token", "GET /v1/models with a made-up token", 401, checks["wrong_token"]),
        _forbidden_probe(root, url, forbidden_token, model),
    ]
    if forbidden_token:
        checks["forbidden_token"] = probes[-1]["status"]
    findings = []
    for probe, check_id, message in (
        (probes[0], "AUTH-NO-TOKEN", "request without a token was not refused with 401"),
        (probes[1], "AUTH-WRONG-TOKEN", "request with a wrong token was not refused with 401"),
        (
            probes[2],
            "AUTH-FORBIDDEN-TOKEN",
            "token without the permission was not refused with 403",
        ),
    ):
        if probe["ran"] and probe["status"] != probe["expected"]:
            findings.append(_finding(check_id, "fail", message, probe["status"]))
    result: dict[str, object] = {"url_path": "/v1/models", "statuses": checks, "rate_limit": None}
    if rate_limit_rps:
        rate_limit = _burst(url, api_key, rate_limit_rps)
        result["rate_limit"] = rate_limit
        probes.append(
            {
                "probe": "rate_limit",
                "ran": True,
                "sent": f"{rate_limit['requests']} requests to GET /v1/models at once, over "
                f"the declared {rate_limit_rps:g} requests/s",
                "status": 429 if rate_limit["status_counts"].get("429") else None,
                "expected": 429,
                **rate_limit,
            }
        )
        if rate_limit["status_counts"].get("429", 0) == 0:
            findings.append(
                _finding(
                    "AUTH-RATE-LIMIT",
                    "warn",
                    "a burst above the declared rate limit got no 429",
                    None,
                )
            )
    else:
        probes.append(_probe("rate_limit", "nothing", 429, None, NO_RATE_LIMIT))
    result["probes"] = probes
    return result, findings


def _forbidden_probe(root: str, url: str, token: str | None, model: str | None) -> dict:
    if not token:
        return _probe("forbidden_token", "nothing", 403, None, NO_FORBIDDEN_TOKEN)
    if model:
        body = {"model": model, "messages": [{"role": "user", "content": "1"}], "max_tokens": 1}
        sent = f"POST /v1/chat/completions for {model} (one token) with the forbidden token"
        return _probe(
            "forbidden_token", sent, 403, _status(f"{root}/v1/chat/completions", token, body=body)
        )
    return _probe(
        "forbidden_token", "GET /v1/models with the forbidden token", 403, _status(url, token)
    )


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
