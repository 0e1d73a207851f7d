"""A vendor answers for its own offer, in a real browser, and the harness checks it.

priya (procurement) invites Li Wei of the vendor; Li Wei opens the e-mailed link on
her phone, types the code she is sent, states the declared spec (from the datasheet),
the commercial terms and two clause answers, and uploads her authorisation papers.
lena (legal) accepts one clause answer and questions the other; Li Wei answers the
question and lena accepts it; tariq (tech lead) accepts the spec. The offer's records
and their history then carry both sides, and a harness run is verified against the
spec the vendor stated and tariq accepted.
"""

import json
import re
from urllib.parse import urlsplit

import pytest
from django.core import mail
from playwright.sync_api import expect

from apps.contracts.models import ChecklistItem
from apps.evidence.models import EvidenceBundle
from apps.evidence.services import harness_token_create
from apps.offers.models import DeclaredSpec, Offer
from apps.portal.models import Proposal, ProposalStatus, VendorDocument
from tests.contracts.factories import make_checklist
from tests.evidence.conftest import harness_mock, run_harness
from tests.factories import make_case, make_offer, restore_default_templates

pytestmark = [pytest.mark.whole_case]

PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def mock_endpoint():
    """The harness's own loopback mock of the vendor's endpoint, for this module's run."""
    with harness_mock(max_seconds=3600) as endpoint:
        yield endpoint


def _decide(page, proposal: Proposal, decision: str, note: str = "") -> None:
    """One row of the section's review form decided, the others left as they are."""
    row = page.locator(f"#proposal-{proposal.pk}")
    row.locator(f"select[name=p{proposal.pk}-decision]").select_option(decision)
    if note:
        row.locator(f"textarea[name=p{proposal.pk}-note]").fill(note)
    section = page.locator(f"#section-{proposal.section}")
    section.locator("button", has_text="Record these decisions").first.click()
    expect(page.locator(f"#proposal-{proposal.pk}")).not_to_contain_text("Awaiting review")


def test_a_vendor_states_its_offer_reviewers_settle_it_and_the_harness_checks_it(
    transactional_db,
    people,
    browser,
    page,
    live_server,
    sign_in,
    screenshot,
    mock_endpoint,
    tmp_path,
):
    restore_default_templates()
    base = live_server.url
    priya, lena, tariq = people["priya"], people["lena"], people["tariq"]
    case = make_case(priya, name="Chat assistant on Llama 3.1 70B")
    offer = make_offer(priya, case, accelerator_model="NVIDIA H100 SXM5 80GB", accelerator_count=8)
    make_checklist(lena, offer=offer)

    # priya invites the vendor's contact from the offer.
    sign_in("priya")
    page.goto(f"{base}/offers/{offer.pk}/vendor/")
    page.fill("#id_contact_name", "Li Wei")
    page.fill("#id_email", "li.wei@vendor.example")
    page.click("button:has-text('Send the invitation')")
    expect(page.locator("body")).to_contain_text("li.wei@vendor.example")
    screenshot("portal-invitations")
    link = re.search(r"https?://\S+/portal/\S+/", mail.outbox[-1].body).group(0)
    portal = base + urlsplit(link).path

    # Li Wei opens the link on her phone: the code, then her answers.
    vendor = browser.new_context(viewport=PHONE, locale="en-GB").new_page()
    vendor.set_default_timeout(15_000)
    vendor.goto(portal)
    expect(vendor.locator("body")).not_to_contain_text("H100")  # nothing before the code
    vendor.click("button:has-text('E-mail me a code')")
    code = re.search(r"\b(\d{6})\b", mail.outbox[-1].body).group(1)
    vendor.fill("#code", code)
    vendor.click("button:has-text('Open your answers')")
    expect(vendor.locator("h1")).to_contain_text("Answers for the offer of")

    vendor.click("nav >> text=Declared spec")
    vendor.select_option("#id_card", label="NVIDIA GeForce RTX 4090 24GB")
    vendor.click("button:has-text('Fill from the datasheet')")
    expect(vendor.locator("#id_accelerator_model")).to_have_value("NVIDIA GeForce RTX 4090 24GB")
    vendor.fill("#id_accelerator_count", "1")
    vendor.fill("#id_cards_per_node", "1")
    vendor.click("button:has-text('Send your answers')")
    expect(vendor.locator("body")).to_contain_text("Awaiting review")
    screenshot_vendor = vendor.screenshot  # the phone's view, kept with the others
    screenshot_vendor(path=str(_artifact("portal-vendor-spec-phone")), full_page=True)

    vendor.click("nav >> text=Commercial terms")
    vendor.fill("#id_unit_price", "2.45")
    vendor.select_option("#id_billing_basis", "per_hour")
    vendor.fill("#id_contract_term_months", "12")
    vendor.click("button:has-text('Send your answers')")
    expect(vendor.locator("body")).to_contain_text("Awaiting review")

    vendor.click("nav >> text=Contract clauses")
    vendor.fill("#id_sla", "99.9 % monthly availability; service credits of 10 % per hour down.")
    vendor.fill('[name="sla.reference"]', "MSA clause 7.2")
    vendor.fill("#id_data_deletion", "Data is deleted at the end of the term.")
    vendor.fill('[name="data_deletion.reference"]', "DPA section 4")
    vendor.click("button:has-text('Send your answers')")
    expect(vendor.locator("body")).to_contain_text("Awaiting review")

    vendor.click("nav >> text=Documents")
    vendor.select_option("#id_kind", "authorisation")
    vendor.set_input_files(
        "#id_file",
        files=[
            {
                "name": "authorisation.pdf",
                "mimeType": "application/pdf",
                "buffer": b"%PDF-1.4\n% reseller authorisation\n",
            }
        ],
    )
    vendor.click("button:has-text('Upload')")
    expect(vendor.locator("body")).to_contain_text("authorisation.pdf")

    # lena accepts one clause answer and questions the other.
    sla = Proposal.objects.get(section="clause", claim="sla")
    deletion = Proposal.objects.get(section="clause", claim="data_deletion")
    sign_in("lena")
    page.goto(f"{base}/offers/{offer.pk}/vendor/answers/")
    _decide(page, sla, "accept", "Matches the signed MSA.")
    _decide(page, deletion, "question", "Within how many days, and with a certificate?")
    screenshot("portal-answers-legal")

    # Li Wei sees which was accepted and which questioned, and answers the question.
    vendor.click("nav >> text=Contract clauses")
    expect(vendor.locator("body")).to_contain_text("Accepted")
    expect(vendor.locator("body")).to_contain_text("Within how many days")
    reply = vendor.locator("form.reply")
    reply.locator("textarea[name$=reply]").fill("Within 30 days, with a deletion certificate.")
    reply.locator("input[name$=value]").fill(
        "Data is deleted within 30 days of the end of the term; a certificate follows."
    )
    reply.locator("button:has-text('Send your reply')").click()
    expect(vendor.locator("body")).to_contain_text("Awaiting review")

    page.goto(f"{base}/offers/{offer.pk}/vendor/answers/")
    _decide(page, deletion, "accept", "Thirty days meets our policy.")

    sign_in("tariq")
    page.goto(f"{base}/offers/{offer.pk}/vendor/answers/")
    # tariq accepts the whole declared spec as the vendor stated it, in one submit.
    page.locator("#section-spec").locator("button", has_text="Accept all as proposed").click()
    expect(page.locator("#section-spec")).not_to_contain_text("Awaiting review")
    assert page.url.endswith("#section-spec")  # back where the reader was

    # Both sides are in the records and their history.
    offer = Offer.objects.get(pk=offer.pk)
    assert offer.accelerator_model == "NVIDIA GeForce RTX 4090 24GB"
    assert offer.accelerator_count == 1
    assert DeclaredSpec.objects.get(offer=offer).cards_per_node == 1
    item = ChecklistItem.objects.get(checklist__offer=offer, key="data_deletion")
    assert item.clause_reference == "DPA section 4"
    assert "within 30 days" in item.excerpt
    reason = item.history.latest().history_change_reason
    assert "Submitted by the vendor (Li Wei" in reason and "accepted by" in reason
    assert (
        not Proposal.objects.exclude(section="commercial")
        .exclude(status=ProposalStatus.ACCEPTED)
        .exists()
    )
    assert VendorDocument.objects.get().name == "authorisation.pdf"
    page.goto(f"{base}/offers/{offer.pk}/vendor/claims/")
    expect(page.locator("body")).to_contain_text("Li Wei")
    page.goto(f"{base}/cases/{case.pk}/timeline/")
    expect(page.locator("body")).to_contain_text("Submitted by the vendor (Li Wei")

    # The harness, run on the rented machine (here an RTX 4090's real inventory), is
    # checked against the spec the vendor stated and tariq accepted.
    issued = harness_token_create(actor=tariq, case=case, offer=offer)
    out = tmp_path / "bundle.json"
    result = run_harness(
        mock_endpoint,
        out,
        *("--upload", f"{base}/api/v1/evidence/", "--token", issued.token),
        *("--nonce", issued.record.nonce),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads((tmp_path / "bundle.json.upload.json").read_text())["http_status"] == 201
    checks = {c["key"]: c for c in EvidenceBundle.objects.get().verification.checks}
    assert checks["identity.sku"]["status"] == "pass", checks["identity.sku"]
    assert checks["identity.device_count"]["status"] == "pass", checks["identity.device_count"]
    page.goto(f"{base}/offers/{offer.pk}/vendor/claims/")
    expect(page.locator("body")).to_contain_text("NVIDIA GeForce RTX 4090 24GB")
    screenshot("portal-claims-measured")
    vendor.context.close()


def _artifact(name: str):
    from tests.browser.conftest import ARTIFACTS

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}.png"
