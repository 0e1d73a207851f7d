"""Endpoint security probes, from the upload API to the approval gate and the pages.

A bundle whose probes pass, one where the endpoint accepts a request without a
token, and one whose rate-limit probe did not run: each is uploaded through
POST /api/v1/evidence/, judged by the server, composed into the offer's
verification and read by the "endpoint refuses" gate, which names the probe.
"""

import copy
import json
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.evidence.demo import demo_bundle
from apps.evidence.models import EvidenceBundle
from apps.evidence.rules import security
from tests.approvals.factories import make_ready_case
from tests.evidence.factories import make_token, serialise
from tests.evidence.test_upload_worker import client_for

URL = "/api/v1/evidence/"
GATE = "endpoint_security"


@pytest.fixture
def ready(people):
    case, offer, _offers = make_ready_case(people)
    return case, offer


def _upload(people, offer, probes: list[dict] | None, django_capture_on_commit_callbacks):
    issued = make_token(people["tariq"], offer.case, offer)
    document = demo_bundle(offer, nonce=issued.record.nonce, when=timezone.now())
    document = copy.deepcopy(document)
    step = document["steps"]["authprobe"]
    if probes is None:
        document["steps"]["authprobe"] = {
            **step,
            "status": "skipped",
            "reason": "no --endpoint given",
            "result": None,
        }
    else:
        step["result"]["probes"] = probes
        step["result"]["statuses"] = {}
        step["result"]["rate_limit"] = None
    raw = serialise(document)
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(issued.token).post(URL, data=raw, content_type="application/json")
    assert response.status_code in (201, 202), response.content
    return EvidenceBundle.objects.get(sha256=json.loads(response.content)["sha256"])


def _gate(api, case, offer) -> dict:
    data = api.get(f"/api/v1/cases/{case.pk}/gates/").json()
    entry = next(o for o in data["offers"] if o["offer"] == offer.pk)
    return next(g for g in entry["gates"] if g["key"] == GATE)


def _probe(name, status, expected, **extra) -> dict:
    return {"probe": name, "ran": True, "sent": "test", "status": status, "expected": expected}


BURST = {"declared_rps": 2.0, "requests": 9, "status_counts": {"200": 3, "429": 6}}
PASSING = [
    _probe("no_token", 401, 401),
    _probe("wrong_token", 401, 401),
    {"probe": "forbidden_token", "ran": False, "status": None, "expected": 403,
     "reason": "no such token supplied"},
    {**_probe("rate_limit", 429, 429), **BURST},
]  # fmt: skip


def test_passing_failing_and_unmeasured_probes_reach_the_gate(
    ready, people, api_as, django_capture_on_commit_callbacks
):
    case, offer = ready
    api = api_as("aude")

    bundle = _upload(people, offer, PASSING, django_capture_on_commit_callbacks)
    gate = _gate(api, case, offer)
    assert gate["held"] is True, gate
    assert "Every required probe of the endpoint passed." in gate["reason"]
    assert (
        "Not run: Token without the permission is refused (no such token supplied)."
        in gate["reason"]
    )
    statuses = {c["key"]: c["status"] for c in bundle.verification.checks}
    assert statuses[security.NO_TOKEN] == "pass"
    assert bundle.verification.sources["authprobe"]["bundle"] == bundle.pk

    # The endpoint now accepts a request without a token.
    failing = [_probe("no_token", 200, 401), *PASSING[1:]]
    bundle = _upload(people, offer, failing, django_capture_on_commit_callbacks)
    gate = _gate(api, case, offer)
    assert gate["held"] is False
    assert (
        "Failed: Request without a token is refused (answered HTTP 200 (accepted); expected "
        "HTTP 401 (refused: not authenticated))."
    ) in gate["reason"]
    # The probes leave the spec verdict to the other checks.
    assert bundle.verification.verdict == "verified"

    # A run without a declared rate limit: the burst did not run, which is never a pass.
    unmeasured = [
        *PASSING[:3],
        {"probe": "rate_limit", "ran": False, "status": None, "expected": 429,
         "reason": "no rate limit declared"},
    ]  # fmt: skip
    _upload(people, offer, unmeasured, django_capture_on_commit_callbacks)
    gate = _gate(api, case, offer)
    assert gate["held"] is False
    assert (
        "Not measured: Requests over the rate limit are refused (no rate limit was declared "
        "for the endpoint)." in gate["reason"]
    )
    assert "Failed" not in gate["reason"]

    # A later run without the probe step keeps the newest probes that were measured.
    _upload(people, offer, None, django_capture_on_commit_callbacks)
    assert "Not measured: Requests over the rate limit" in _gate(api, case, offer)["reason"]


def test_the_probes_show_on_the_evidence_pages_and_in_the_packet(
    ready, people, client, django_capture_on_commit_callbacks
):
    case, offer = ready
    failing = [_probe("no_token", 200, 401), *PASSING[1:]]
    bundle = _upload(people, offer, failing, django_capture_on_commit_callbacks)
    client.force_login(people["aude"])
    page = client.get(reverse("evidence:case", args=[case.pk])).content.decode()
    assert 'id="endpoint-security"' in page
    assert f'id="security-{offer.pk}-security.no_token"' in page
    assert "where HTTP 401 (refused: not authenticated) was expected" in page
    detail = client.get(reverse("evidence:detail", args=[bundle.pk])).content.decode()
    assert 'id="check-security.no_token"' in detail
    assert 'id="check-security.rate_limit"' in detail

    from apps.evidence import packet

    section = packet.packet_section(case)
    from django.template.loader import render_to_string

    html = render_to_string(section.template, section.context)
    assert "Request without a token is refused" in html
    assert "HTTP 200 (accepted)" in html


def test_an_approval_goes_stale_when_a_probe_it_relied_on_fails(
    ready, people, django_capture_on_commit_callbacks
):
    """Bound like the verification gate: to the composed verification's values."""
    from apps.approvals.binding import changes_for
    from apps.approvals.services import approval_decide, case_submit_for_approval

    case, offer = ready
    _upload(people, offer, PASSING, django_capture_on_commit_callbacks)
    case = case_submit_for_approval(actor=people["priya"], case=case)
    approval = approval_decide(
        actor=people["tariq"], case=case, decision="approved", comment="Gates held", offer=offer
    )
    relied = approval.bound_state["verification"]["values"]["checks"]
    assert relied[security.NO_TOKEN][0] == "pass"
    _upload(people, offer, PASSING, django_capture_on_commit_callbacks)  # the same answers
    assert changes_for([approval])[approval.pk] == []
    _upload(
        people, offer, [_probe("no_token", 200, 401), *PASSING[1:]],
        django_capture_on_commit_callbacks,
    )  # fmt: skip
    [change] = changes_for([approval])[approval.pk]
    assert "Request without a token is refused pass → fail" in change.reason


def test_a_rate_limit_in_the_declared_spec_is_the_one_probed(
    ready, people, api_as, django_capture_on_commit_callbacks
):
    """The vendor states 10 requests/s in writing: a burst sized for 2/s says nothing."""
    from apps.offers.services import declared_spec_update

    case, offer = ready
    declared_spec_update(
        actor=people["priya"],
        spec=offer.declared_spec,
        reason="Rate limit from the quote",
        fields={"rate_limit_rps": Decimal("10")},
    )
    _upload(people, offer, PASSING, django_capture_on_commit_callbacks)
    gate = _gate(api_as("aude"), case, offer)
    assert gate["held"] is False
    assert "below the declared 10 requests/s" in gate["reason"]


def _scoped(people, offer, value) -> None:
    from apps.offers.models import DeclaredSpec
    from apps.offers.services import declared_spec_update

    declared_spec_update(
        actor=people["tariq"],
        spec=DeclaredSpec.objects.get(offer=offer),
        reason="Token scopes from the vendor's API documentation",
        fields={"tokens_scoped": value},
    )


FORBIDDEN_REFUSED = [*PASSING[:2], _probe("forbidden_token", 403, 403), PASSING[3]]
NOT_RUN_LINE = "Token without the permission is refused (no such token supplied)"
OPTIONAL = (
    "The probe of a token without the permission is optional: the declared spec does not "
    "say the API tokens are scoped."
)


def test_scoped_tokens_make_the_probe_of_a_forbidden_token_required(
    ready, people, api_as, django_capture_on_commit_callbacks
):
    """docs/rules/evidence.md#endpoint-security: a vendor that says its tokens are scoped
    must show a token without the permission refused; "not run" is then never a pass."""
    case, offer = ready
    api = api_as("aude")
    bundle = _upload(people, offer, PASSING, django_capture_on_commit_callbacks)
    # Nothing stated: the probe is optional and the gate says so.
    gate = _gate(api, case, offer)
    assert gate["held"] is True and OPTIONAL in gate["reason"], gate
    forbidden = next(c for c in bundle.verification.checks if c["key"] == security.FORBIDDEN_TOKEN)
    assert forbidden["tolerance"] == "only HTTP 403"  # judged as before: optional

    # The vendor says its tokens are scoped: the probes already held now fall short.
    _scoped(people, offer, True)
    gate = _gate(api, case, offer)
    assert gate["held"] is False
    assert f"Not measured: {NOT_RUN_LINE}." in gate["reason"]
    assert "The declared spec says the API tokens are scoped" in gate["reason"]
    assert OPTIONAL not in gate["reason"]

    # A run given a token scoped to another model, refused with 403: the gate holds.
    bundle = _upload(people, offer, FORBIDDEN_REFUSED, django_capture_on_commit_callbacks)
    gate = _gate(api, case, offer)
    assert gate["held"] is True, gate
    assert gate["reason"] == "Every required probe of the endpoint passed."
    forbidden = next(c for c in bundle.verification.checks if c["key"] == security.FORBIDDEN_TOKEN)
    assert forbidden["status"] == "pass"
    assert forbidden["tolerance"].endswith(
        "required: the declared spec says the API tokens are scoped"
    )

    # A later run without that token: not measured again, so the gate falls.
    _upload(people, offer, PASSING, django_capture_on_commit_callbacks)
    assert _gate(api, case, offer)["held"] is False

    # The vendor says they are not scoped: the probe is optional again, and the gate says so.
    _scoped(people, offer, False)
    gate = _gate(api, case, offer)
    assert gate["held"] is True
    assert f"Not run: {NOT_RUN_LINE}." in gate["reason"] and OPTIONAL in gate["reason"]


def test_the_declared_spec_states_whether_tokens_are_scoped(ready, people, api_as, browser_as):
    case, offer = ready
    url = f"/api/v1/declared-specs/{offer.pk}/"
    body = api_as("aude").get(url).json()
    assert body["tokens_scoped"] is None
    form = browser_as("tariq").get(reverse("offers:spec", args=[offer.pk])).content.decode()
    assert '<option value="" selected>not stated</option>' in form
    changed = api_as("tariq").patch(
        url,
        {"tokens_scoped": True, "version": body["version"], "change_reason": "API docs"},
        format="json",
    )
    assert changed.status_code == 200, changed.content
    assert changed.json()["tokens_scoped"] is True
    page = browser_as("aude").get(reverse("offers:detail", args=[offer.pk])).content.decode()
    assert "API tokens scoped" in page
    assert "yes: a token without the permission must be refused (HTTP 403)" in page
    refused = api_as("tariq").patch(
        url,
        {"tokens_scoped": "perhaps", "version": changed.json()["version"], "change_reason": "x"},
        format="json",
    )
    assert refused.status_code == 400 and "tokens_scoped" in refused.json()
    # Back to "not stated".
    cleared = api_as("tariq").patch(
        url,
        {"tokens_scoped": None, "version": changed.json()["version"], "change_reason": "Unsure"},
        format="json",
    )
    assert cleared.status_code == 200 and cleared.json()["tokens_scoped"] is None
