"""Who claimed each declared-spec value, and what the latest verification measured for it."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.offers.models import DeclaredSpec
from apps.offers.services import declared_spec_update
from apps.portal.services import review
from tests.approvals.factories import make_verification
from tests.factories import FULL_SPEC, make_case, make_offer
from tests.portal.factories import make_invitation
from tests.portal.review_factories import make_proposal

pytestmark = pytest.mark.django_db

CHECKS = [
    {"key": "identity.memory", "status": "fail", "measured": 139.8, "title": "Memory"},
    {"key": "identity.device_count", "status": "pass", "measured": 8, "title": "Devices"},
]


@pytest.fixture
def offer(priya, lena, tariq):
    offer = make_offer(priya, make_case(priya), spec=FULL_SPEC)  # entered by priya
    invitation, _secret = make_invitation(priya, offer)
    proposal = make_proposal(invitation, "spec", "memory_per_card_gib", "141")
    review.proposal_decide(actor=tariq, proposal=proposal, decision="accept")
    make_verification(tariq, offer, checks=CHECKS)
    return offer


def _claims(client, offer, **extra):
    return client.get(reverse("portal:claims", args=[offer.pk]), **extra)


@pytest.mark.parametrize("who", ("priya", "lena", "tariq", "aude", "ada"))
def test_every_role_sees_who_claimed_what_and_what_was_measured(browser_as, offer, who):
    page = _claims(browser_as(who), offer)
    assert page.status_code == 200
    text = page.text
    assert "the vendor (Li Wei), accepted by Tariq on" in text
    assert "entered by Priya" in text  # cards per node, from the quote
    assert "139.8" in text and "fail" in text  # memory as measured
    row = text.split("Cards per node")[1].split("</tr>")[0] if "Cards per node" in text else ""
    assert "pass" in row.lower()


def test_anonymous_visitors_sign_in_first(client, offer):
    assert "login" in _claims(client, offer).url


def test_a_later_edit_is_no_longer_the_vendors_claim(browser_as, offer, tariq):
    spec = DeclaredSpec.objects.get(offer=offer)
    declared_spec_update(
        actor=tariq, spec=spec, fields={"memory_per_card_gib": Decimal("140")}, reason="Datasheet"
    )
    text = _claims(browser_as("aude"), offer).text
    assert "the vendor (Li Wei)" not in text
    assert "entered by Tariq" in text


def test_the_declared_spec_page_shows_the_claims(browser_as, offer):
    page = browser_as("tariq").get(reverse("offers:spec", args=[offer.pk]))
    assert page.status_code == 200
    assert "the vendor (Li Wei), accepted by Tariq on" in page.text and "139.8" in page.text


def test_the_page_reads_a_fixed_number_of_queries(browser_as, offer, priya, tariq):
    client = browser_as("aude")
    _claims(client, offer)
    with CaptureQueriesContext(connection) as first:
        _claims(client, offer)
    invitation, _secret = make_invitation(priya, offer, email="other@vendor.example")
    for name, value in (
        ("cards_per_node", "8"),
        ("driver_version", "550.1"),
        ("cuda_version", "12.6"),
    ):
        proposal = make_proposal(invitation, "spec", name, value)
        review.proposal_decide(actor=tariq, proposal=proposal, decision="accept")
    with CaptureQueriesContext(connection) as later:
        _claims(client, offer)
    assert len(later) == len(first)


def test_the_claims_page_in_chinese(browser_as, offer):
    page = _claims(browser_as("aude"), offer, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    assert page.status_code == 200
    assert "谁声明了什么" in page.text and "由 Priya 录入" in page.text


def test_a_decimal_claim_stays_the_vendors_whatever_its_trailing_zeros(browser_as, offer, tariq):
    invitation = offer.vendor_invitations.get()
    proposal = make_proposal(invitation, "spec", "local_nvme_tb", "15.3")  # stored as 15.30
    review.proposal_decide(actor=tariq, proposal=proposal, decision="accept")
    text = _claims(browser_as("aude"), offer).text
    row = text.split("NVMe")[1].split("</tr>")[0]
    assert "15.3<" in row and "the vendor (Li Wei)" in row


def test_the_network_and_runtime_claims_show_what_was_measured(browser_as, priya, tariq):
    offer = make_offer(priya, make_case(priya), spec=FULL_SPEC)
    make_verification(
        tariq,
        offer,
        checks=[
            {
                "key": "network.inter_node",
                "status": "pass",
                "measured": "8 active InfiniBand RDMA port(s), 3,200 Gbit/s in all",
            },
            {"key": "network.inter_node_bandwidth", "status": "fail", "measured": "400"},
            {
                "key": "versions.runtime",
                "status": "not_measured",
                "measured": "vLLM not found where the harness ran",
            },
        ],
    )
    text = _claims(browser_as("aude"), offer).text
    network = text.split("Inter-node network")[1].split("</tr>")[0]
    assert "8 active InfiniBand RDMA port(s), 3,200 Gbit/s in all" in network and "pass" in network
    floor = text.split("Inter-node bandwidth floor")[1].split("</tr>")[0]
    assert "400" in floor and "fail" in floor
    runtime = text.split("Runtime versions")[1].split("</tr>")[0]
    assert "vLLM not found where the harness ran (measured, not judged)" in runtime
