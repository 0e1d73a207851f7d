"""The demo's questionnaire: published, sent with an invitation to a demo offer, answered
and scored on that offer's vendor answers page."""

import pytest
from django.urls import reverse

from apps.portal.demo import TITLE
from apps.portal.models import Questionnaire, SentQuestionnaire

pytestmark = pytest.mark.django_db


def test_the_demo_sends_a_published_questionnaire_and_shows_its_score(seeded_demo, browser_as):
    questionnaire = Questionnaire.objects.get(title=TITLE)
    version = questionnaire.versions.get()
    assert version.is_published
    sent = SentQuestionnaire.objects.get(questionnaire_version=version)
    assert sent.submitted_at is not None
    page = browser_as("lena").get(reverse("portal:answers", args=[sent.invitation.offer_id]))
    text = page.content.decode()
    # 3 (encrypted) + 2 × 75 % (Tier III) of 7; the wipe within 168 h misses 72 h at most.
    assert "64.3 %" in text
    assert "Within how many hours of the end of the contract are the disks wiped?" in text
    listed = browser_as("aude").get(reverse("portal:questionnaires")).content.decode()
    assert TITLE in listed
