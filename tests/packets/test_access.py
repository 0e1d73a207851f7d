"""Who may see, request, download and verify packets (docs/roles.md), page by page.

Every role may read and request packets — requesting one changes no record of
the case, so the auditor may too; a signed-in user without a role may not.
"""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from apps.packets.models import PacketRequest
from tests.packets.factories import make_packet_case, make_stored_packet

ROLES = ["priya", "lena", "tariq", "aude", "ada"]


@pytest.fixture
def world(priya):
    case = make_packet_case(priya, offers=1)
    packet = make_stored_packet(priya, case)
    return {"case": case, "packet": packet, "request": packet.request}


@pytest.fixture
def nobody(db):
    return get_user_model().objects.create_user(username="nobody", password="pw")


PAGES = [
    ("packets:list", lambda w: {"pk": w["case"].pk}),
    ("packets:request", lambda w: {"pk": w["case"].pk}),
    ("packets:status", lambda w: {"pk": w["request"].pk}),
    ("packets:download", lambda w: {"pk": w["packet"].pk}),
    ("packets:verify", lambda w: {}),
]


@pytest.mark.parametrize("name,kwargs", PAGES, ids=[p[0] for p in PAGES])
@pytest.mark.parametrize("role", ROLES)
def test_every_role_may_open_every_packet_page(browser_as, world, name, kwargs, role):
    response = browser_as(role).get(reverse(name, kwargs=kwargs(world)))
    assert response.status_code == 200


@pytest.mark.parametrize("name,kwargs", PAGES, ids=[p[0] for p in PAGES])
def test_a_user_without_a_role_gets_403(client, nobody, world, name, kwargs):
    client.force_login(nobody)
    assert client.get(reverse(name, kwargs=kwargs(world))).status_code == 403


@pytest.mark.parametrize("name,kwargs", PAGES, ids=[p[0] for p in PAGES])
def test_anonymous_visitors_are_sent_to_login(client, world, name, kwargs):
    response = client.get(reverse(name, kwargs=kwargs(world)))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_the_download_is_the_stored_file(browser_as, world):
    response = browser_as("aude").get(reverse("packets:download", args=[world["packet"].pk]))
    assert response["Content-Type"] == "application/pdf"
    assert f"{world['packet'].number}.pdf" in response["Content-Disposition"]
    assert b"".join(response.streaming_content) == world["packet"].file.read()


@pytest.mark.parametrize("role", ROLES)
def test_every_role_may_request_a_packet_in_the_browser(browser_as, world, role):
    response = browser_as(role).post(reverse("packets:request", args=[world["case"].pk]))
    created = PacketRequest.objects.exclude(pk=world["request"].pk).get()
    assert response.status_code == 302
    assert response["Location"] == reverse("packets:status", args=[created.pk])
    assert created.requested_by.username == ("ada" if role == "ada" else role)


def test_a_user_without_a_role_cannot_request_a_packet(client, nobody, world):
    client.force_login(nobody)
    response = client.post(reverse("packets:request", args=[world["case"].pk]))
    assert response.status_code == 403
    assert PacketRequest.objects.count() == 1


def test_the_status_page_refreshes_until_the_packet_is_done(browser_as, world, priya):
    from apps.packets.services import packet_request_create

    queued = packet_request_create(actor=priya, case=world["case"])
    page = browser_as("aude").get(reverse("packets:status", args=[queued.pk])).content.decode()
    assert 'http-equiv="refresh"' in page and "<progress" in page
    done = browser_as("aude").get(reverse("packets:status", args=[world["request"].pk]))
    assert 'http-equiv="refresh"' not in done.content.decode()
    assert reverse("packets:download", args=[world["packet"].pk]) in done.content.decode()


# --- API -------------------------------------------------------------------


def _api_calls(w):
    return [
        ("get", f"/api/v1/cases/{w['case'].pk}/packets/", 200),
        ("post", f"/api/v1/cases/{w['case'].pk}/packets/", 202),
        ("get", f"/api/v1/packet-requests/{w['request'].pk}/", 200),
        ("get", f"/api/v1/packets/{w['packet'].pk}/download/", 200),
    ]


@pytest.mark.parametrize("index", range(4))
@pytest.mark.parametrize("role", ROLES)
def test_every_role_may_use_the_packet_api(api_as, world, role, index):
    method, url, expected = _api_calls(world)[index]
    response = getattr(api_as(role), method)(url)
    assert response.status_code == expected


@pytest.mark.parametrize("index", range(4))
def test_the_packet_api_refuses_anonymous_and_roleless_users(world, nobody, index):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    method, url, _ = _api_calls(world)[index]
    assert getattr(APIClient(), method)(url).status_code == 401
    roleless = APIClient()
    roleless.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=nobody).key}")
    assert getattr(roleless, method)(url).status_code == 403


def test_the_auditor_may_request_packets_but_not_change_the_case(api_as, world):
    api = api_as("aude")
    assert api.post(f"/api/v1/cases/{world['case'].pk}/packets/").status_code == 202
    change = {"requirements": "Changed", "change_reason": "Trying"}
    assert api.patch(f"/api/v1/cases/{world['case'].pk}/", change).status_code == 403


def test_the_api_request_answers_202_with_a_status_url_then_the_packet(
    api_as, priya, django_capture_on_commit_callbacks
):
    case = make_packet_case(priya, offers=1)
    api = api_as("aude")
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/v1/cases/{case.pk}/packets/")
    assert response.status_code == 202
    assert response["Location"] == response.data["status_url"]
    status = api.get(response.data["status_url"]).data
    assert status["status"] == "done" and status["progress_pct"] == 100
    listed = api.get(f"/api/v1/cases/{case.pk}/packets/").data
    assert [p["number"] for p in listed] == [status["packet"]["number"]]
    download = api.get(status["packet"]["download_url"], HTTP_ACCEPT="application/pdf")
    assert download.status_code == 200, download.content
    body = b"".join(download.streaming_content)
    import hashlib

    assert download["Content-Type"] == "application/pdf"
    assert hashlib.sha256(body).hexdigest() == status["packet"]["sha256"]


# --- query counts ----------------------------------------------------------


@pytest.mark.parametrize("count", [1, 50])
def test_packet_pages_have_a_fixed_query_count(
    browser_as, people, priya, count, django_assert_max_num_queries, django_assert_num_queries
):
    from apps.packets.panels import case_panel

    case = make_packet_case(priya, offers=1)
    for _ in range(count):
        make_stored_packet(priya, case)
    client = browser_as("aude")
    with django_assert_max_num_queries(12):
        assert client.get(reverse("packets:list", args=[case.pk])).status_code == 200
    # One for the permission checks, two for the packets and the request in progress.
    with django_assert_num_queries(3):
        panel = case_panel(case, actor=people["aude"])
    assert len(panel.context["packets"]) == min(count, 10)
    with django_assert_max_num_queries(8):
        assert client.get(f"/api/v1/cases/{case.pk}/packets/").status_code == 200
