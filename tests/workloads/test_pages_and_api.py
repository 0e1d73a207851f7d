"""A case's sets through the pages and the API, for every role: upload, refusals that store
nothing, versions, statistics, downloads, and the harness token's read-only fetch."""

import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

import tests.evidence.conftest  # noqa: F401  (puts the harness, the test oracle, on the path)
from apps.evidence.services import harness_token_create
from apps.workloads.models import PlanWorkload, WorkloadSet
from tests.acceptance.factories import approved_offer, make_plan
from tests.factories import make_case
from tests.stored import stored_names
from tests.workloads.factories import upload_set
from tests.workloads.setfiles import jsonl, prompt_lines, sample_lines

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
READERS = set(ROLES)
UPLOADERS = {"tariq", "ada"}
SET_API = "/api/v1/workload-sets/"
FETCH = "/api/v1/harness/sets/"


@pytest.fixture
def case(tariq):
    return make_case(tariq)


def _post_page(client, case, raw: bytes, kind="prompts", name="tickets"):
    return client.post(
        reverse("workloads:set_upload", args=[case.pk]),
        {"kind": kind, "name": name, "file": SimpleUploadedFile("t.jsonl", raw)},
    )


def _post_api(api, case, raw: bytes, kind="prompts", name="tickets"):
    return api.post(
        f"/api/v1/cases/{case.pk}/workload-sets/?kind={kind}&name={name}",
        data=raw,
        content_type="application/x-ndjson",
    )


def test_a_tech_lead_uploads_a_prompt_set_and_everyone_of_the_case_reads_its_statistics(
    browser_as, case
):
    raw = jsonl(prompt_lines(per_tier=200))
    response = _post_page(browser_as("tariq"), case, raw)
    stored = WorkloadSet.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("workloads:set", args=[stored.pk])
    assert stored.sha256 == hashlib.sha256(raw).hexdigest()
    assert (stored.item_count, stored.set_version, stored.size_bytes) == (600, 1, len(raw))
    assert stored.storage_name in stored_names("workloads")
    for name in ROLES:
        page = browser_as(name).get(reverse("workloads:set", args=[stored.pk]))
        assert page.status_code == 200, name
        body = page.content.decode()
        assert stored.sha256 in body and "short" in body and "long" in body
        assert "Customer ticket" not in body  # statistics, never the prompts
        download = browser_as(name).get(reverse("workloads:set_download", args=[stored.pk]))
        assert download.status_code == 200
        assert b"".join(download.streaming_content) == raw


def test_uploading_the_same_name_again_makes_the_next_version(tariq, case):
    first = upload_set(tariq, case)
    second = upload_set(tariq, case, raw=jsonl(prompt_lines(per_tier=3)))
    assert (first.set_version, second.set_version) == (1, 2)
    assert str(second) == "support tickets v2"


BAD_SETS = {
    "bad JSON": (b'{"id": "a", "prompt": "x"}\n{"id": "b", "prompt": \n', 2, "not valid JSON"),
    "missing field": (b'{"id": "a"}\n', 1, "the field 'prompt' is missing"),
    "unknown tier": (b'{"id": "a", "prompt": "x", "tier": "tiny"}\n', 1, "unknown tier"),
    "duplicate id": (b'{"id": "a", "prompt": "x"}\n{"id": "a", "prompt": "y"}\n', 2, "duplicate"),
    "non-UTF-8": (b'{"id": "a", "prompt": "\xff\xfe"}\n', 1, "not UTF-8 text"),
}


@pytest.mark.parametrize("label", BAD_SETS)
def test_a_malformed_set_is_refused_on_the_page_with_its_line_and_nothing_is_stored(
    browser_as, case, label
):
    raw, line, reason = BAD_SETS[label]
    before = stored_names("workloads")
    response = _post_page(browser_as("tariq"), case, raw)
    assert response.status_code == 200
    body = response.content.decode()
    assert "nothing was stored" in body
    assert f"<td>{line}</td>" in body and reason in body.replace("&#x27;", "'")
    assert not WorkloadSet.objects.exists()
    assert stored_names("workloads") == before


@pytest.mark.parametrize("label", BAD_SETS)
def test_a_malformed_set_is_refused_by_the_api_with_every_line_and_nothing_is_stored(
    api_as, case, label
):
    raw, line, reason = BAD_SETS[label]
    before = stored_names("workloads")
    response = _post_api(api_as("tariq"), case, raw)
    assert response.status_code == 400
    body = response.json()
    assert body["total"] == 1
    assert body["refusals"][0]["line"] == line and reason in body["refusals"][0]["reason"]
    assert not WorkloadSet.objects.exists()
    assert stored_names("workloads") == before


def test_a_set_over_the_size_limit_is_refused_before_it_is_read(api_as, browser_as, case, settings):
    settings.WORKLOAD_SET_MAX_BYTES = 1000
    raw = jsonl(prompt_lines(per_tier=10))
    before = stored_names("workloads")
    api = _post_api(api_as("tariq"), case, raw)
    assert api.status_code == 413
    page = _post_page(browser_as("tariq"), case, raw)
    assert page.status_code in (200, 413)
    assert "larger than" in page.content.decode()
    assert not WorkloadSet.objects.exists()
    assert stored_names("workloads") == before


def test_the_api_stores_a_sample_set_and_lists_it_with_its_statistics(api_as, case):
    raw = jsonl(sample_lines(50))
    created = _post_api(api_as("tariq"), case, raw, kind="samples", name="core answers")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["sha256"] == hashlib.sha256(raw).hexdigest()
    assert body["statistics"]["core"] == 45 and body["item_count"] == 50
    for name in ROLES:
        listed = api_as(name).get(SET_API, {"case": case.pk})
        assert listed.status_code == 200
        assert [s["sha256"] for s in listed.json()["results"]] == [body["sha256"]]
        raw_back = api_as(name).get(f"{SET_API}{body['id']}/raw/")
        assert raw_back.status_code == 200 and b"".join(raw_back.streaming_content) == raw


@pytest.mark.parametrize("name", ROLES)
def test_only_the_tech_lead_uploads_sets(api_as, browser_as, case, name):
    raw = jsonl(prompt_lines(per_tier=2))
    api = _post_api(api_as(name), case, raw, name=f"by {name}")
    page = _post_page(browser_as(name), case, jsonl(prompt_lines(per_tier=3)), name=f"p {name}")
    if name in UPLOADERS:
        assert api.status_code == 201 and page.status_code == 302
    else:
        assert api.status_code == 403 and page.status_code == 403
    assert WorkloadSet.objects.count() == (2 if name in UPLOADERS else 0)


@pytest.mark.parametrize("name", ROLES)
def test_each_role_on_the_sets_pages(browser_as, tariq, case, name):
    stored = upload_set(tariq, case)
    client = browser_as(name)
    for url in (
        reverse("workloads:case", args=[case.pk]),
        reverse("workloads:set", args=[stored.pk]),
        reverse("workloads:set_download", args=[stored.pk]),
    ):
        assert client.get(url).status_code == (200 if name in READERS else 403), url
    form = client.get(reverse("workloads:set_upload", args=[case.pk]))
    assert form.status_code == (200 if name in UPLOADERS else 403)


def _signed_in(people, name) -> Client:
    """A browser signed in as ``name`` whose CSRF check is enforced, with its CSRF token."""
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(people[name])
    browser.get(reverse("cases:list"))
    browser.csrf_token = browser.cookies["csrftoken"].value
    return browser


SESSION_BODIES = [
    "application/x-ndjson",
    "application/json",
    "text/plain",
    "application/x-www-form-urlencoded",
]


@pytest.mark.parametrize("content_type", SESSION_BODIES)
@pytest.mark.parametrize("name", ROLES)
def test_a_signed_in_person_uploads_through_the_api_as_a_token_client_does(
    people, case, name, content_type
):
    """The body a signed-in browser sends is the set, whatever its type: never a 415."""
    browser = _signed_in(people, name)
    raw = jsonl(prompt_lines(per_tier=2))
    response = browser.post(
        f"/api/v1/cases/{case.pk}/workload-sets/?kind=prompts&name=from+the+browser",
        data=raw,
        content_type=content_type,
        HTTP_X_CSRFTOKEN=browser.csrf_token,
    )
    if name in UPLOADERS:
        assert response.status_code == 201, response.content[:300]
        assert WorkloadSet.objects.get().sha256 == hashlib.sha256(raw).hexdigest()
    else:
        assert response.status_code == 403, response.content[:300]
        assert not WorkloadSet.objects.exists()


def test_a_one_line_set_sent_as_json_by_a_browser_is_stored_byte_for_byte(people, case):
    browser = _signed_in(people, "tariq")
    raw = b'{"id": "a", "prompt": "One question"}'
    response = browser.post(
        f"/api/v1/cases/{case.pk}/workload-sets/?kind=prompts&name=one",
        data=raw,
        content_type="application/json",
        HTTP_X_CSRFTOKEN=browser.csrf_token,
    )
    assert response.status_code == 201, response.content[:300]
    stored = WorkloadSet.objects.get()
    assert (stored.item_count, stored.sha256) == (1, hashlib.sha256(raw).hexdigest())


@pytest.mark.parametrize("name", ROLES)
def test_a_signed_in_person_uploads_a_form_with_the_file(people, case, name):
    browser = _signed_in(people, name)
    raw = jsonl(sample_lines(4))
    response = browser.post(
        f"/api/v1/cases/{case.pk}/workload-sets/",
        {
            "kind": "samples",
            "name": "answers",
            "file": SimpleUploadedFile("answers.jsonl", raw),
            "csrfmiddlewaretoken": browser.csrf_token,
        },
    )
    if name in UPLOADERS:
        assert response.status_code == 201, response.content[:300]
        stored = WorkloadSet.objects.get()
        assert (stored.kind, stored.name, stored.item_count) == ("samples", "answers", 4)
        assert stored.sha256 == hashlib.sha256(raw).hexdigest()
    else:
        assert response.status_code == 403
        assert not WorkloadSet.objects.exists()


@pytest.mark.parametrize("kind", ["JSONL", "form"])
def test_a_browser_without_its_csrf_token_is_refused(people, case, kind):
    browser = _signed_in(people, "tariq")
    url = f"/api/v1/cases/{case.pk}/workload-sets/?kind=prompts&name=forged"
    raw = jsonl(prompt_lines(per_tier=2))
    if kind == "form":
        response = browser.post(url, {"file": SimpleUploadedFile("s.jsonl", raw)})
    else:
        response = browser.post(url, data=raw, content_type="application/x-ndjson")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
    assert not WorkloadSet.objects.exists()


def test_a_token_client_may_send_the_set_as_a_form_too(api_as, case, settings):
    api = api_as("tariq")
    url = f"/api/v1/cases/{case.pk}/workload-sets/"
    raw = jsonl(prompt_lines(per_tier=2))
    sent = api.post(
        url + "?kind=prompts",
        {"name": "form", "file": SimpleUploadedFile("p.jsonl", raw)},
        format="multipart",
    )
    assert sent.status_code == 201, sent.content[:300]
    assert WorkloadSet.objects.get().sha256 == hashlib.sha256(raw).hexdigest()
    no_file = api.post(url + "?kind=prompts&name=x", {"name": "x"}, format="multipart")
    assert no_file.status_code == 400 and "file" in no_file.json()
    deep = api.post(
        url + "?kind=prompts&name=deep",
        {"file": SimpleUploadedFile("d.jsonl", b"[" * 100_000 + b"]" * 100_000)},
        format="multipart",
    )
    assert deep.status_code == 400
    assert deep.json()["refusals"] == [{"line": 1, "reason": "the JSON is nested too deeply"}]
    settings.WORKLOAD_SET_MAX_BYTES = 100
    too_large = api.post(
        url + "?kind=prompts&name=big",
        {"file": SimpleUploadedFile("big.jsonl", raw)},
        format="multipart",
    )
    assert too_large.status_code == 413
    assert WorkloadSet.objects.count() == 1


def test_anonymous_visitors_and_api_clients_are_refused(client, tariq, case):
    stored = upload_set(tariq, case)
    page = client.get(reverse("workloads:set", args=[stored.pk]))
    assert page.status_code == 302 and "/accounts/login/" in page["Location"]
    api = APIClient()
    assert api.get(SET_API).status_code == 401
    assert api.get(f"{SET_API}{stored.pk}/raw/").status_code == 401
    assert _post_api(api, case, b'{"id":"a","prompt":"x"}\n').status_code == 401
    assert not WorkloadSet.objects.exclude(pk=stored.pk).exists()


def test_the_harness_token_reads_its_own_cases_sets_and_nothing_else(tariq, case):
    prompts = upload_set(tariq, case)
    older = upload_set(tariq, case, kind="samples", name="answers")
    newer = upload_set(tariq, case, kind="samples", name="answers", raw=jsonl(sample_lines(7)))
    other_case = make_case(tariq)
    elsewhere = upload_set(tariq, other_case, raw=jsonl(prompt_lines(per_tier=1)))
    token = harness_token_create(actor=tariq, case=case).token
    harness = APIClient()
    harness.credentials(HTTP_AUTHORIZATION=f"Token {token}")

    fetched = harness.get(FETCH, {"kind": "prompts"})
    assert fetched.status_code == 200
    assert fetched["X-Content-SHA256"] == prompts.sha256
    newest = harness.get(FETCH, {"kind": "samples"})
    assert newest["X-Content-SHA256"] == newer.sha256
    by_digest = harness.get(FETCH, {"kind": "samples", "sha256": older.sha256})
    assert by_digest.status_code == 200 and by_digest["X-Content-SHA256"] == older.sha256
    # Another case's set, even by its digest, is unknown to this token.
    assert harness.get(FETCH, {"kind": "prompts", "sha256": elsewhere.sha256}).status_code == 404
    assert harness.get(FETCH, {"kind": "other"}).status_code == 404
    # Nothing else: the people's endpoints do not know a harness token.
    assert harness.get(SET_API).status_code in (401, 403)
    assert harness.get(f"{SET_API}{prompts.pk}/raw/").status_code in (401, 403)
    assert _post_api(harness, case, b'{"id":"a","prompt":"x"}\n').status_code in (401, 403)


def test_a_person_cannot_use_the_harness_fetch(api_as, tariq, case):
    upload_set(tariq, case)
    assert api_as("tariq").get(FETCH, {"kind": "prompts"}).status_code == 403


def test_the_plan_names_the_sets_it_requires(people, browser_as, tariq):
    case, offer = approved_offer(people)
    plan = make_plan(tariq, offer)
    prompts = upload_set(tariq, case)
    samples = upload_set(tariq, case, kind="samples", name="answers")
    url = reverse("workloads:plan_sets", args=[plan.pk])
    for name in ("priya", "lena", "aude"):
        assert browser_as(name).get(url).status_code == 403
        assert browser_as(name).post(url, {"prompt_set": prompts.pk}).status_code == 403
    assert not PlanWorkload.objects.exists()
    response = browser_as("tariq").post(url, {"prompt_set": prompts.pk, "sample_set": samples.pk})
    assert response.status_code == 302
    required = PlanWorkload.objects.get(plan=plan)
    assert (required.prompt_set, required.sample_set) == (prompts, samples)
    # A prompt set offered as the sample set is not a choice.
    wrong = browser_as("tariq").post(url, {"prompt_set": prompts.pk, "sample_set": prompts.pk})
    assert wrong.status_code == 200
    assert PlanWorkload.objects.get(plan=plan).sample_set == samples
    page = browser_as("aude").get(reverse("workloads:case", args=[case.pk])).content.decode()
    assert str(prompts) in page and str(samples) in page


def test_the_token_pages_command_fetches_the_sets_the_plan_requires(browser_as, people, tariq):
    """The one command the token page gives runs on the case's sets the plan names, by digest,
    and the harness itself reads those options; without required sets it names none."""
    import html
    import shlex

    from diligence_harness.cli import build_parser

    from apps.workloads.services import plan_workload_set

    case, offer = approved_offer(people)
    plan = make_plan(tariq, offer)

    def command() -> list[str]:
        response = browser_as("tariq").post(
            reverse("evidence:tokens", args=[case.pk]), {"offer": offer.pk, "ttl_hours": 2}
        )
        body = response.content.decode()
        start = body.index('<code id="run-command">') + len('<code id="run-command">')
        return shlex.split(html.unescape(body[start : body.index("</code>", start)]))

    assert "--prompt-set" not in command() and "--sample-set" not in command()
    prompts, samples = upload_set(tariq, case), upload_set(tariq, case, kind="samples")
    plan_workload_set(actor=tariq, plan=plan, prompt_set=prompts, sample_set=samples)
    args = build_parser().parse_args(command()[2:])
    assert args.prompt_set == f"case:{prompts.sha256}"
    assert args.sample_set == f"case:{samples.sha256}"
