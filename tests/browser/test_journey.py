"""The reviewers' journey, as people do it, in a real browser."""

import contextlib
import hashlib
import importlib
import json
import re
import shlex
import socket
import subprocess
import sys
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.apps import apps as django_apps
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone
from playwright.sync_api import expect

from apps.access.defaults import DEFAULT_CONTROLS
from apps.assessments.questions import EXIT_READINESS_KEYS, QUESTIONS
from apps.assessments.rules import HARDWARE_HARD_KEYS
from apps.core.services import tracked_create
from apps.evidence.models import EvidenceBundle, SpecVerification, Verdict
from apps.evidence.rules import RULES_VERSION
from apps.evidence.services import harness_token_create
from apps.offers.models import Offer
from tests.approvals.factories import score_in_full, security_checks
from tests.factories import make_case, make_offer, make_vendor
from tests.packets.pdftools import pdftotext

pytestmark = [pytest.mark.whole_case]

VENDORS = [
    ("Aurora Compute", "Singapore", "64", "3.10", "per_hour", "30", "12"),
    ("Borealis Cloud", "Japan", "64", "2150", "per_month", "50", "24"),
    ("Cumulus AI", "Malaysia", "48", "1150000", "reserved", "100", "12"),
]


def test_a_case_from_opening_to_comparison(
    transactional_db, people, page, live_server, sign_in, screenshot
):
    base = live_server.url
    sign_in("priya")
    expect(page.locator("h1")).to_have_text("My work")
    page.goto(f"{base}/cases/")
    page.click("text=New case")
    page.fill("#id_name", "Chat assistant on Llama 3.1 70B")
    page.fill("#id_requirements", "600 concurrent users at 32k context")
    page.click("button:has-text('Save')")
    expect(page.locator("h1")).to_contain_text("Chat assistant on Llama 3.1 70B")
    expect(page.locator("body")).to_contain_text("0 of 3 offers")
    case_url = page.url

    for name, jurisdiction, count, price, basis, prepay, term in VENDORS:
        page.goto(f"{base}/vendors/new/")
        page.fill("#id_name", name)
        page.fill("#id_jurisdiction", jurisdiction)
        page.click("button:has-text('Save')")
        expect(page.locator(".messages")).to_contain_text("Vendor added")
        page.goto(case_url)
        page.click("text=Add offer")
        page.select_option("#id_vendor", label=name)
        page.fill("#id_accelerator_model", "NVIDIA H200 SXM 141GB")
        page.fill("#id_accelerator_count", count)
        page.fill("#id_unit_price", price)
        page.select_option("#id_billing_basis", basis)
        page.fill("#id_prepayment_ratio", prepay)
        page.fill("#id_contract_term_months", term)
        page.click("button:has-text('Save')")
        expect(page.locator(".messages")).to_contain_text("Offer added")

    open_area(page, case_url, "Offers")
    expect(page.locator("body")).to_contain_text("3 offers compared")
    expect(page.locator("body")).to_contain_text("Unconfirmed")

    # A mistake is shown in place and nothing is saved.
    page.goto(case_url)
    page.click("text=Edit case")
    page.fill("#id_slo_peak_memory_pct", "140")
    page.fill("#id_change_reason", "typo")
    page.click("button:has-text('Save')")
    expect(page.locator(".field.has-error")).to_contain_text("100")
    page.goto(case_url)

    for index, score in enumerate(("4", "3", "2")):
        open_area(page, case_url, "Offers")
        page.locator("table a").nth(index).click()
        page.click("text=Score this offer")
        # Wait for the form: ``all()`` takes what is on the page now, not what loads.
        expect(page.locator("h1")).to_contain_text("Your scorecard for")
        expect(page.locator("form.card select").first).to_be_visible()
        for select in page.locator("form.card select").all():
            select.select_option(score)
        page.click("button:has-text('Save scorecard')")
        expect(page.locator(".messages")).to_contain_text("Scorecard saved")
    screenshot("comparison")
    expect(page.locator("body")).to_contain_text("leader")
    open_area(page, case_url, "Offers")
    expect(page.locator("body")).not_to_contain_text("add offers or record a waiver")

    sign_in("tariq")
    page.goto(case_url)
    page.click(".actions >> text=Sizing")
    page.select_option("#id_model_preset", "llama-3.1-70b")
    page.fill("#id_card_memory_gib", "140.4")
    page.select_option("#id_kv_dtype", "fp16")
    page.fill("#id_context_tokens", "32768")
    page.fill("#id_target_concurrency", "600")
    page.fill("#id_tensor_parallel", "8")
    page.click("button:has-text('Calculate')")
    expect(page.locator("#result")).to_contain_text("Cards needed")
    screenshot("sizing")
    page.click("button:has-text('Save as the compute demand')")
    expect(page.locator(".messages")).to_contain_text("compute demand")
    open_area(page, case_url, "Offers")
    shortfall = re.compile(r"This offer gives 6 instances, you need 8")
    expect(page.locator("body")).to_contain_text(shortfall)
    screenshot("case")

    sign_in("aude")
    page.goto(case_url)
    expect(page.get_by_role("link", name="Add offer", exact=True)).to_have_count(0)
    page.goto(f"{case_url}edit/")
    expect(page.locator("h1")).to_have_text("This page is not open to you")


# --- From the contract review to the audit packet -------------------------------------------
#
# The procurement steps are the test above; here the case and its three offers are prepared
# through the same services, and every later person works in the browser.

DECLARED_SPEC = {
    "Memory per card (GiB)": "140.4",
    "Cards per node": "8",
    "Intra-node bandwidth (GB/s per card)": "900",
    "Inter-node bandwidth floor (Gbit/s per node)": "3200",
    "Local NVMe per node (TB)": "30.72",
    "Driver version": "550.127.05",
    "CUDA version": "12.4",
    "Runtime versions": "vLLM 0.6.4",
    "Source document": "Order form AC-2026-118, annex A",
}
# The harness's quick CPU mode against its mock (as tests/evidence runs it), with the
# nvidia-smi capture of a real machine standing in for the rented one.
HARNESS_CPU_FLAGS = [
    *("--ladder", "1,2", "--rounds", "2", "--prompt-sets", "short", "--max-tokens", "16"),
    *("--requests-per-stream", "2", "--min-requests-per-cell", "4", "--warmup-requests", "1"),
    *("--quick", "--bench-rounds", "2", "--sustained-s", "0.2", "--skip", "calibrate"),
    *("--net-count", "3", "--no-alloc-probe", "--min-requests-per-level", "0"),
    *("--disk-bytes", "8MiB", "--disk-block-bytes", "1MiB", "--disk-random-ops", "50"),
    *("--train-steps", "2", "--train-warmup", "1"),
    # The case's SLO starts the rate search too: one step of the 130 requests a P95 needs.
    *("--rate-start", "100", "--rate-max", "100", "--rate-requests", "130"),
]
HARNESS = Path(__file__).resolve().parents[2] / "harness"
NVIDIA_SMI_XML = HARNESS / "tests" / "fixtures" / "nvidia-smi" / "rtx-4090-1x-v12.xml"


# Every question answered; nothing personal or important leaves (first option otherwise).
ANSWERS = {"personal_information": "no", "important_data": "no"}


@pytest.fixture
def case_with_offers(people):
    # The default clause-checklist template ships in a data migration, which an earlier
    # transactional test's flush may have emptied; put it back the way the migration does.
    migration = importlib.import_module("apps.contracts.migrations.0002_default_template")
    migration.publish_default(django_apps, None)
    priya = people["priya"]
    case = make_case(priya, name="Chat assistant on Llama 3.1 70B")
    for name in ("Aurora Compute", "Borealis Cloud", "Cumulus AI"):
        offer = make_offer(
            priya, case, vendor=make_vendor(priya, name=name, jurisdiction="Singapore")
        )
        # Scored in full (the first journey scores in the browser): each counts as compared.
        score_in_full(priya, offer)
    return case


def test_from_contract_review_to_the_audit_packet(
    transactional_db,
    people,
    case_with_offers,
    stored_files,
    page,
    live_server,
    sign_in,
    screenshot,
    downloads,
    tmp_path,
):
    case_url = f"{live_server.url}/cases/{case_with_offers.pk}/"
    legal_review(page, case_url, sign_in, screenshot)
    tech_lead_prepares(page, case_url, sign_in, screenshot)
    harness_uploads_evidence(page, case_url, sign_in, screenshot, downloads, tmp_path)
    approval(page, case_url, sign_in, screenshot, people)
    audit(page, case_url, sign_in, screenshot, downloads)


def open_area(page, case_url: str, tab: str) -> None:
    """The case cockpit, then one of its parts by its tab."""
    page.goto(case_url)
    tabs = page.get_by_role("navigation", name="Parts of this case")
    tabs.get_by_role("link", name=tab, exact=True).click()


def open_offer(page, case_url: str, vendor: str) -> None:
    open_area(page, case_url, "Offers")
    page.locator("table").get_by_role("link", name=vendor).first.click()
    expect(page.locator("h1")).to_contain_text(vendor)


def legal_review(page, case_url, sign_in, screenshot) -> None:
    sign_in("lena")
    open_offer(page, case_url, "Aurora Compute")
    page.click("button:has-text('Start the clause checklist')")
    expect(page.locator(".messages")).to_contain_text("Clause checklist started")
    rows = page.locator("form.card tbody tr")
    expect(rows).to_have_count(11)
    for index in range(11):
        rows.nth(index).get_by_label("Status").select_option("acceptable")
    prepayment = rows.filter(has_text="Prepayment")
    prepayment.get_by_label("Status").select_option("needs_negotiation")
    prepayment.get_by_label("Clause reference").fill("Order form §4")
    prepayment.get_by_label("Excerpt").fill("50 % prepaid for 24 months.")
    page.get_by_label("Reason for this change").fill("First review of the draft contract")
    screenshot("checklist")
    page.click("button:has-text('Save the whole checklist')")
    expect(page.locator(".messages")).to_contain_text("Clause checklist saved")
    expect(page.locator("body")).to_contain_text("blocks approval")

    page.click("text=Waive with a reason")
    expect(page.locator("h1")).to_contain_text("Waive red flag")
    page.click("button:has-text('Record the waiver')")  # a waiver needs its reason
    expect(page.locator(".field.has-error")).to_be_visible()
    page.get_by_label("Why is this red flag accepted?").fill(
        "Finance accepts the prepayment for locked capacity (minute FR-2026-07)."
    )
    screenshot("waiver")
    page.click("button:has-text('Record the waiver')")
    expect(page.locator(".messages")).to_contain_text("Red flag waived")
    expect(page.locator("body")).to_contain_text("waived by Lena")
    expect(page.locator(".badge", has_text="clear")).to_be_visible()

    open_area(page, case_url, "Data export")
    page.click("text=Start the data-export assessment")
    page.get_by_label("Jurisdiction assessed").fill("Singapore")
    for question in QUESTIONS:
        if question.takes_value:
            answer = ANSWERS.get(question.key, question.choices[0][0])
            page.get_by_label(str(question.label), exact=True).select_option(answer)
        if question.takes_number and question.takes_value:
            row = page.locator("tr", has=page.get_by_label(str(question.label), exact=True))
            row.get_by_label("Number of days", exact=True).fill("30")
        elif question.takes_number:
            page.get_by_label(str(question.label), exact=True).fill("0")
        if question.key in EXIT_READINESS_KEYS:  # each exit item "yes" with its evidence
            page.fill(f"#id_{question.key}__note", "Checked in the vendor's exit runbook")
        if question.key in HARDWARE_HARD_KEYS:  # the hardware's documents on file
            page.fill(f"#id_{question.key}__note", "Licence and origin documents on file")
    page.get_by_label("Written legal and compliance conclusion").fill(
        "Only de-identified inference traffic leaves; no personal information is exported."
    )
    screenshot("assessment")
    page.click("button:has-text('Save assessment')")
    expect(page.locator(".messages")).to_contain_text("Data-export assessment saved")
    page.click("text=Sign off")
    expect(page.locator("h1")).to_contain_text("Sign off the data-export assessment")
    expect(page.locator("body")).not_to_contain_text("Not ready to sign off yet")
    page.click("form button:has-text('Sign off')")
    expect(page.locator(".messages")).to_contain_text("Signed off")
    expect(page.locator(".badge.ok")).to_contain_text("Signed off, review by")
    expect(page.locator("dt:has-text('Signed off by') + dd")).to_have_text("Lena")

    # The facts auditors ask for: the data that leaves, the weights deployed, encryption
    # and log retention (each gap would be a finding holding up the approval).
    page.click("summary:has-text('List a dataset')")
    dataset = page.locator("form[action*='dataset']")
    dataset.locator("[name=dataset-name]").fill("Inference request logs (de-identified)")
    dataset.locator("[name=dataset-size_gb]").fill("120")
    dataset.locator("[name=dataset-data_format]").fill("JSON Lines")
    dataset.locator("[name=dataset-sensitivity]").select_option("internal")
    dataset.locator("[name=dataset-sync_window]").fill("nightly, 01:00–03:00 UTC")
    dataset.locator("button:has-text('Add the dataset')").click()
    expect(page.locator("body")).to_contain_text("Inference request logs (de-identified)")
    page.click("summary:has-text('List a model-weight file')")
    weights = page.locator("form[action*='weight']")
    weights.locator("[name=weight-file_name]").fill("model-00001-of-00002.safetensors")
    weights.locator("[name=weight-sha256]").fill("ab" * 32)
    weights.locator("[name=weight-size_bytes]").fill("4998000000")
    weights.locator("button:has-text('Add the file')").click()
    expect(page.locator("body")).to_contain_text("model-00001-of-00002.safetensors")
    page.click("text=Edit encryption and log retention")
    page.locator("[name=encryption_at_rest]").select_option("yes")
    page.locator("[name=encryption_at_rest_mechanism]").fill("AES-256 volume encryption")
    page.locator("[name=encryption_in_transit]").select_option("yes")
    page.locator("[name=encryption_in_transit_mechanism]").fill("TLS 1.3 on every link")
    page.locator("[name=log_retention_days]").fill("365")
    page.locator("[name=change_reason]").fill("From the vendor's security annex")
    page.click("button:has-text('Save')")
    expect(page.locator(".messages")).to_contain_text("Encryption and log retention saved")


def tech_lead_prepares(page, case_url, sign_in, screenshot) -> None:
    sign_in("tariq")
    # The declared spec, transcribed from the vendor's written order form.
    open_offer(page, case_url, "Aurora Compute")
    page.click("text=Edit declared spec")
    for label, value in DECLARED_SPEC.items():
        page.get_by_label(label, exact=True).fill(value)
    page.get_by_label("Intra-node interconnect").select_option("nvlink")
    page.get_by_label("Inter-node network").select_option("infiniband")
    page.get_by_label("Reason for this change").fill("Transcribed from the order form")
    page.click("button:has-text('Save')")
    expect(page.locator(".badge", has_text="Spec confirmed")).to_be_visible()

    # The access matrix: the least-privilege default, plus one role of this case.
    open_area(page, case_url, "Access and network")
    page.click("text=start from the default")
    grid = page.locator("table.matrix-grid")
    new_role = grid.locator("tbody tr").last
    new_role.get_by_label("Role name").fill("Inference operator")
    log_view = new_role.locator("td").nth(4)  # the columns are the default permissions
    expect(grid.locator("thead th").nth(5).locator("input").first).to_have_value("Log view")
    log_view.get_by_label("grant").check()
    log_view.get_by_label("Justification").fill("Watches the serving logs during the pilot.")
    # Every control in place with its evidence, and the periods they run on (the periods
    # first: headless Chromium ignored the save click while a number field kept the focus).
    page.get_by_label("key rotation interval (days)").fill("90")
    page.get_by_label("credential lifetime (hours)").fill("1")
    page.get_by_label("log retention (days)").fill("365")
    for key, _title in DEFAULT_CONTROLS:
        page.locator(f"select[name='control.{key}.status']").select_option("in_place")
        page.locator(f"textarea[name='control.{key}.evidence']").fill(
            f"Checked on the pilot: {key}"
        )
    screenshot("access-matrix-edit")
    page.click("button:has-text('Save matrix')")
    expect(page.locator(".messages")).to_contain_text("Access matrix saved")
    row = page.locator("table.matrix tbody tr", has_text="Inference operator")
    expect(row).to_contain_text("Watches the serving logs during the pilot.")
    page.click("button:has-text('Mark reviewed')")
    expect(page.locator(".messages")).to_contain_text("Access matrix marked reviewed")
    expect(page.locator("dl.kv")).to_contain_text("Tariq")
    screenshot("access-matrix")


def harness_uploads_evidence(page, case_url, sign_in, screenshot, downloads, tmp_path) -> None:
    open_area(page, case_url, "Evidence")
    page.click("text=Harness tokens")
    # The form that issues a token, not the filter of the token list above it.
    issue = page.locator("form", has=page.locator("button:has-text('Issue token')"))
    offer = issue.get_by_label("Offer")
    offer.select_option(label=_offer_label(offer, "Aurora Compute"))
    issue.get_by_label("Label", exact=True).fill("Pilot node acceptance run")
    issue.locator("button:has-text('Issue token')").click()
    expect(page.locator("h2")).to_contain_text(["New token — copy it now"])
    token = page.locator("dt:has-text('Token') + dd code").inner_text()
    nonce = page.locator("dt:has-text('Run nonce') + dd code").inner_text()
    command = shlex.split(page.locator("#run-command").inner_text())
    reference = shlex.split(page.locator("#reference-command").inner_text())
    # The whole command is readable without scrolling the page sideways.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    screenshot("harness-token")
    harness = downloads(lambda: page.click("text=diligence-harness.pyz"))
    page.reload()  # shown once: a second look shows only its prefix
    expect(page.locator("body")).not_to_contain_text(token)
    expect(page.locator("tbody")).to_contain_text(f"{token[:12]}…")

    # The tech lead runs the command the page gave, on the rented machine; here that is
    # this machine, the vendor's endpoint is the harness's own loopback mock, and a real
    # nvidia-smi capture stands in for the GPUs (no person would do this part).
    with mock_server(harness) as endpoint:
        placeholders = {
            "<OPENAI_COMPATIBLE_URL>": endpoint,
            "<YOUR_BASELINE_URL>": endpoint,
            "<MODEL_NAME>": "mock",
        }
        # The reference answers first, recorded on a baseline (the same mock here).
        reference[:2] = [sys.executable, str(harness)]
        reference = [placeholders.get(part, part) for part in reference]
        recorded = subprocess.run(
            reference, cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert recorded.returncode == 0, recorded.stderr[-2000:]
        command[:2] = [sys.executable, str(harness)]
        command = [placeholders.get(part, part) for part in command]
        command[command.index("--out") + 1] = str(tmp_path / "bundle.json")
        command += [*HARNESS_CPU_FLAGS, "--nvidia-smi-xml", str(NVIDIA_SMI_XML)]
        command += ["--soak-duration", "2s", "--soak-interval", "0.5s"]  # not the plan's
        assert ["--token", token] == command[command.index("--token") :][:2]
        assert ["--nonce", nonce] == command[command.index("--nonce") :][:2]
        result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "[diligence-harness] evidence page: " in result.stderr

    open_area(page, case_url, "Evidence")
    evidence = page.locator("section.panel", has_text="evidence bundle")
    expect(evidence.locator("tr", has_text="Aurora Compute")).to_contain_text("Failed")
    evidence.locator("tr", has_text="Aurora Compute").get_by_role("link", name="Failed").click()
    expect(page.locator("h1")).to_contain_text("Evidence bundle")
    expect(page.locator("#check-identity\\.sku")).to_contain_text(
        "RTX 4090 24GB is not the declared NVIDIA H200 SXM 141GB"
    )
    expect(page.locator("dt:has-text('Offer') + dd")).to_contain_text("Aurora Compute")
    screenshot("evidence")


def _offer_label(select, vendor: str) -> str:
    """The label of ``select``'s option for ``vendor``, once the page has drawn it.

    A plain list of the options does not wait for the page: read right after a click, it
    can come back empty.
    """
    return select.locator("option", has_text=vendor).first.inner_text().strip()


@contextlib.contextmanager
def mock_server(harness: Path):
    """``diligence-harness mock-server`` on a free loopback port, for one run."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(harness), "mock-server", "--port", str(port)]
        + ["--ttft-ms", "15", "--itl-ms", "1", "--max-seconds", "300"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert "listening" in process.stdout.readline().decode()
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)


def approval(page, case_url, sign_in, screenshot, people) -> None:
    sign_in("priya")  # she raised the request: she submits, another person decides
    open_area(page, case_url, "Approval")
    page.click("text=Submit for approval")
    page.get_by_label("Note for the tech lead").fill("Three offers compared; Aurora preferred.")
    page.click("button:has-text('Submit for approval')")
    expect(page.locator(".messages")).to_contain_text("Submitted for approval")
    expect(page.get_by_role("link", name="Decide")).to_have_count(0)
    page.goto(f"{case_url}approval/decide/")
    expect(page.locator("h1")).to_have_text("This page is not open to you")

    sign_in("tariq")
    open_area(page, case_url, "Approval")
    page.click("text=Decide")
    aurora = offer_card(page, "Aurora Compute")
    expect(aurora).to_contain_text("cannot be approved")
    expect(aurora).to_contain_text("The latest verification did not pass (Failed)")
    expect(aurora).to_contain_text("1 red flag(s) waived")
    # Only the rented machine's gates are open: the choice says it may be approved only
    # subject to acceptance, and a plain approval is refused with the gate's reason.
    choice = page.get_by_label("Offer").locator("option", has_text="Aurora Compute")
    expect(choice).to_be_enabled()
    expect(choice).to_contain_text("only subject to acceptance: Passing spec verification")
    decide(page, "Aurora Compute", "Approve before the run?")
    expect(page.locator("form.card")).to_contain_text("Gate not held")
    assert Offer.objects.get(pk=choice.get_attribute("value")).case.status == "pending_approval"

    # No GPU here: the passing run on the vendor's H200 nodes is recorded directly, as the
    # upload service records one (a person uploads it with the harness on the rented machine).
    offer = Offer.objects.get(case__pk=_case_pk(case_url), vendor__name="Aurora Compute")
    record_passing_gpu_run(people["tariq"], offer)
    page.goto(f"{case_url}approval/decide/")
    expect(offer_card(page, "Aurora Compute")).to_contain_text("every gate held: may be approved")
    screenshot("approval-decide")
    decide(page, "Aurora Compute", "Every gate holds; approved for the pilot.")
    expect(page.locator(".messages")).to_contain_text("Decision recorded")
    expect(page.locator("h1")).to_contain_text("Approved")
    in_force = page.locator("section", has=page.get_by_role("heading", name="Decision in force"))
    for shown in ("Approved", "Aurora Compute", "Tariq", "approved for the pilot"):
        expect(in_force).to_contain_text(shown)
    screenshot("approval")


def offer_card(page, vendor: str):
    """The decision form's card of one offer (other cards may name it among their reasons)."""
    return page.locator("details").filter(has=page.locator("summary", has_text=vendor))


def record_passing_gpu_run(actor, offer) -> None:
    raw = json.dumps({"stand_in": "passing GPU run of the browser journey"}).encode()
    sha = hashlib.sha256(raw).hexdigest()
    now = timezone.now()
    token = harness_token_create(actor=actor, case=offer.case, offer=offer).record
    bundle = tracked_create(
        EvidenceBundle,
        actor=None,
        reason="Evidence received",
        case=offer.case,
        offer=offer,
        token=token,
        sha256=sha,
        size=len(raw),
        storage_name=default_storage.save(f"evidence/{sha[:2]}/{sha}.json", ContentFile(raw)),
        format_version="diligence-evidence/1",
        received_at=now,
        run_started_at=now - timedelta(minutes=20),
        run_finished_at=now,
        nonce=token.nonce,
    )
    tracked_create(
        SpecVerification,
        actor=None,
        reason="Verified on upload",
        bundle=bundle,
        offer=offer,
        verdict=Verdict.VERIFIED,
        checks=security_checks(),  # its endpoint refuses what it must
        headline={},
        rules_version=RULES_VERSION,
    )


def decide(page, vendor: str, comment: str) -> None:
    offer = page.get_by_label("Offer")
    offer.select_option(label=_offer_label(offer, vendor))
    page.get_by_label("Approved").check()
    page.get_by_label("Comment").fill(comment)
    page.click("button:has-text('Record the decision')")


def _case_pk(case_url: str) -> int:
    return int(case_url.rstrip("/").rsplit("/", 1)[1])


def audit(page, case_url, sign_in, screenshot, downloads) -> None:
    sign_in("aude")
    open_area(page, case_url, "Packets")
    # Eager Celery: the packet is rendered and signed before the status page answers.
    page.click("button:has-text('Generate packet')", timeout=120_000)
    expect(page.locator("section.card")).to_contain_text("Issued and signed.")
    number = page.locator("h1").inner_text().removeprefix("Packet ").strip()
    screenshot("packet")
    pdf = downloads(lambda: page.click("text=Download the PDF"))
    text = " ".join(pdftotext(pdf).split())  # what the people did is in the packet
    recorded_by_people = (
        "Prepayment ratio and premium red flag, waived",
        "Watches the serving logs during the pilot.",
        "Decision Approved Offer Aurora Compute Signer Tariq",
    )
    for recorded in recorded_by_people:
        assert recorded in text, recorded

    open_area(page, case_url, "Packets")
    page.click("text=Verify a packet")
    page.get_by_label("Packet (PDF)").set_input_files(pdf)
    page.click("button:has-text('Verify')")
    expect(page.locator("h2.ok")).to_contain_text(f"Valid: this is packet {number}, unchanged.")
    expect(page.locator("dl.kv")).to_contain_text("Chat assistant on Llama 3.1 70B")
    screenshot("packet-verify")

    open_area(page, case_url, "Audit trail")
    export = downloads(lambda: page.click("text=Export for auditors (ZIP)"), timeout=90_000)
    with zipfile.ZipFile(export) as archive:
        names = archive.namelist()
        manifest = json.loads(archive.read("manifest.json"))
    listed = {entry["path"] for entry in manifest["files"]}
    assert listed and listed <= set(names)
    assert manifest["case"]["name"] == "Chat assistant on Llama 3.1 70B"
    page.click("text=Check an export")
    page.get_by_label("Case export (ZIP)").set_input_files(export)
    page.click("button:has-text('Check')")
    expect(page.locator("h2.ok")).to_contain_text("Valid: the export is complete and unaltered.")
    expect(page.locator("dl.kv")).to_contain_text("Chat assistant on Llama 3.1 70B")
    screenshot("export-check")
