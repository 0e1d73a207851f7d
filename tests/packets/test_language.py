"""A packet is written in the language it is asked for: English or Simplified Chinese."""

import re

import pytest
from django.urls import reverse

from apps.packets.models import PacketRequest
from tests.packets.factories import make_packet_case
from tests.packets.pdftools import pdftotext

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}


@pytest.mark.whole_case
def test_a_packet_asked_for_in_chinese_is_written_in_chinese(
    browser_as, priya, tmp_path, django_capture_on_commit_callbacks
):
    case = make_packet_case(priya, offers=1)
    with django_capture_on_commit_callbacks(execute=True):
        response = browser_as("priya").post(
            reverse("packets:request", args=[case.pk]), {"language": "zh-hans"}
        )
    assert response.status_code == 302
    request = PacketRequest.objects.get()
    assert request.language == "zh-hans"
    assert request.status == PacketRequest.Status.DONE, request.error
    path = tmp_path / "packet.pdf"
    path.write_bytes(request.packet.file.read())
    text = re.sub(r"\s+", " ", pdftotext(path))
    assert "审批：关卡、决定与豁免" in text
    assert "Approval: gates, decisions and waivers" not in text
    status = browser_as("priya").get(reverse("packets:status", args=[request.pk]))
    assert "Simplified Chinese" in status.content.decode()


def test_the_language_defaults_to_the_page_and_each_language_is_its_own_request(browser_as, priya):
    case = make_packet_case(priya, offers=1)
    client = browser_as("priya")
    url = reverse("packets:request", args=[case.pk])
    form = client.get(url, **ZH).content.decode()
    assert 'value="zh-hans" selected' in form
    client.post(url, {}, **ZH)  # the case page's one-click button sends no language
    first = PacketRequest.objects.get()
    assert first.language == "zh-hans"
    client.post(url, {"language": "zh-hans"})  # a double click: the same request
    assert PacketRequest.objects.count() == 1
    client.post(url, {"language": "en"})
    assert sorted(PacketRequest.objects.values_list("language", flat=True)) == ["en", "zh-hans"]


def test_an_unknown_language_is_refused_whole(api_as, browser_as, priya):
    case = make_packet_case(priya, offers=1)
    response = api_as("priya").post(
        f"/api/v1/cases/{case.pk}/packets/", {"language": "fr"}, format="json"
    )
    assert response.status_code == 400 and "language" in response.json()
    page = browser_as("priya").post(reverse("packets:request", args=[case.pk]), {"language": "fr"})
    assert page.status_code == 200 and 'id="error-summary"' in page.content.decode()
    assert not PacketRequest.objects.exists()


def test_the_api_takes_the_language_and_reports_it(api_as, priya):
    case = make_packet_case(priya, offers=1)
    response = api_as("priya").post(
        f"/api/v1/cases/{case.pk}/packets/", {"language": "zh-hans"}, format="json"
    )
    assert response.status_code == 202, response.content
    assert response.json()["language"] == "zh-hans"
