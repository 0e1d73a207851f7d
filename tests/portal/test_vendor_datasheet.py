"""The declared spec's datasheet hints: figures beside the fields and a fill, never a save."""

import pytest

from apps.portal.models import Proposal
from tests.portal.factories import make_invitation, make_offer_with_checklist, open_portal
from tests.portal.vendor import section_url

pytestmark = pytest.mark.django_db


def _portal(client, priya, **offer_fields):
    invitation, secret = make_invitation(priya, make_offer_with_checklist(priya, **offer_fields))
    open_portal(client, invitation)
    return invitation, secret


def test_the_offer_s_card_gives_hints_beside_each_field(client, priya):
    _invitation, secret = _portal(client, priya)  # offers an "NVIDIA H200 SXM 141GB"
    page = client.get(section_url(secret, "spec")).text
    assert "Datasheet: 140.4" in page  # 143771 MiB as the driver reports it
    assert "Datasheet: NVLink / NVSwitch" in page
    assert "Datasheet: 900" in page


def test_a_chosen_card_gives_its_own_hints(client, priya):
    _invitation, secret = _portal(client, priya, accelerator_model="Our own accelerator")
    assert "Datasheet:" not in client.get(section_url(secret, "spec")).text
    page = client.get(section_url(secret, "spec"), {"card": "a100-sxm4-40gb"}).text
    assert "Datasheet: 37.3" in page  # 40 GB marketed, no driver figure: 40e9 / 2^30 GiB


def test_filling_from_the_datasheet_saves_nothing(client, priya):
    invitation, secret = _portal(client, priya, accelerator_model="Our own accelerator")
    page = client.post(
        section_url(secret, "spec"),
        {"fill": "1", "card": "h100-sxm", "cards_per_node": "8", "memory_per_card_gib": "1"},
    )
    assert page.status_code == 200
    assert 'value="NVIDIA H100 SXM5 80GB"' in page.text
    assert 'value="79.6"' in page.text  # 81559 MiB
    assert 'value="900"' in page.text
    assert '<option value="nvlink" selected>' in page.text
    assert 'value="8"' in page.text  # what was typed stays
    assert not Proposal.objects.filter(invitation=invitation).exists()

    pcie = client.post(section_url(secret, "spec"), {"fill": "1", "card": "rtx-4090"})
    assert '<option value="pcie" selected>' in pcie.text
    assert not Proposal.objects.filter(invitation=invitation).exists()


def test_filling_without_a_card_says_to_choose_one(client, priya):
    invitation, secret = _portal(client, priya, accelerator_model="Our own accelerator")
    page = client.post(section_url(secret, "spec"), {"fill": "1", "card": ""})
    assert page.status_code == 400 and "Choose a card model" in page.text
    assert not Proposal.objects.filter(invitation=invitation).exists()
