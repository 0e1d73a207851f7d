"""The claims page also shows what only the acceptance plan asks for: the reference
training step, measured against the plan's thresholds."""

import pytest
from django.urls import reverse

from apps.evidence.selectors import latest_verification

pytestmark = pytest.mark.django_db


def _leading_offer(case):
    """The demo's offer whose verification carries the reference training step."""
    for offer in case.offers.order_by("pk"):
        verification = latest_verification(offer)
        keys = {c.get("key") for c in (verification.checks if verification else []) or []}
        if "training.throughput" in keys:
            return offer
    raise AssertionError("no demo offer ran the reference training step")


@pytest.mark.parametrize("who", ("priya", "lena", "tariq", "aude", "ada"))
def test_the_training_step_is_shown_beside_the_plans_thresholds(demo_case, browser_as, who):
    offer = _leading_offer(demo_case)
    page = browser_as(who).get(reverse("portal:claims", args=[offer.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    section = text.split('id="plan-measured"', 1)[1]
    assert "samples/s per card over every card" in section  # the plan's threshold
    assert "Reference training step" in section and "Checkpoint save and restore" in section
    assert section.count('class="badge ok"') >= 2


def test_in_chinese(demo_case, browser_as):
    offer = _leading_offer(demo_case)
    page = browser_as("tariq").get(
        reverse("portal:claims", args=[offer.pk]), HTTP_ACCEPT_LANGUAGE="zh-CN"
    )
    section = page.content.decode().split('id="plan-measured"', 1)[1]
    assert "参考训练步骤" in section and "检查点保存与恢复" in section


def test_an_offer_without_plan_or_run_shows_no_such_section(demo_case, browser_as):
    offer = _leading_offer(demo_case)
    others = demo_case.offers.exclude(pk=offer.pk).order_by("pk")
    bare = next((o for o in others if getattr(o, "acceptance_plan", None) is None), None)
    if bare is None:
        pytest.skip("every demo offer has a plan")
    page = browser_as("tariq").get(reverse("portal:claims", args=[bare.pk]))
    assert page.status_code == 200
    assert 'id="plan-measured"' not in page.content.decode()


def test_a_visitor_not_signed_in_is_sent_to_sign_in(client, demo_case):
    offer = _leading_offer(demo_case)
    response = client.get(reverse("portal:claims", args=[offer.pk]))
    assert response.status_code == 302 and "login" in response["Location"]
