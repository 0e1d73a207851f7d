"""A vendor's master data: its tier (derived from its cases, or set by hand with a reason),
its owner and review cycle, its contacts, sub-processors and certifications; and an
expiring certificate turning into a finding on the vendor's active cases.

docs/rules/vendors.md.
"""

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from apps.cases.models import ProcurementCase
from apps.vendors.models import Certification, Vendor, VendorContact, VendorTier
from apps.vendors.rules import (
    CaseFacts,
    CertificationState,
    certification_state,
    derive_tier,
)
from apps.vendors.services import (
    certification_create,
    contact_create,
    sub_processor_create,
)
from tests.factories import FULL_SPEC, make_case, make_offer, make_vendor

pytestmark = pytest.mark.django_db

PDF = b"%PDF-1.4\n% an audit report\n"


# --- the tier rule, on plain values -------------------------------------------------------


@pytest.mark.parametrize(
    "cases,tier",
    [
        ([], None),
        ([CaseFacts()], VendorTier.LOW),
        ([CaseFacts(sensitivities=("public",))], VendorTier.LOW),
        ([CaseFacts(sensitivities=("internal",))], VendorTier.MEDIUM),
        ([CaseFacts(sensitivities=("internal", "personal"))], VendorTier.HIGH),
        ([CaseFacts(sensitivities=("sensitive_personal",))], VendorTier.CRITICAL),
        ([CaseFacts(sensitivities=("important_data",))], VendorTier.CRITICAL),
        ([CaseFacts(budget_total=Decimal("49999.99"))], VendorTier.LOW),
        ([CaseFacts(budget_total=Decimal("50000"))], VendorTier.MEDIUM),
        ([CaseFacts(budget_total=Decimal("250000"))], VendorTier.HIGH),
        ([CaseFacts(budget_total=Decimal("1000000"))], VendorTier.CRITICAL),
        ([CaseFacts(availability_need_pct=Decimal("99.0"))], VendorTier.LOW),
        ([CaseFacts(availability_need_pct=Decimal("99.5"))], VendorTier.MEDIUM),
        ([CaseFacts(availability_need_pct=Decimal("99.9"))], VendorTier.HIGH),
        ([CaseFacts(availability_need_pct=Decimal("99.95"))], VendorTier.CRITICAL),
        # The highest dimension of the highest case decides.
        (
            [
                CaseFacts(sensitivities=("internal",), budget_total=Decimal("300000")),
                CaseFacts(availability_need_pct=Decimal("99.5")),
            ],
            VendorTier.HIGH,
        ),
    ],
)
def test_the_tier_is_the_highest_level_of_any_case(cases, tier):
    assert derive_tier(cases) == tier


@pytest.mark.parametrize(
    "days,state",
    [
        (-1, CertificationState.EXPIRED),
        (0, CertificationState.EXPIRING),  # its last valid day
        (60, CertificationState.EXPIRING),
        (61, CertificationState.VALID),
    ],
)
def test_a_certifications_state_as_of_today(days, state):
    today = date(2026, 12, 7)
    assert certification_state(today + timedelta(days=days), today=today) is state


def test_the_vendor_tier_and_cycle_follow_the_override_then_the_cases():
    vendor = Vendor(name="X", jurisdiction="Y")
    assert vendor.tier == VendorTier.MEDIUM and vendor.review_cycle == 24
    vendor.derived_tier = VendorTier.CRITICAL
    assert vendor.tier == VendorTier.CRITICAL and vendor.review_cycle == 6
    vendor.tier_override = VendorTier.LOW
    assert vendor.tier == VendorTier.LOW and vendor.review_cycle == 36
    vendor.review_cycle_months = 9
    assert vendor.review_cycle == 9


# --- the tier kept from the cases after tracked writes -------------------------------------


def test_the_derived_tier_is_kept_after_a_write_to_the_vendors_case(
    priya, django_capture_on_commit_callbacks
):
    vendor = make_vendor(priya, name="Aurora")
    case = make_case(priya)
    with django_capture_on_commit_callbacks(execute=True):
        make_offer(priya, case, vendor=vendor, spec=FULL_SPEC)
    vendor.refresh_from_db()
    assert vendor.derived_tier == VendorTier.LOW

    with django_capture_on_commit_callbacks(execute=True):
        from apps.cases.services import case_update

        case_update(
            actor=priya,
            case=case,
            fields={"availability_need_pct": Decimal("99.95")},
            reason="Serves customers",
        )
    vendor.refresh_from_db()
    assert vendor.derived_tier == VendorTier.CRITICAL
    assert vendor.history.first().history_change_reason == "Tier from the cases: critical"


def test_an_edit_of_what_the_tier_does_not_weigh_reads_no_case_again(
    priya, django_capture_on_commit_callbacks, monkeypatch
):
    from apps.cases.services import case_update
    from apps.casework import vendor_tiers

    vendor = make_vendor(priya, name="Aurora")
    case = make_case(priya)
    with django_capture_on_commit_callbacks(execute=True):
        make_offer(priya, case, vendor=vendor, spec=FULL_SPEC)
    asked = []
    keep = vendor_tiers.keep_tiers_of_cases
    monkeypatch.setattr(
        vendor_tiers, "keep_tiers_of_cases", lambda ids: asked.append(set(ids)) or keep(ids)
    )
    with django_capture_on_commit_callbacks(execute=True):
        case_update(actor=priya, case=case, fields={"requirements": "More"}, reason="Noted")
    assert asked == []
    with django_capture_on_commit_callbacks(execute=True):
        case_update(
            actor=priya,
            case=case,
            fields={"availability_need_pct": Decimal("99.9")},
            reason="Serves customers",
        )
    assert asked == [{case.pk}]
    vendor.refresh_from_db()
    assert vendor.derived_tier == VendorTier.HIGH


# --- the owner, the cycle and the tier set by hand, through the page and the API ----------


def test_a_tier_set_by_hand_needs_a_reason_and_is_tracked(browser_as, priya, lena):
    vendor = make_vendor(priya, name="Aurora")
    url = reverse("vendors:stewardship", args=[vendor.pk])
    page = browser_as("lena")
    refused = page.post(
        url,
        {"tier_override": "critical", "version": vendor.version, "change_reason": "Board"},
    )
    assert refused.status_code == 200
    assert "Say why the tier is set by hand." in refused.content.decode()
    vendor.refresh_from_db()
    assert vendor.tier_override is None

    saved = page.post(
        url,
        {
            "tier_override": "critical",
            "tier_override_reason": "Runs the payment models",
            "version": vendor.version,
            "change_reason": "Board review",
        },
    )
    assert saved.status_code == 302
    vendor.refresh_from_db()
    assert vendor.tier == VendorTier.CRITICAL and vendor.review_cycle == 6
    row = vendor.history.first()
    assert row.history_user == lena and row.history_change_reason == "Board review"
    assert "Runs the payment models" in page.get(saved["Location"]).content.decode()


def test_legal_may_not_change_the_owner_and_a_stale_form_is_refused(
    browser_as, api_as, priya, tariq
):
    vendor = make_vendor(priya, name="Aurora")
    url = f"/api/v1/vendors/{vendor.pk}/stewardship/"
    lena = api_as("lena")
    body = {"owner": tariq.pk, "change_reason": "Hand over", "version": vendor.version}
    assert lena.patch(url, body, format="json").status_code == 403
    assert api_as("tariq").patch(url, body, format="json").status_code == 403

    answer = api_as("priya").patch(url, body, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["owner"] == tariq.pk
    stale = api_as("priya").patch(
        url,
        {"review_cycle_months": 3, "change_reason": "Often", "version": vendor.version},
        format="json",
    )
    assert stale.status_code == 409
    page = browser_as("priya").post(
        reverse("vendors:stewardship", args=[vendor.pk]),
        {
            "owner": tariq.pk,
            "review_cycle_months": 3,
            "version": vendor.version,
            "change_reason": "Often",
        },
    )
    assert page.status_code == 409
    vendor.refresh_from_db()
    assert vendor.review_cycle_months is None


# --- contacts, sub-processors, certifications: the pages and the API, per role ------------

ROLES = ["priya", "lena", "tariq", "fiona", "aude", "ada"]
PAGES = [
    ("vendors:stewardship", "vendor", {"priya", "lena", "ada"}),
    ("vendors:contact-create", "vendor", {"priya", "ada"}),
    ("vendors:contact-edit", "contact", {"priya", "ada"}),
    ("vendors:sub-processor-create", "vendor", {"priya", "lena", "ada"}),
    ("vendors:sub-processor-edit", "sub_processor", {"priya", "lena", "ada"}),
    ("vendors:certification-create", "vendor", {"priya", "lena", "ada"}),
    ("vendors:certification-edit", "certification", {"priya", "lena", "ada"}),
    ("vendors:certification-report", "certification", set(ROLES)),
]


@pytest.fixture
def master(priya, lena):
    vendor = make_vendor(priya, name="Aurora")
    today = timezone.localdate()
    return {
        "vendor": vendor,
        "contact": contact_create(actor=priya, vendor=vendor, name="Mei", email="mei@a.example"),
        "sub_processor": sub_processor_create(
            actor=lena, vendor=vendor, name="Colo KK", country="Japan", service="Racks"
        ),
        "certification": certification_create(
            actor=lena,
            vendor=vendor,
            kind="iso_27001",
            issuer="BSI",
            issued_on=today - timedelta(days=400),
            expires_on=today + timedelta(days=700),
            report=SimpleUploadedFile("iso.pdf", PDF, "application/pdf"),
        ),
    }


@pytest.mark.parametrize("name,record,allowed", PAGES, ids=[p[0] for p in PAGES])
@pytest.mark.parametrize("role", ROLES)
def test_each_master_data_page_per_role(browser_as, people, master, name, record, allowed, role):
    answer = browser_as(role).get(reverse(name, args=[master[record].pk]))
    assert answer.status_code == (200 if role in allowed else 403)


API = [
    ("get", "/api/v1/vendor-contacts/", None, set(ROLES), 200),
    ("post", "/api/v1/vendor-contacts/", "contact", {"priya", "ada"}, 201),
    ("patch", "/api/v1/vendor-contacts/{contact}/", "contact_edit", {"priya", "ada"}, 200),
    ("get", "/api/v1/vendor-sub-processors/", None, set(ROLES), 200),
    ("post", "/api/v1/vendor-sub-processors/", "sub", {"priya", "lena", "ada"}, 201),
    ("get", "/api/v1/vendor-certifications/", None, set(ROLES), 200),
    ("post", "/api/v1/vendor-certifications/", "cert", {"priya", "lena", "ada"}, 201),
    (
        "patch",
        "/api/v1/vendor-certifications/{certification}/",
        "cert_edit",
        {"priya", "lena", "ada"},
        200,
    ),
    ("get", "/api/v1/vendor-certifications/{certification}/report/", None, set(ROLES), 200),
]


def _body(kind, master):
    vendor = master["vendor"].pk
    today = timezone.localdate()
    return {
        "contact": {"vendor": vendor, "name": "Ken", "email": "ken@a.example", "language": "en"},
        "contact_edit": {
            "role": "Account manager",
            "change_reason": "Promoted",
            "version": master["contact"].version,
        },
        "sub": {"vendor": vendor, "name": "Fibre", "country": "Japan", "service": "Network"},
        "cert": {
            "vendor": vendor,
            "kind": "soc2_type2",
            "issuer": "Audit LLP",
            "issued_on": (today - timedelta(days=10)).isoformat(),
            "expires_on": (today + timedelta(days=355)).isoformat(),
        },
        "cert_edit": {
            "scope": "Tokyo region",
            "change_reason": "Scope read",
            "version": master["certification"].version,
        },
    }[kind]


@pytest.mark.parametrize(
    "method,path,body,allowed,success", API, ids=[f"{a[0]} {a[1]}" for a in API]
)
@pytest.mark.parametrize("role", ROLES)
def test_each_master_data_endpoint_per_role(
    api_as, people, master, method, path, body, allowed, success, role
):
    url = path.format(**{k: v.pk for k, v in master.items()})
    answer = getattr(api_as(role), method)(
        url, _body(body, master) if body else None, format="json"
    )
    assert answer.status_code == (success if role in allowed else 403), answer.content


def test_master_data_writes_are_tracked_and_a_stale_edit_is_refused(api_as, master, priya):
    contact = master["contact"]
    url = f"/api/v1/vendor-contacts/{contact.pk}/"
    body = {"active": False, "change_reason": "Left the vendor", "version": contact.version}
    assert api_as("priya").patch(url, body, format="json").status_code == 200
    assert api_as("priya").patch(url, body, format="json").status_code == 409
    rows = list(VendorContact.history.filter(id=contact.pk).order_by("history_id"))
    assert [r.history_change_reason for r in rows] == ["Contact added", "Left the vendor"]
    assert rows[-1].history_user == priya and rows[-1].active is False


def test_a_certification_report_is_checked_by_content_and_refused_whole(api_as, master):
    vendor = master["vendor"].pk
    today = timezone.localdate()
    before = Certification.objects.count()
    fake = SimpleUploadedFile("report.pdf", b"MZ not a pdf", "application/pdf")
    answer = api_as("lena").post(
        "/api/v1/vendor-certifications/",
        {
            "vendor": vendor,
            "kind": "soc1",
            "issuer": "Audit LLP",
            "issued_on": today.isoformat(),
            "expires_on": (today + timedelta(days=365)).isoformat(),
            "report": fake,
        },
        format="multipart",
    )
    assert answer.status_code == 400 and "report" in answer.json()
    assert Certification.objects.count() == before

    report = api_as("aude").get(
        f"/api/v1/vendor-certifications/{master['certification'].pk}/report/"
    )
    assert report.status_code == 200 and b"".join(report) == PDF
    cert = master["certification"]
    assert report["X-Content-SHA256"] == cert.report_sha256
    with default_storage.open(cert.report_storage_name, "wb") as handle:
        handle.write(b"%PDF-1.4 tampered")
    assert api_as("aude").get(f"/api/v1/vendor-certifications/{cert.pk}/report/").status_code == 409


def test_a_certification_expires_after_it_is_issued(browser_as, master):
    today = timezone.localdate()
    answer = browser_as("lena").post(
        reverse("vendors:certification-create", args=[master["vendor"].pk]),
        {
            "kind": "pci_dss",
            "issuer": "QSA Ltd",
            "issued_on": today.isoformat(),
            "expires_on": (today - timedelta(days=1)).isoformat(),
        },
    )
    assert answer.status_code == 200
    assert "A certification expires after it is issued." in answer.content.decode()


# --- the vendor's page ---------------------------------------------------------------------


def test_the_page_shows_the_master_data_and_what_each_reader_may_see(browser_as, priya, master):
    vendor = master["vendor"]
    make_offer(priya, make_case(priya, name="Training cluster"), vendor=vendor, spec=FULL_SPEC)
    text = browser_as("fiona").get(reverse("vendors:detail", args=[vendor.pk])).content.decode()
    for shown in ("Mei", "Colo KK", "ISO/IEC 27001", "BSI", "Training cluster", "iso.pdf"):
        assert shown in text
    assert reverse("vendors:contact-create", args=[vendor.pk]) not in text
    mine = browser_as("priya").get(reverse("vendors:detail", args=[vendor.pk])).content.decode()
    assert reverse("vendors:contact-create", args=[vendor.pk]) in mine


# --- the invitation offers the vendor's contacts -------------------------------------------


def test_picking_a_contact_fills_the_invitation(
    browser_as, priya, master, django_capture_on_commit_callbacks, mailoutbox
):
    offer = make_offer(priya, make_case(priya), vendor=master["vendor"], spec=FULL_SPEC)
    url = reverse("portal:invitations", kwargs={"offer_pk": offer.pk})
    page = browser_as("priya")
    assert "Mei &lt;mei@a.example&gt;" in page.get(url).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        answer = page.post(url, {"contact": master["contact"].pk, "language": "en", "days": 7})
    assert answer.status_code == 302
    invitation = offer.vendor_invitations.get()
    assert (invitation.contact_name, invitation.email) == ("Mei", "mei@a.example")
    refused = page.post(url, {"language": "en", "days": 7})
    assert "Pick a contact or type the contact" in refused.content.decode()


# --- end to end: an expiring certificate becomes a finding on the vendor's active cases ---


@pytest.fixture
def days_later(monkeypatch):
    """Move the organisation's calendar on by ``n`` days (instants stay as they are)."""
    real = timezone.localdate

    def move(n: int) -> None:
        def localdate(value=None, timezone=None):
            if value is None:
                return real(None, timezone) + timedelta(days=n)
            return real(value, timezone)

        monkeypatch.setattr("django.utils.timezone.localdate", localdate)

    return move


def _vendor_codes(api, case) -> dict[str, dict]:
    answer = api.get(f"/api/v1/cases/{case.pk}/findings/")
    assert answer.status_code == 200
    return {f["code"]: f for f in answer.json() if f["code"].startswith("vendors.")}


def test_a_certificate_expiring_turns_into_a_finding_on_the_vendors_active_case(
    api_as, browser_as, priya, days_later
):
    vendor = make_vendor(priya, name="Lattice Compute")
    active = make_case(priya, name="Inference pool")
    offer = make_offer(priya, active, vendor=vendor, spec=FULL_SPEC)
    closed = make_case(priya, name="Old pilot")
    make_offer(priya, closed, vendor=vendor, spec=FULL_SPEC)
    ProcurementCase.objects.filter(pk=closed.pk).update(status=ProcurementCase.Status.REJECTED)
    today = timezone.localdate()
    added = api_as("lena").post(
        "/api/v1/vendor-certifications/",
        {
            "vendor": vendor.pk,
            "kind": "iso_27001",
            "issuer": "BSI",
            "scope": "GPU cloud, Tokyo",
            "issued_on": (today - timedelta(days=1000)).isoformat(),
            "expires_on": (today + timedelta(days=70)).isoformat(),
        },
        format="json",
    )
    assert added.status_code == 201, added.content
    auditor = api_as("aude")
    case_page = reverse("cases:detail", args=[active.pk])
    assert _vendor_codes(auditor, active) == {}
    assert "ISO/IEC 27001" not in browser_as("priya").get(case_page).content.decode()

    # Sixty days before it expires, with no write in between: it informs.
    days_later(10)
    found = _vendor_codes(auditor, active)
    assert set(found) == {"vendors.certification_expiring"}
    assert found["vendors.certification_expiring"]["offer"] == offer.pk
    assert "validity period" in str(found["vendors.certification_expiring"])
    assert _vendor_codes(auditor, closed) == {}

    # The day after its last valid day: it needs procurement's acceptance, and the case
    # page lists it among what is still missing.
    days_later(71)
    found = _vendor_codes(auditor, active)
    assert set(found) == {"vendors.certification_expired"}
    text = browser_as("priya").get(case_page).content.decode()
    assert "ISO/IEC 27001" in text and "expired on" in text
    findings_page = browser_as("priya").get(reverse("approvals:findings", args=[active.pk]))
    assert "Vendor certification expired" in findings_page.content.decode()
    assert _vendor_codes(auditor, closed) == {}
