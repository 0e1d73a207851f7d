"""The facts auditors ask of a data export, recorded, shown, and each gap a finding.

The data inventory, the model-weight files with their SHA-256, encryption at rest and
in transit, and log retention against the organisation's minimum are recorded on the
data-export assessment through its API and its page, shown there and in its packet
chapter, and each gap is a finding of the case's register: an approvable offer stops
being approvable on it, and is approvable again once the fact is recorded (or the
finding accepted by its owner). Recording them keeps the legal sign-off.
"""

import copy
import html
from datetime import timedelta
from decimal import Decimal

import pytest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from apps.approvals.services import case_submit_for_approval
from apps.assessments import packet as assessments_packet
from apps.assessments.audit_facts import (
    encryption_gaps,
    fact_changes,
    log_retention_gaps,
    sha256_error,
)
from apps.assessments.models import DataExportAssessment, ExportedDataset, ModelWeightFile
from apps.assessments.services import dataset_remove
from apps.core.services import StateConflict
from tests.approvals.factories import make_ready_case
from tests.assessments.factories import DATASET, WEIGHT_FILE

ASSESSMENTS = "/api/v1/data-export-assessments/"
DATASETS = "/api/v1/data-export-datasets/"
WEIGHTS = "/api/v1/data-export-weight-files/"
SHA = "a" * 64
ROLES = ("priya", "lena", "tariq", "fiona", "aude", "ada")
LISTS_EDITORS = {"lena", "tariq", "ada"}
FACTS_EDITORS = {"lena", "ada"}


@pytest.fixture(scope="module")
def _ready(module_people):
    case, offer, _offers = make_ready_case(module_people)
    return case, offer


@pytest.fixture
def ready(_ready, people):
    """The ready case (its assessment signed, its audit facts recorded with no gap), built
    once for the module; each test's changes to it are undone."""
    return copy.deepcopy(_ready)


def _assessment(case) -> DataExportAssessment:
    return DataExportAssessment.objects.get(case=case, offer=None)


def _findings(api, case, offer) -> dict:
    """The register's findings of the assessment's audit facts on the offer, by code."""
    response = api.get(f"/api/v1/cases/{case.pk}/findings/")
    assert response.status_code == 200
    return {
        f["code"]: f
        for f in response.json()
        if f["code"].startswith("assessments.") and f["offer"] == offer.pk
    }


def _gate(api, case, offer) -> dict:
    data = api.get(f"/api/v1/cases/{case.pk}/gates/").json()
    entry = next(o for o in data["offers"] if o["offer"] == offer.pk)
    return {g["key"]: g for g in entry["gates"]}["assessment"]


def _approve(api, case, offer):
    body = {"offer": offer.pk, "decision": "approved", "comment": "Go"}
    return api.post(f"/api/v1/cases/{case.pk}/decision/", body, format="json")


def _refused(tech, people, case, offer, message: str) -> None:
    """Submitted for approval, the tech lead's approval is refused and names the finding."""
    case_submit_for_approval(actor=people["priya"], case=case)
    refused = _approve(tech, case, offer)
    assert refused.status_code == 400 and message in str(refused.json()["offer"])


def _facts(api, pk: int, **fields):
    version = api.get(f"{ASSESSMENTS}{pk}/").json()["version"]
    return api.patch(
        f"{ASSESSMENTS}{pk}/audit-facts/",
        {**fields, "version": version, "change_reason": "Read the security annex"},
        format="json",
    )


def _accept(api, case, offer, finding: dict, role: str):
    body = {
        "code": finding["code"],
        "offer": offer.pk,
        "key": finding["key"],
        "role": role,
        "reason": "The vendor's annex is being renegotiated",
        "expires_on": (timezone.localdate() + timedelta(days=30)).isoformat(),
    }
    return api.post(f"/api/v1/cases/{case.pk}/findings/accept/", body, format="json")


# --- the ready case: every fact recorded, no finding ----------------------------------


def test_the_ready_case_shows_its_audit_facts_everywhere_with_no_finding(api_as, browser_as, ready):
    case, offer = ready
    assessment = _assessment(case)
    body = api_as("aude").get(f"{ASSESSMENTS}{assessment.pk}/").json()
    assert [d["name"] for d in body["datasets"]] == [DATASET["name"]]
    assert body["datasets"][0]["sensitivity"] == "internal"
    assert Decimal(body["datasets"][0]["size_gb"]) == Decimal("12.50")
    assert [w["sha256"] for w in body["weight_files"]] == [WEIGHT_FILE["sha256"]]
    facts = body["audit_facts"]
    assert facts["encryption_in_transit"] == "yes" and facts["log_retention_days"] == 365
    assert facts["log_retention_min_days"] == 180 and facts["gaps"] == []
    assert body["state"]["signed_off"] is True
    assert _findings(api_as("tariq"), case, offer) == {}
    assert _gate(api_as("tariq"), case, offer)["held"] is True
    # The page and the packet chapter name them.
    page = browser_as("aude").get(reverse("assessments:detail", args=[assessment.pk]))
    text = html.unescape(page.content.decode())
    name, sha256 = str(DATASET["name"]), str(WEIGHT_FILE["sha256"])
    for shown in (
        name,
        "Internal",
        "12.5 GB",
        sha256,
        "4,920,000,000 bytes",
        "TLS 1.3 on every link",
        "365 days",
        "the organisation's minimum is 180 days",
        "No gap: every fact auditors ask for is recorded.",
    ):
        assert shown in text, shown
    section = assessments_packet.packet_section(case)
    packet = render_to_string(section.template, {**section.context, "section": section})
    for shown in (escape(name), sha256, "365 days", "No gap"):
        assert shown in packet, shown


# --- through the API: approvable → finding → approvable --------------------------------


def test_no_dataset_awaits_legal_and_listing_one_makes_it_approvable(api_as, people, ready):
    case, offer = ready
    legal, tech = api_as("lena"), api_as("tariq")
    assessment = _assessment(case)
    dataset = assessment.datasets.get()
    removed = legal.post(
        f"{DATASETS}{dataset.pk}/remove/",
        {"change_reason": "Not sent after all", "version": dataset.version},
        format="json",
    )
    assert removed.status_code == 204, removed.content
    found = _findings(tech, case, offer)
    assert set(found) == {"assessments.data_inventory_missing"}
    finding = found["assessments.data_inventory_missing"]
    assert (finding["severity"], finding["awaiting"]) == ("needs_acceptance", ["legal_reviewer"])
    assert finding["gate"] == "assessment" and "Measures for the Security" in finding["source"]
    assert finding["fix_url"].endswith(f"/data-export/{assessment.pk}/#audit-facts")
    assert _gate(tech, case, offer)["held"] is False
    _refused(tech, people, case, offer, finding["message"])
    # Listed again, through the API: approvable, with the sign-off it had.
    added = legal.post(DATASETS, {**DATASET, "assessment": assessment.pk}, format="json")
    assert added.status_code == 201, added.content
    assert _findings(tech, case, offer) == {}
    assert legal.get(f"{ASSESSMENTS}{assessment.pk}/").json()["state"]["signed_off"] is True
    approved = _approve(tech, case, offer)
    assert approved.status_code == 201, approved.content
    # Each write is in the history, with who and why.
    reasons = list(
        ExportedDataset.history.filter(assessment_id=assessment.pk)
        .order_by("history_id")
        .values_list("history_type", "history_change_reason", "history_user__username")
    )
    assert reasons[-2:] == [
        ("-", "Not sent after all", "lena"),
        ("+", "Dataset listed", "lena"),
    ]


def test_a_personal_dataset_the_answers_deny_blocks_until_corrected(api_as, people, ready):
    case, offer = ready
    legal, tech = api_as("lena"), api_as("tariq")
    dataset = _assessment(case).datasets.get()
    url = f"{DATASETS}{dataset.pk}/"
    marked = legal.patch(
        url,
        {"sensitivity": "personal", "version": dataset.version, "change_reason": "Has names"},
        format="json",
    )
    assert marked.status_code == 200, marked.content
    found = _findings(tech, case, offer)
    assert set(found) == {"assessments.inventory_contradicts_answers"}
    finding = found["assessments.inventory_contradicts_answers"]
    assert finding["severity"] == "blocks" and finding["blocking"] is True
    assert "marked Personal information" in finding["message"]
    assert "contain personal information?” with 'No'" in finding["message"]
    # Nobody can accept it.
    refused = _accept(legal, case, offer, finding, "legal_reviewer")
    assert refused.status_code == 400
    _refused(tech, people, case, offer, finding["message"])
    back = legal.patch(
        url,
        {"sensitivity": "internal", "version": marked.json()["version"], "change_reason": "Fixed"},
        format="json",
    )
    assert back.status_code == 200
    assert _findings(tech, case, offer) == {}
    assert _approve(tech, case, offer).status_code == 201


def test_weight_hashes_are_checked_and_their_absence_awaits_the_tech_lead(api_as, ready):
    case, offer = ready
    legal, tech = api_as("lena"), api_as("tariq")
    assessment = _assessment(case)
    before = ModelWeightFile.history.count()
    for bad in ("abc", "g" * 64, "a" * 63, "a" * 65):
        refused = tech.post(
            WEIGHTS,
            {"assessment": assessment.pk, "file_name": "x.bin", "sha256": bad, "size_bytes": 1},
            format="json",
        )
        assert refused.status_code == 400, bad
        assert "64 hexadecimal characters" in str(refused.json()["sha256"])
    assert ModelWeightFile.history.count() == before  # nothing half-written
    weight_file = assessment.weight_files.get()
    removed = tech.post(
        f"{WEIGHTS}{weight_file.pk}/remove/",
        {"change_reason": "Wrong file", "version": weight_file.version},
        format="json",
    )
    assert removed.status_code == 204
    finding = _findings(tech, case, offer)["assessments.weight_hashes_missing"]
    assert finding["awaiting"] == ["tech_lead"] and "Annex A 5.9" in finding["source"]
    # Only its owner accepts it: legal may not, the tech lead may.
    assert _accept(legal, case, offer, finding, "tech_lead").status_code in (400, 403)
    accepted = _accept(tech, case, offer, finding, "tech_lead")
    assert accepted.status_code == 201, accepted.content
    assert _findings(tech, case, offer)["assessments.weight_hashes_missing"]["status"] == "accepted"
    # Listed again, upper-case hex taken and stored in lower case: the finding is gone.
    added = tech.post(
        WEIGHTS,
        {"assessment": assessment.pk, "file_name": "w.safetensors", "sha256": SHA.upper(),
         "size_bytes": 10},
        format="json",
    )  # fmt: skip
    assert added.status_code == 201 and added.json()["sha256"] == SHA
    assert _findings(tech, case, offer) == {}


def test_encryption_in_transit_no_blocks_and_not_stated_awaits_legal(api_as, ready):
    case, offer = ready
    legal, tech = api_as("lena"), api_as("tariq")
    pk = _assessment(case).pk
    response = _facts(legal, pk, encryption_in_transit="no")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["audit_facts"]["encryption_in_transit_mechanism"] is None  # kept only with yes
    assert [g["code"] for g in body["audit_facts"]["gaps"]] == ["assessments.encryption_in_transit"]
    assert body["state"]["signed_off"] is True  # the facts keep the sign-off
    finding = _findings(tech, case, offer)["assessments.encryption_in_transit"]
    assert finding["severity"] == "blocks" and "Art. 51" in finding["source"]
    assert _gate(tech, case, offer)["held"] is False
    # At rest "no" and in transit "not stated": two findings awaiting legal.
    response = _facts(legal, pk, encryption_in_transit="not_stated", encryption_at_rest="no")
    found = _findings(tech, case, offer)
    assert set(found) == {"assessments.encryption_at_rest", "assessments.encryption_not_stated"}
    assert all(f["awaiting"] == ["legal_reviewer"] for f in found.values())
    assert found["assessments.encryption_not_stated"]["key"] == "encryption_in_transit"
    back = _facts(
        legal,
        pk,
        encryption_in_transit="yes",
        encryption_in_transit_mechanism="TLS 1.3",
        encryption_at_rest="yes",
        encryption_at_rest_mechanism="AES-256, keys in our KMS",
    )
    assert back.status_code == 200
    assert _findings(tech, case, offer) == {} and _gate(tech, case, offer)["held"] is True


def test_bad_audit_facts_are_refused_whole(api_as, ready):
    case, _offer = ready
    legal = api_as("lena")
    assessment = _assessment(case)
    version = assessment.version
    url = f"{ASSESSMENTS}{assessment.pk}/audit-facts/"
    # "Yes" without saying how: 400, naming the field, and nothing written.
    refused = legal.patch(
        url,
        {"encryption_at_rest": "yes", "encryption_at_rest_mechanism": " ", "log_retention_days": 1,
         "version": version, "change_reason": "x"},
        format="json",
    )  # fmt: skip
    assert refused.status_code == 400
    assert "Say how it is encrypted" in str(refused.json()["encryption_at_rest_mechanism"])
    for body in (
        {"encryption_at_rest": "maybe"},
        {"log_retention_days": -1},
        {"encryption_in_transit_mechanism": "x" * 301},
    ):
        assert (
            legal.patch(
                url, {**body, "version": version, "change_reason": "x"}, format="json"
            ).status_code
            == 400
        )
    stored = DataExportAssessment.objects.get(pk=assessment.pk)
    assert (stored.version, stored.log_retention_days) == (version, 365)
    # Without the version edited: 428; with an older one: 409.
    missing = legal.patch(url, {"log_retention_days": 400, "change_reason": "x"}, format="json")
    assert missing.status_code == 428
    stale = legal.patch(
        url,
        {"log_retention_days": 400, "version": version - 1, "change_reason": "x"},
        format="json",
    )
    assert stale.status_code == 409
    # Without a reason: 400.
    no_reason = legal.patch(url, {"log_retention_days": 400, "version": version}, format="json")
    assert no_reason.status_code == 400


def test_short_log_retention_awaits_legal_and_its_acceptance_holds_for_its_days(
    api_as, people, ready, settings
):
    case, offer = ready
    legal, tech = api_as("lena"), api_as("tariq")
    pk = _assessment(case).pk
    assert _facts(legal, pk, log_retention_days=90).status_code == 200
    finding = _findings(tech, case, offer)["assessments.log_retention_short"]
    assert "90 days, fewer than the organisation's minimum of 180 days" in finding["message"]
    assert "Annex A 8.15" in finding["source"]
    assert _accept(legal, case, offer, finding, "legal_reviewer").status_code == 201
    case_submit_for_approval(actor=people["priya"], case=case)
    assert _findings(tech, case, offer)["assessments.log_retention_short"]["status"] == "accepted"
    # Other days are other facts: the acceptance no longer counts.
    assert _facts(legal, pk, log_retention_days=120).status_code == 200
    assert _findings(tech, case, offer)["assessments.log_retention_short"]["status"] == "open"
    assert _approve(tech, case, offer).status_code == 400
    # Not stated at all is the same finding; the minimum is the organisation's setting.
    assert _facts(legal, pk, log_retention_days=None).status_code == 200
    assert (
        "is not stated"
        in _findings(tech, case, offer)["assessments.log_retention_short"]["message"]
    )
    assert _facts(legal, pk, log_retention_days=180).status_code == 200
    assert _findings(tech, case, offer) == {}
    settings.LOG_RETENTION_MIN_DAYS = 365
    assert (
        "minimum of 365 days"
        in _findings(tech, case, offer)["assessments.log_retention_short"]["message"]
    )
    settings.LOG_RETENTION_MIN_DAYS = 180
    assert _approve(tech, case, offer).status_code == 201


# --- through the page -------------------------------------------------------------------


def test_the_page_lists_edits_and_removes_a_dataset(browser_as, api_as, ready):
    case, offer = ready
    client, tech = browser_as("lena"), api_as("tariq")
    assessment = _assessment(case)
    detail = reverse("assessments:detail", args=[assessment.pk])
    add = reverse("assessments:dataset_add", args=[assessment.pk])
    form = {
        "dataset-name": "Call transcripts",
        "dataset-size_gb": "3.5",
        "dataset-data_format": "JSON Lines",
        "dataset-sensitivity": "personal",
        "dataset-sync_window": "Hourly",
    }
    # A name listed already, or a bad size: refused on the page, nothing written.
    count = ExportedDataset.objects.count()
    refused = client.post(add, {**form, "dataset-name": DATASET["name"]})
    assert refused.status_code == 400 and "is listed on this assessment already" in (
        refused.content.decode()
    )
    assert client.post(add, {**form, "dataset-size_gb": "-1"}).status_code == 400
    assert ExportedDataset.objects.count() == count
    saved = client.post(add, form)
    assert saved.status_code == 302 and saved["Location"] == detail + "#audit-facts"
    dataset = ExportedDataset.objects.get(name="Call transcripts")
    # Marked personal while the answers say the data holds none: the page and the register.
    page = client.get(detail).content.decode()
    assert "Call transcripts" in page and "Personal information" in page
    assert "is marked Personal information" in page
    assert set(_findings(tech, case, offer)) == {"assessments.inventory_contradicts_answers"}
    edit = reverse("assessments:dataset_edit", args=[dataset.pk])
    assert client.get(edit).status_code == 200
    changed = {
        "name": "Call transcripts",
        "size_gb": "3.5",
        "data_format": "JSON Lines",
        "sensitivity": "internal",
        "sync_window": "Hourly",
        "version": dataset.version,
    }
    assert client.post(edit, changed).status_code == 400  # no reason given
    assert client.post(edit, {**changed, "change_reason": "De-identified"}).status_code == 302
    assert _findings(tech, case, offer) == {}
    # An edit on a version someone else changed meanwhile is refused on the form.
    stale = client.post(edit, {**changed, "sync_window": "Daily", "change_reason": "x"})
    assert stale.status_code == 400
    remove = reverse("assessments:dataset_remove", args=[dataset.pk])
    assert client.post(remove, {"version": dataset.version + 1}).status_code == 400  # no reason
    gone = client.post(remove, {"version": dataset.version + 1, "change_reason": "Not sent"})
    assert gone.status_code == 302
    assert not ExportedDataset.objects.filter(pk=dataset.pk).exists()
    history = client.get(reverse("assessments:history", args=[assessment.pk])).content.decode()
    assert "Call transcripts" in history and "Not sent" in history


def test_the_page_records_weights_encryption_and_log_retention(browser_as, api_as, ready):
    case, offer = ready
    client, tech = browser_as("lena"), api_as("tariq")
    assessment = _assessment(case)
    add = reverse("assessments:weight_add", args=[assessment.pk])
    bad = client.post(
        add, {"weight-file_name": "a.bin", "weight-sha256": "xyz", "weight-size_bytes": "1"}
    )
    assert bad.status_code == 400 and "64 hexadecimal characters" in bad.content.decode()
    good = client.post(
        add, {"weight-file_name": "a.bin", "weight-sha256": SHA.upper(), "weight-size_bytes": "1"}
    )
    assert good.status_code == 302
    assert ModelWeightFile.objects.get(file_name="a.bin").sha256 == SHA
    url = reverse("assessments:audit_facts", args=[assessment.pk])
    page = html.unescape(client.get(url).content.decode())
    assert "The organisation's minimum is 180 days." in page
    facts = {
        "encryption_at_rest": "yes",
        "encryption_at_rest_mechanism": "AES-256",
        "encryption_in_transit": "no",
        "encryption_in_transit_mechanism": "",
        "log_retention_days": "30",
        "version": DataExportAssessment.objects.get(pk=assessment.pk).version,
    }
    assert client.post(url, facts).status_code == 400  # no reason
    missing_how = client.post(
        url, {**facts, "encryption_at_rest_mechanism": "", "change_reason": "Annex"}
    )
    assert missing_how.status_code == 400 and "Say how it is encrypted" in (
        missing_how.content.decode()
    )
    assert client.post(url, {**facts, "change_reason": "Annex"}).status_code == 302
    assert set(_findings(tech, case, offer)) == {
        "assessments.encryption_in_transit",
        "assessments.log_retention_short",
    }
    detail = client.get(reverse("assessments:detail", args=[assessment.pk])).content.decode()
    assert "The data is not encrypted in transit" in detail and "30 days" in detail
    assert DataExportAssessment.objects.get(pk=assessment.pk).signed_off_at is not None


# --- who may ---------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_each_role_reads_and_only_its_owners_write(api_as, browser_as, ready, role):
    case, _offer = ready
    assessment = _assessment(case)
    dataset, weight_file = assessment.datasets.get(), assessment.weight_files.get()
    api = api_as(role)
    for url in (DATASETS, f"{DATASETS}{dataset.pk}/", WEIGHTS, f"{WEIGHTS}{weight_file.pk}/"):
        assert api.get(url).status_code == 200, url
    added = api.post(
        DATASETS, {**DATASET, "name": f"By {role}", "assessment": assessment.pk}, format="json"
    )
    assert added.status_code == (201 if role in LISTS_EDITORS else 403)
    added = api.post(
        WEIGHTS, {**WEIGHT_FILE, "file_name": role, "assessment": assessment.pk}, format="json"
    )
    assert added.status_code == (201 if role in LISTS_EDITORS else 403)
    edited = api.patch(
        f"{DATASETS}{dataset.pk}/",
        {"sync_window": "Weekly", "version": dataset.version, "change_reason": "x"},
        format="json",
    )
    assert edited.status_code == (200 if role in LISTS_EDITORS else 403)
    facts = _facts(api, assessment.pk, log_retention_days=200)
    assert facts.status_code == (200 if role in FACTS_EDITORS else 403)
    removed = api.post(
        f"{WEIGHTS}{weight_file.pk}/remove/",
        {"change_reason": "x", "version": weight_file.version},
        format="json",
    )
    assert removed.status_code == (204 if role in LISTS_EDITORS else 403)
    # The pages: the small forms, the edit pages and the facts' page.
    client = browser_as(role)
    page = client.get(reverse("assessments:detail", args=[assessment.pk])).content.decode()
    assert ("List a dataset" in page) is (role in LISTS_EDITORS)
    edit = client.get(reverse("assessments:dataset_edit", args=[dataset.pk]))
    assert edit.status_code == (200 if role in LISTS_EDITORS else 403)
    facts_page = client.get(reverse("assessments:audit_facts", args=[assessment.pk]))
    assert facts_page.status_code == (200 if role in FACTS_EDITORS else 403)
    posted = client.post(
        reverse("assessments:dataset_add", args=[assessment.pk]),
        {f"dataset-{k}": v for k, v in {**DATASET, "name": f"Page {role}"}.items()},
    )
    assert posted.status_code == (302 if role in LISTS_EDITORS else 403)


def test_anonymous_reads_nothing(client, ready):
    case, _offer = ready
    assert client.get(DATASETS).status_code in (401, 403)
    page = client.get(reverse("assessments:audit_facts", args=[_assessment(case).pk]))
    assert page.status_code == 302  # to sign in


# --- the rules, on plain data -------------------------------------------------------------


def test_the_rules_on_their_edges(people, ready):
    assert sha256_error(SHA) == "" and sha256_error(" " + SHA.upper() + " ") == ""
    assert sha256_error("a" * 63) and sha256_error("z" * 64)
    assert log_retention_gaps(180, 180) == [] and log_retention_gaps(179, 180)
    assert [g.key for g in encryption_gaps(at_rest=None, in_transit="yes")] == [
        "encryption_at_rest"
    ]
    assert encryption_gaps(at_rest="yes", in_transit="yes") == []
    # "Yes" keeps its words; "no" drops them; only the fields given change.
    current = {"encryption_at_rest": "yes", "encryption_at_rest_mechanism": "AES"}
    changes, errors = fact_changes(current, {"encryption_at_rest": "no"})
    assert errors == {} and changes == {
        "encryption_at_rest": "no",
        "encryption_at_rest_mechanism": None,
    }
    assert fact_changes(current, {"log_retention_days": True})[1]
    # Two removals of one row: the second finds it gone (409 in the API), never a 500.
    dataset = _assessment(ready[0]).datasets.get()
    dataset_remove(actor=people["lena"], dataset=dataset, reason="Gone")
    with pytest.raises(StateConflict):
        dataset_remove(actor=people["lena"], dataset=dataset, reason="Gone again")
