"""Every evidence page and endpoint for every role; pages, downloads, tokens, query counts."""

import copy
import hashlib
import html
import shlex
from decimal import Decimal

import pytest
from django.test import override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from apps.evidence.models import HarnessToken
from apps.evidence.selectors import latest_verification, verification_passing
from apps.evidence.services import bundle_receive
from tests.evidence.factories import bundle_for, make_bundle_record, make_token, serialise
from tests.factories import FULL_SPEC, make_case, make_offer
from tests.pages import whole_case
from tests.stored import store_folder

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
TOKEN_READERS = {"tariq", "aude", "ada"}
TOKEN_ISSUERS = {"tariq", "ada"}


@pytest.fixture(scope="module")
def _world(module_people, cpu_bundle, tmp_path_factory):
    tariq = module_people["tariq"]
    media = tmp_path_factory.mktemp("evidence-media")
    with override_settings(MEDIA_ROOT=media):
        case = make_case(tariq)
        offer = make_offer(tariq, case, spec=FULL_SPEC)
        issued = make_token(tariq, case, offer)
        raw = serialise(bundle_for(cpu_bundle, issued.record))
        bundle, _ = bundle_receive(token=issued.record, raw=raw)
    return media, {"case": case, "offer": offer, "token": issued, "bundle": bundle, "raw": raw}


@pytest.fixture
def world(_world, people, _media):
    """A real bundle received through the upload pipeline, built once for the module; each
    test its copy, with the bundle's file in the test's storage."""
    media, built = _world
    store_folder(media)
    return copy.deepcopy(built)


@pytest.fixture(scope="module")
def _light(module_people, tmp_path_factory):
    tariq = module_people["tariq"]
    media = tmp_path_factory.mktemp("evidence-light-media")
    with override_settings(MEDIA_ROOT=media):
        case = make_case(tariq)
        offer = make_offer(tariq, case, spec=FULL_SPEC)
        issued = make_token(tariq, case, offer)
        bundle = make_bundle_record(case, offer, issued.record, n=1, content=b"{}")
    return media, {"case": case, "offer": offer, "token": issued, "bundle": bundle}


@pytest.fixture
def light(_light, people, _media):
    """A stored bundle without the upload pipeline: the access tables need only its record.
    Built once for the module; each test its copy, its file in the test's storage."""
    media, built = _light
    store_folder(media)
    return copy.deepcopy(built)


PAGES = [
    ("evidence:case", lambda w: {"pk": w["case"].pk}, EVERYONE),
    ("evidence:bundles", lambda w: {"pk": w["case"].pk}, EVERYONE),
    ("evidence:detail", lambda w: {"pk": w["bundle"].pk}, EVERYONE),
    ("evidence:raw", lambda w: {"pk": w["bundle"].pk}, EVERYONE),
    ("evidence:tokens", lambda w: {"pk": w["case"].pk}, TOKEN_READERS),
    ("evidence:zipapp", lambda w: {}, EVERYONE),
]


@pytest.mark.parametrize("name,kwargs,allowed", PAGES, ids=[p[0] for p in PAGES])
@pytest.mark.parametrize("role", ROLES)
def test_page_access(browser_as, light, name, kwargs, allowed, role):
    response = browser_as(role).get(reverse(name, kwargs=kwargs(light)))
    assert response.status_code == (200 if role in allowed else 403)


@pytest.mark.parametrize("name,kwargs,allowed", PAGES, ids=[p[0] for p in PAGES])
def test_pages_send_anonymous_to_login(client, light, name, kwargs, allowed):
    response = client.get(reverse(name, kwargs=kwargs(light)))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


API = [
    ("get", lambda w: "/api/v1/evidence-bundles/", None, EVERYONE, 200),
    ("get", lambda w: f"/api/v1/evidence-bundles/{w['bundle'].pk}/", None, EVERYONE, 200),
    ("get", lambda w: f"/api/v1/evidence-bundles/{w['bundle'].pk}/raw/", None, EVERYONE, 200),
    ("get", lambda w: "/api/v1/spec-verifications/", None, EVERYONE, 200),
    ("get", lambda w: "/api/v1/evidence/schema/", None, EVERYONE, 200),
    ("get", lambda w: "/api/v1/harness-tokens/", None, TOKEN_READERS, 200),
    (
        "post",
        lambda w: "/api/v1/harness-tokens/",
        lambda w: {"case": w["case"].pk, "offer": w["offer"].pk, "ttl_hours": 2},
        TOKEN_ISSUERS,
        201,
    ),
    (
        "post",
        lambda w: f"/api/v1/harness-tokens/{w['token'].record.pk}/revoke/",
        lambda w: {"change_reason": "Run finished"},
        TOKEN_ISSUERS,
        200,
    ),
]


@pytest.mark.parametrize(
    "method,path,body,allowed,ok", API, ids=[f"{a[0]} {i}" for i, a in enumerate(API)]
)
@pytest.mark.parametrize("role", ROLES)
def test_api_access(api_as, light, method, path, body, allowed, ok, role):
    response = getattr(api_as(role), method)(
        path(light), body(light) if body else None, format="json"
    )
    assert response.status_code == (ok if role in allowed else 403)


@pytest.mark.parametrize(
    "method,path,body,allowed,ok", API, ids=[f"{a[0]} {i}" for i, a in enumerate(API)]
)
def test_api_anonymous_is_401(light, method, path, body, allowed, ok):
    response = getattr(APIClient(), method)(
        path(light), body(light) if body else None, format="json"
    )
    assert response.status_code == 401


def test_nobody_can_edit_a_bundle(api_as, world):
    url = f"/api/v1/evidence-bundles/{world['bundle'].pk}/"
    for method in ("patch", "put", "delete"):
        response = getattr(api_as("ada"), method)(url, {}, format="json")
        assert response.status_code in (403, 405)  # no write route exists at all


def test_token_api_shows_the_token_once_and_stores_only_its_hash(api_as, world):
    response = api_as("tariq").post(
        "/api/v1/harness-tokens/", {"case": world["case"].pk}, format="json"
    )
    token = response.json()["token"]
    assert token.startswith("dlh_") and response.json()["nonce"]
    record = HarnessToken.objects.get(pk=response.json()["record"]["id"])
    assert record.token_hash == hashlib.sha256(token.encode()).hexdigest()
    listed = api_as("tariq").get(f"/api/v1/harness-tokens/{record.pk}/").json()
    assert token not in str(listed) and listed["prefix"] == token[:12]
    history = record.history.get()
    assert history.history_user.username == "tariq"
    assert history.history_change_reason == "Harness token issued"


def test_tokens_page_issues_once_with_the_command_line(browser_as, world):
    response = browser_as("tariq").post(
        reverse("evidence:tokens", args=[world["case"].pk]),
        {"offer": world["offer"].pk, "ttl_hours": 24, "label": "vendor box 1"},
    )
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    record = HarnessToken.objects.get(label="vendor box 1")
    body = response.content.decode()
    assert "python3 diligence-harness.pyz run" in body
    assert f"--nonce {record.nonce}" in body and "/api/v1/evidence/" in body
    assert "/harness/diligence-harness.pyz" in body
    # The declared spec says nothing of scoped tokens: no token without the permission asked.
    assert 'id="forbidden-token-needed"' not in body
    again = browser_as("tariq").get(reverse("evidence:tokens", args=[world["case"].pk]))
    assert "python3 diligence-harness.pyz run" not in again.content.decode()


def _command(body: str, element_id: str) -> list[str]:
    start = body.index(f'<code id="{element_id}">') + len(f'<code id="{element_id}">')
    return shlex.split(html.unescape(body[start : body.index("</code>", start)]))


def test_the_token_page_gives_one_command_that_runs_everything_the_acceptance_needs(
    browser_as, people, tariq
):
    from diligence_harness.cli import build_parser
    from diligence_harness.steps import OPTIONAL_STEPS, STEPS

    from apps.core.services import tracked_update
    from tests.acceptance.factories import approved_offer, make_plan

    case, offer = approved_offer(people)
    case = tracked_update(case, actor=tariq, reason="Tighter SLO", fields={"slo_p95_ttft_ms": 1200})
    make_plan(tariq, offer, ladder="1,4,16", soak_minutes=45)
    tracked_update(
        offer.declared_spec,
        actor=tariq,
        reason="Rate limit and token scopes from the vendor's terms",
        fields={"rate_limit_rps": Decimal("5.0"), "tokens_scoped": True},
    )
    response = browser_as("tariq").post(
        reverse("evidence:tokens", args=[case.pk]),
        {
            "offer": offer.pk,
            "ttl_hours": 24,
            "label": "full run",
            "endpoint": "https://gpu.vendor.example:8000/v1",
            "model": "Qwen/Qwen2.5-72B-Instruct",
        },
    )
    assert response.status_code == 200
    body = response.content.decode()
    record = HarnessToken.objects.get(label="full run")
    command = _command(body, "run-command")
    assert command[:3] == ["python3", "diligence-harness.pyz", "run"]
    # The harness itself reads the command: every option is one it knows.
    args = build_parser().parse_args(command[2:])
    assert args.case == str(case.pk)
    assert args.endpoint == "https://gpu.vendor.example:8000/v1"
    assert args.model == "Qwen/Qwen2.5-72B-Instruct"
    assert args.ladder == (1, 4, 16)  # the offer's acceptance ladder
    assert args.slo_ttft_ms == 1200  # the case's P95 time-to-first-token SLO
    assert args.soak_duration == "45m"  # the plan's restart-free soak
    assert args.rate_limit_rps == 5.0  # the declared limit the security probe exceeds
    # Scoped tokens: the page asks for a token without the permission, which the harness
    # takes from its environment (docs/rules/evidence.md#endpoint-security).
    assert 'id="forbidden-token-needed"' in body and "DILIGENCE_FORBIDDEN_TOKEN" in body
    assert args.reference == "reference.json"
    assert args.upload == "http://testserver/api/v1/evidence/"
    assert (
        args.token.startswith("dlh_")
        and record.token_hash == hashlib.sha256(args.token.encode()).hexdigest()
    )
    assert args.nonce == record.nonce and args.out == "bundle.json"
    assert args.min_requests_per_level == 130 and args.skip == ()
    # Every step runs: the optional ones (soak, correctness) are asked for, none is skipped;
    # between nodes has a command pair of its own, for two nodes.
    in_the_run = {step: option for step, option in OPTIONAL_STEPS.items() if step != "netpeer"}
    assert all(getattr(args, option) for option in in_the_run.values())
    assert {"inventory", "environment", "bench", "loadtest", "netprobe", "authprobe"} <= set(STEPS)
    reference = _command(body, "reference-command")
    assert reference[2:3] == ["correctness"] and reference[-2:] == [
        "--record-reference",
        "reference.json",
    ]
    assert str(offer.vendor) in body


def test_without_a_plan_or_endpoint_the_command_has_defaults_and_placeholders(browser_as, tariq):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    response = browser_as("tariq").post(
        reverse("evidence:tokens", args=[case.pk]), {"offer": offer.pk, "ttl_hours": 2}
    )
    command = _command(response.content.decode(), "run-command")
    options = dict(zip(command[3::2], command[4::2]))
    assert options["--endpoint"] == "<OPENAI_COMPATIBLE_URL>"
    assert options["--model"] == "<MODEL_NAME>"
    assert options["--ladder"] == "1,4,8,16,32" and options["--soak-duration"] == "30m"
    assert options["--slo-ttft-ms"] == str(case.slo_p95_ttft_ms)
    assert "--rate-limit-rps" not in options  # no limit declared: the probe says so


def test_the_token_page_in_chinese_explains_the_command(browser_as, tariq):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    response = browser_as("tariq").post(
        reverse("evidence:tokens", args=[case.pk]),
        {"offer": offer.pk, "ttl_hours": 2},
        HTTP_ACCEPT_LANGUAGE="zh-hans",
    )
    body = response.content.decode()
    assert "用一条命令运行验收所需的全部内容" in body and "1, 4, 8, 16, 32" in body
    assert "30 分钟无重启连续运行" in body and "请替换尖括号中的占位符" in body


def test_tokens_page_refuses_bad_input_and_saves_nothing(browser_as, world):
    before = HarnessToken.objects.count()
    response = browser_as("ada").post(
        reverse("evidence:tokens", args=[world["case"].pk]), {"ttl_hours": 100000}
    )
    assert response.status_code == 200 and "ttl_hours" in response.content.decode()
    assert HarnessToken.objects.count() == before


def test_auditor_cannot_issue_or_revoke(browser_as, world):
    url = reverse("evidence:tokens", args=[world["case"].pk])
    assert browser_as("aude").post(url, {"ttl_hours": 2}).status_code == 403
    revoke = reverse("evidence:token-revoke", args=[world["token"].record.pk])
    assert browser_as("aude").post(revoke, {"change_reason": "x"}).status_code == 403


def test_revoke_from_the_page(browser_as, world):
    revoke = reverse("evidence:token-revoke", args=[world["token"].record.pk])
    response = browser_as("tariq").post(revoke, {"change_reason": "Run done"})
    assert response.status_code == 302
    record = HarnessToken.objects.get(pk=world["token"].record.pk)
    assert record.revoked_at is not None and record.revoked_by.username == "tariq"
    assert record.history.first().history_change_reason == "Run done"


def test_raw_download_is_the_exact_bytes_with_digest(browser_as, world):
    response = browser_as("lena").get(reverse("evidence:raw", args=[world["bundle"].pk]))
    assert b"".join(response.streaming_content) == world["raw"]
    assert response["X-Content-SHA256"] == world["bundle"].sha256


def test_bundle_page_shows_checks_charts_and_digest(browser_as, world):
    body = browser_as("priya").get(reverse("evidence:detail", args=[world["bundle"].pk]))
    text = body.content.decode()
    assert world["bundle"].sha256 in text
    assert "identity.device_count" in text and "<polyline" in text
    assert "round 1 · short" in text and "round 2 · short" in text
    assert "Likely causes and next steps" in text


def test_zipapp_download_runs(browser_as, world, tmp_path):
    import subprocess
    import sys

    response = browser_as("tariq").get(reverse("evidence:zipapp"))
    path = tmp_path / "diligence-harness.pyz"
    path.write_bytes(response.content)
    assert hashlib.sha256(response.content).hexdigest() == response["X-Content-SHA256"]
    result = subprocess.run(
        [sys.executable, str(path), "--version"], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0 and "diligence-harness" in result.stdout


def test_case_page_panel_and_missing_line(browser_as, world, tariq):
    other = make_offer(tariq, world["case"], spec=FULL_SPEC)
    text = whole_case(browser_as("aude"), world["case"].pk).content.decode()
    assert "Evidence and spec verification" in text
    assert f"No passing spec verification for {other.vendor}" in text
    assert f"No passing spec verification for {world['offer'].vendor}" in text  # it failed


def test_selectors_for_the_approval_gate(world, tariq):
    case, offer, token = world["case"], world["offer"], world["token"].record
    assert latest_verification(offer).verdict == "failed"
    newer = make_bundle_record(case, offer, token, n=7, verdict="verified")
    latest = latest_verification(offer)
    assert latest.bundle == newer
    assert verification_passing(latest, max_age_days=30)
    assert not verification_passing(latest_verification(make_offer(tariq, case)), max_age_days=30)
    from datetime import timedelta

    from django.utils import timezone

    from apps.core.services import tracked_update

    tracked_update(
        newer,
        actor=tariq,
        reason="test: age",
        fields={"received_at": timezone.now() - timedelta(days=40)},
    )
    assert not verification_passing(latest_verification(offer), max_age_days=30)


@pytest.mark.parametrize("page", ["evidence:case", "cases:detail"])
def test_case_evidence_queries_are_bounded(
    browser_as, world, tariq, page, django_assert_max_num_queries
):
    case, offer, token = world["case"], world["offer"], world["token"].record
    client = browser_as("tariq")
    url = reverse(page, args=[case.pk])
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as one:
        client.get(url)
    for n in range(1, 50):
        make_bundle_record(case, offer, token, n=1000 + n)
    with django_assert_max_num_queries(len(one)):
        response = client.get(url)
    assert response.status_code == 200


def test_suggested_measured_performance_score(world, browser_as):
    from apps.evidence.selectors import suggested_performance_score

    assert suggested_performance_score(latest_verification(world["offer"])) == 0  # failed
    assert suggested_performance_score(None) is None
    text = browser_as("priya").get(reverse("evidence:case", args=[world["case"].pk])).content
    assert b"0 / 5" in text
