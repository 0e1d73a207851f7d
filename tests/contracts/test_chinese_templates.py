"""Clause templates in English and Chinese: a new version is published with each clause's
Chinese text beside the English; a checklist started from it copies both, and a page in
Chinese shows the Chinese (the English where none was given). Earlier versions, and the
checklists made from them, do not change."""

from django.test import Client
from django.urls import reverse

from apps.contracts.models import ChecklistTemplate
from tests.contracts.factories import make_checklist


def _publish_form(client) -> dict:
    """The publish page's rows as it renders them (the newest version), posted back."""
    page = client.get(reverse("contracts:template-publish"))
    formset = page.context["formset"]
    data = {
        "items-TOTAL_FORMS": str(len(formset.initial)),
        "items-INITIAL_FORMS": str(len(formset.initial)),
        "items-MIN_NUM_FORMS": "0",
        "items-MAX_NUM_FORMS": "1000",
        "note": "Chinese text for the SLA clause",
    }
    for i, row in enumerate(formset.initial):
        for name, value in row.items():
            if isinstance(value, bool):
                if value:
                    data[f"items-{i}-{name}"] = "on"
            else:
                data[f"items-{i}-{name}"] = value
    return data


def test_a_version_with_chinese_text_is_shown_in_chinese(people):
    lena = people["lena"]
    client = Client()
    client.force_login(lena)
    before = ChecklistTemplate.objects.order_by("-number").first()
    old_checklist = make_checklist(lena)

    data = _publish_form(client)
    sla = next(i for i in range(int(data["items-TOTAL_FORMS"])) if data[f"items-{i}-key"] == "sla")
    data[f"items-{sla}-title_zh"] = "服务等级协议"
    data[f"items-{sla}-sub_points_zh"] = "可用性承诺\n服务抵扣"
    response = client.post(reverse("contracts:template-publish"), data)
    assert response.status_code == 302

    latest = ChecklistTemplate.objects.order_by("-number").first()
    assert latest.number == before.number + 1
    item = latest.items.get(key="sla")
    assert item.title_zh == "服务等级协议" and item.sub_points_zh == ["可用性承诺", "服务抵扣"]
    assert before.items.get(key="sla").title_zh is None  # the older version is as it was

    checklist = make_checklist(lena)
    copied = checklist.items.get(key="sla")
    assert copied.title_zh == "服务等级协议"
    assert old_checklist.items.get(key="sla").title_zh is None

    url = reverse("contracts:checklist", args=[checklist.offer_id])
    chinese = client.get(url, headers={"accept-language": "zh-hans"}).content.decode()
    assert "服务等级协议" in chinese and "服务抵扣" in chinese
    english = client.get(url, headers={"accept-language": "en"}).content.decode()
    assert "服务等级协议" not in english and copied.title in english
    # A clause without Chinese text reads in English on the Chinese page.
    other = checklist.items.exclude(key="sla").first()
    assert other.title in chinese


def test_the_api_publishes_and_reads_the_chinese_text(people, api_as):
    api = api_as("lena")
    latest = api.get("/api/v1/checklist-templates/").json()["results"][0]
    items = [
        {k: v for k, v in item.items() if k != "number"} | {"title_zh": "条款" + str(n)}
        for n, item in enumerate(latest["items"])
    ]
    response = api.post(
        "/api/v1/checklist-templates/", {"items": items, "note": "Chinese titles"}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["items"][0]["title_zh"] == "条款0"
