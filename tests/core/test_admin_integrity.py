"""The admin cannot forge the record.

Ada, the administrator, signs in to /admin/. Decisions, sign-offs, waivers,
what was received or issued (evidence bundles, packets, imported bills) and
the case's status are read-only there: a change, a simple-history "revert" or
a delete posted by hand changes nothing and writes no history. Other tracked
records change only through the app's own services: with a reason, against
the version loaded (a stale one is refused), one history row per edit. Stored
files are linked through their checked download views, never the storage folder.
"""

import copy
from decimal import Decimal

import pytest
from django.apps import apps
from django.contrib import admin
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.db.models.fields.files import FieldFile
from django.forms import MultiWidget
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from apps.acceptance.models import AcceptanceSignOff
from apps.approvals.models import Approval
from apps.assessments import services as assessment_services
from apps.assessments.models import DataExportAssessment
from apps.cases.models import ProcurementCase
from apps.contracts.models import RedFlagWaiver
from apps.contracts.services import red_flag_waive
from apps.core.admin import ReadOnlyInline, RecordAdmin, TrackedAdmin
from apps.core.models import FileIntegrityAlarm, TrackedModel
from apps.core.services import tracked_create
from apps.costs.models import Budget, CostImport, CostPeriod, ThresholdAlert
from apps.evidence.models import EvidenceBundle, HarnessToken, SpecVerification
from apps.offers.models import Offer
from apps.packets.models import AuditPacket, PacketRequest
from apps.sizing.models import ComputeDemand
from apps.sizing.services import compute_demand_save
from apps.vendors.models import Vendor
from apps.vendors.services import vendor_update
from tests.acceptance.factories import approved_offer, make_plan, record_faults
from tests.assessments.factories import make_assessment
from tests.contracts.factories import item, make_checklist, set_statuses
from tests.costs.factories import CLEAN, make_budget, make_import
from tests.evidence.factories import make_bundle_record, make_token
from tests.factories import make_case, make_offer, make_vendor
from tests.packets.factories import DEMAND, make_stored_packet
from tests.stored import store_folder

pytestmark = pytest.mark.postgres


@pytest.fixture
def as_ada(client, people):
    ada = people["ada"]
    ada.is_staff = True
    ada.save(update_fields=["is_staff"])
    client.force_login(ada)
    return client


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    # Packets, bills and attachments are stored in a per-test folder, never in var/.
    settings.MEDIA_ROOT = tmp_path / "media"


def _url(obj, view: str, *args) -> str:
    meta = obj._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}", args=[obj.pk, *args])


def _form_data(client, url: str) -> dict:
    """What the change page would post back unchanged."""
    page = client.get(url)
    assert page.status_code == 200
    form = page.context["adminform"].form
    forms = [form]
    data = {}
    for inline in page.context.get("inline_admin_formsets", []):
        management = inline.formset.management_form
        forms += [management, *inline.formset.forms]
    for each in forms:
        for name in each.fields:
            value = each[name].value()
            if isinstance(value, FieldFile):
                continue  # a file input posts nothing unless a new file is chosen
            widget = each.fields[name].widget
            if isinstance(widget, MultiWidget):  # the admin's date and time boxes
                for i, part in enumerate(widget.decompress(value)):
                    data[f"{each.add_prefix(name)}_{i}"] = "" if part is None else part
                continue
            data[each.add_prefix(name)] = "" if value is None else value
    return data


def _state(obj) -> tuple:
    """The stored row and its history count."""
    stored = type(obj).objects.get(pk=obj.pk)
    fields = tuple(getattr(stored, f.attname) for f in stored._meta.concrete_fields)
    return fields, stored.history.count()


# ---- records of judgement: read-only ---------------------------------------------------


def _approval(people):
    approved_offer(people)
    return Approval.objects.get(), {"decision": "rejected", "comment": "Forged"}


def _acceptance_signoff(people):
    case, offer = approved_offer(people)
    plan = make_plan(people["tariq"], offer)
    record_faults(people["tariq"], plan)
    # The row as the sign-off service stores it; how it is earned is tested in tests/acceptance.
    signoff = tracked_create(
        AcceptanceSignOff,
        actor=people["tariq"],
        reason="Signed off",
        plan=plan,
        signed_by=people["tariq"],
        signed_at=timezone.now(),
        comment="All four layers pass",
    )
    return signoff, {"comment": "Forged", "signed_by": people["ada"].pk}


def _waiver(people):
    case = make_case(people["priya"])
    offer = make_offer(people["priya"], case)
    checklist = make_checklist(people["lena"], offer=offer)
    first = checklist.items.order_by("number").first()
    set_statuses(people["lena"], checklist, {first.key: "missing"})
    red_flag_waive(actor=people["lena"], item=item(checklist, first.key), reason="Accepted risk")
    return RedFlagWaiver.objects.get(), {"justification": "Forged", "waived_status": "missing"}


def _evidence_bundle(people):
    case = make_case(people["priya"])
    offer = make_offer(people["priya"], case)
    token = make_token(people["tariq"], case, offer).record
    bundle = make_bundle_record(case, offer, token, n=1)
    return bundle, {"sha256": "f" * 64, "size": "1", "summary": '{"cells": ["forged"]}'}


def _packet(people):
    packet = make_stored_packet(people["priya"], make_case(people["priya"]))
    return packet, {"number": "FORGED-1", "sha256": "0" * 64, "page_count": "99"}


def _cost_import(people):
    case = make_case(people["priya"])
    make_budget(people["priya"], case)  # a bill is checked against the budget's rates
    make_import(people["priya"], case, ("2026-09", CLEAN))
    return CostImport.objects.get(), {"sha256": "0" * 64, "row_count": "0", "note": "Forged"}


RECORD_MAKERS = {
    "approval": _approval,
    "acceptance sign-off": _acceptance_signoff,
    "red-flag waiver": _waiver,
    "evidence bundle": _evidence_bundle,
    "packet": _packet,
    "cost import": _cost_import,
}
RECORDS = list(RECORD_MAKERS)


@pytest.fixture(scope="module")
def built_record(request, module_people, django_db_blocker, tmp_path_factory):
    """One kind of record, built once for the tests of it, its files in a folder of its
    own; undone (a savepoint in the module's transaction) before the next kind is built,
    so that each kind is alone of its model, as it was built for each test."""
    media = tmp_path_factory.mktemp("record-media")
    with django_db_blocker.unblock(), transaction.atomic():
        with override_settings(MEDIA_ROOT=media):
            built = RECORD_MAKERS[request.param](module_people)
        yield media, built
        transaction.set_rollback(True)


@pytest.fixture
def record(built_record, people):
    """The record and what a forger would post, each test its copy, its files in the
    test's storage."""
    media, built = built_record
    store_folder(media)
    return copy.deepcopy(built)


@pytest.mark.parametrize("built_record", RECORDS, indirect=True)
def test_a_record_is_shown_but_a_posted_change_is_refused(as_ada, record):
    obj, forged = record
    before = _state(obj)
    url = _url(obj, "change")
    data = {**_form_data(as_ada, url), **forged}
    response = as_ada.post(url, data)
    assert response.status_code == 403
    assert _state(obj) == before


@pytest.mark.parametrize("built_record", RECORDS, indirect=True)
def test_a_record_cannot_be_reverted_to_an_older_version(as_ada, record):
    obj, forged = record
    oldest = obj.history.order_by("history_id").first()
    url = _url(obj, "simple_history", oldest.history_id)
    before = _state(obj)
    # The revert page shows the old version in a full form; post it back, forged.
    response = as_ada.post(url, {**_form_data(as_ada, url), **forged})
    assert response.status_code == 403
    assert _state(obj) == before


@pytest.mark.parametrize("built_record", RECORDS, indirect=True)
def test_a_record_cannot_be_deleted_or_added(as_ada, record):
    obj, _forged = record
    before = _state(obj)
    assert as_ada.post(_url(obj, "delete"), {"post": "yes"}).status_code == 403
    meta = obj._meta
    changelist = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
    bulk = as_ada.post(
        changelist, {"action": "delete_selected", "_selected_action": [obj.pk], "post": "yes"}
    )
    assert bulk.status_code in (200, 302)
    assert _state(obj) == before
    add = reverse(f"admin:{meta.app_label}_{meta.model_name}_add")
    assert as_ada.post(add, {}).status_code == 403
    assert type(obj).objects.count() == 1


def test_an_assessment_sign_off_cannot_be_set_or_moved_in_the_admin(as_ada, people):
    case = make_case(people["priya"])
    assessment = make_assessment(people["lena"], case, signed=True)
    before = _state(assessment)
    url = _url(assessment, "change")
    forged = {
        **_form_data(as_ada, url),
        "signed_off_by": people["ada"].pk,
        "signed_off_at_0": "2020-01-01",
        "signed_off_at_1": "00:00:00",
        "review_by": "2099-12-31",
        "voided_sign_off": "",
        "change_reason": "Extend the review date",
    }
    response = as_ada.post(url, forged)
    assert response.status_code == 302
    assert _state(assessment) == before  # the sign-off fields are not part of the form


def test_an_assessment_edited_in_the_admin_loses_its_sign_off_as_in_the_app(as_ada, people):
    case = make_case(people["priya"])
    assessment = make_assessment(people["lena"], case, signed=True)
    url = _url(assessment, "change")
    data = {
        **_form_data(as_ada, url),
        "conclusion": "Cleared for all traffic",
        "change_reason": "Counsel's letter of 3 May",
    }
    assert as_ada.post(url, data).status_code == 302
    assessment.refresh_from_db()
    assert assessment.conclusion == "Cleared for all traffic"
    assert assessment.signed_off_at is None and assessment.signed_off_by is None
    assert "voided" in assessment.voided_sign_off
    assert assessment.history.first().history_user == people["ada"]


def test_the_case_status_and_waiver_cannot_be_set_in_the_admin(as_ada, people):
    case = make_case(people["priya"])
    make_offer(people["priya"], case)
    case.refresh_from_db()
    assert case.status == ProcurementCase.Status.EVALUATING
    before = _state(case)
    url = _url(case, "change")
    forged = {
        **_form_data(as_ada, url),
        "status": ProcurementCase.Status.APPROVED,
        "offer_minimum_waiver": "Only two vendors bid",
        "owner": people["ada"].pk,
        "change_reason": "Approved by phone",
    }
    response = as_ada.post(url, forged)
    assert response.status_code == 302
    assert _state(case) == before  # no field of the form changed: no write, no history


def test_a_case_edit_keeps_the_status_and_waiver_and_writes_history(as_ada, people):
    case = make_case(people["priya"])
    make_offer(people["priya"], case)
    case.refresh_from_db()
    url = _url(case, "change")
    data = {
        **_form_data(as_ada, url),
        "name": "Inference cluster 2025",
        "status": ProcurementCase.Status.ACCEPTED,
        "offer_minimum_waiver": "Forged",
        "change_reason": "Name agreed with finance",
    }
    assert as_ada.post(url, data).status_code == 302
    stored = ProcurementCase.objects.get(pk=case.pk)
    assert stored.name == "Inference cluster 2025"
    assert stored.status == ProcurementCase.Status.EVALUATING
    assert stored.offer_minimum_waiver == ""
    assert stored.version == case.version + 1
    assert stored.history.first().history_change_reason == "Name agreed with finance"


# ---- other tracked records: through the app's write path --------------------------------


def test_a_vendor_edit_needs_a_reason_bumps_the_version_and_writes_history(as_ada, people):
    vendor = make_vendor(people["priya"], name="Lumen Cloud")
    url = _url(vendor, "change")
    page = as_ada.get(url).content.decode()
    assert "Reason for this change" in page
    data = {**_form_data(as_ada, url), "regions": "sg-1, sg-2"}
    before = _state(vendor)

    refused = as_ada.post(url, {**data, "change_reason": ""})
    assert refused.status_code == 200
    assert "change_reason" in refused.context["adminform"].form.errors
    assert _state(vendor) == before

    saved = as_ada.post(url, {**data, "change_reason": "Second region opened in May"})
    assert saved.status_code == 302
    vendor.refresh_from_db()
    assert vendor.regions == "sg-1, sg-2"
    assert vendor.version == 2
    row = vendor.history.first()
    assert row.history_change_reason == "Second region opened in May"
    assert row.history_user == people["ada"]
    assert vendor.history.count() == before[1] + 1


def test_a_stale_version_in_the_admin_form_is_refused(as_ada, people):
    vendor = make_vendor(people["priya"], name="Lumen Cloud")
    url = _url(vendor, "change")
    loaded = _form_data(as_ada, url)
    # Priya saves in the app while Ada's form is open.
    vendor_update(
        actor=people["priya"],
        vendor=vendor,
        fields={"contacts": "sales@lumen.example"},
        reason="New contact",
    )
    before = _state(vendor)
    response = as_ada.post(
        url, {**loaded, "regions": "eu-1", "change_reason": "Moved to Frankfurt"}
    )
    assert response.status_code == 200
    assert "Someone else saved this record" in str(response.context["adminform"].form.errors)
    assert _state(vendor) == before
    assert Vendor.objects.get(pk=vendor.pk).contacts == "sales@lumen.example"


def test_a_stale_version_found_while_saving_is_refused_too(as_ada, people, monkeypatch):
    # The form's check and the save are two steps; the service's locked check closes the gap.
    vendor = make_vendor(people["priya"], name="Lumen Cloud")
    url = _url(vendor, "change")
    loaded = _form_data(as_ada, url)
    from apps.vendors import services

    real_update = services.vendor_update

    def someone_saves_first(**kwargs):
        real_update(
            actor=people["priya"], vendor=kwargs["vendor"], fields={"contacts": "x"}, reason="r"
        )
        return real_update(**kwargs)

    monkeypatch.setattr(services, "vendor_update", someone_saves_first)
    response = as_ada.post(url, {**loaded, "regions": "eu-1", "change_reason": "Moved"})
    assert response.status_code == 302 and response.url == url
    stored = Vendor.objects.get(pk=vendor.pk)
    assert stored.regions != "eu-1"
    # The whole admin request is one transaction: priya's save inside it went too.
    assert stored.version == vendor.version
    messages = [str(m) for m in response.wsgi_request._messages]
    assert any("Someone else saved this record" in m for m in messages)


def test_tracked_records_cannot_be_deleted_or_reverted_in_the_admin(as_ada, people):
    vendor = make_vendor(people["priya"])
    vendor_update(actor=people["priya"], vendor=vendor, fields={"regions": "a"}, reason="r")
    before = _state(vendor)
    assert as_ada.post(_url(vendor, "delete"), {"post": "yes"}).status_code == 403
    oldest = vendor.history.order_by("history_id").first()
    url = _url(vendor, "simple_history", oldest.history_id)
    revert = as_ada.post(url, {**_form_data(as_ada, url), "change_reason": "Undo"})
    assert revert.status_code == 403
    assert _state(vendor) == before


def test_a_vendor_added_in_the_admin_goes_through_the_service(as_ada, people):
    response = as_ada.post(
        reverse("admin:vendors_vendor_add"),
        {
            "name": "Fjord GPU",
            "jurisdiction": "Norway",
            "regions": "",
            "contacts": "",
            "website": "",
        },
    )
    assert response.status_code == 302
    vendor = Vendor.objects.get(name="Fjord GPU")
    row = vendor.history.get()
    assert row.history_user == people["ada"]
    assert row.history_change_reason == "Vendor added"


def test_an_offer_with_reviews_keeps_its_vendor_in_the_admin(as_ada, people):
    case = make_case(people["priya"])
    offer = make_offer(people["priya"], case)
    make_checklist(people["lena"], offer=offer)
    offer.refresh_from_db()
    other = make_vendor(people["priya"])
    before = _state(offer)
    url = _url(offer, "change")
    data = {**_form_data(as_ada, url), "vendor": other.pk, "change_reason": "Reseller"}
    response = as_ada.post(url, data, follow=True)
    assert "its vendor cannot change" in response.content.decode()
    assert _state(offer) == before
    assert Offer.objects.get(pk=offer.pk).vendor_id != other.pk


def test_a_checklist_item_edited_in_the_admin_lapses_its_waiver(as_ada, people):
    _waiver(people)
    waived = RedFlagWaiver.objects.get().item
    url = _url(waived, "change")
    data = {**_form_data(as_ada, url), "status": "acceptable", "change_reason": "Clause signed"}
    assert as_ada.post(url, data).status_code == 302
    waived.refresh_from_db()
    assert waived.status == "acceptable"
    assert waived.reviewer == people["ada"]
    assert RedFlagWaiver.objects.get().lapsed_at is not None


def test_a_budget_edit_goes_through_the_budget_service_with_a_reason(as_ada, people):
    case = make_case(people["priya"])
    budget = make_budget(people["priya"], case)
    url = _url(budget, "change")
    assert "Reason for this change" in as_ada.get(url).content.decode()
    data = {**_form_data(as_ada, url), "monthly_amount": "150000"}
    before = _state(budget)

    refused = as_ada.post(url, {**data, "change_reason": ""})
    assert refused.status_code == 200
    assert "change_reason" in refused.context["adminform"].form.errors
    assert _state(budget) == before

    saved = as_ada.post(url, {**data, "change_reason": "Finance cut the monthly budget"})
    assert saved.status_code == 302
    stored = Budget.objects.get(pk=budget.pk)
    assert stored.monthly_amount == Decimal("150000")
    assert stored.thresholds_pct == [70, 90, 100]
    assert stored.version == budget.version + 1
    row = stored.history.first()
    assert row.history_change_reason == "Finance cut the monthly budget"
    assert row.history_user == people["ada"]
    assert stored.history.count() == before[1] + 1


def test_a_budget_edit_the_app_would_refuse_is_refused_in_the_admin(as_ada, people):
    case = make_case(people["priya"])
    budget = make_budget(people["priya"], case)
    elsewhere = make_offer(people["priya"], make_case(people["priya"]))
    url = _url(budget, "change")
    data = {**_form_data(as_ada, url), "change_reason": "Bigger month"}
    before = _state(budget)
    # The budget service's own rule, not a model constraint.
    response = as_ada.post(url, {**data, "monthly_amount": "2000000"}, follow=True)
    assert "The monthly budget cannot exceed the total budget." in response.content.decode()
    assert _state(budget) == before
    # Only this case's offers can be chosen, and the amounts are bounded as on the page.
    for forged in ({"offer": elsewhere.pk}, {"total_amount": "10000000000000"}):
        response = as_ada.post(url, {**data, **forged})
        assert response.status_code == 200
        assert set(forged) <= set(response.context["adminform"].form.errors)
        assert _state(budget) == before


def test_a_compute_demand_edit_goes_through_the_sizing_service(as_ada, people):
    case = make_case(people["priya"])
    demand = compute_demand_save(actor=people["priya"], case=case, fields=DEMAND)
    url = _url(demand, "change")
    data = {**_form_data(as_ada, url), "change_reason": "Launch traffic doubled"}
    before = _state(demand)

    # Inputs the calculator cannot size are refused as in the app.
    response = as_ada.post(url, {**data, "model_preset": "", "model_name": "Custom"}, follow=True)
    assert "Required for a custom model" in response.content.decode()
    assert _state(demand) == before
    over = as_ada.post(url, {**data, "target_concurrency": str(10**9)})
    assert "target_concurrency" in over.context["adminform"].form.errors
    assert _state(demand) == before

    assert as_ada.post(url, {**data, "target_concurrency": "1200"}).status_code == 302
    stored = ComputeDemand.objects.get(pk=demand.pk)
    assert stored.target_concurrency == 1200
    assert stored.version == demand.version + 1
    row = stored.history.first()
    assert row.history_change_reason == "Launch traffic doubled"
    assert row.history_user == people["ada"]


def test_the_packet_admin_links_the_checked_download_not_the_storage_folder(as_ada, people):
    packet, _forged = _packet(people)
    download = reverse("packets:download", args=[packet.pk])
    oldest = packet.history.order_by("history_id").first()
    for url in (_url(packet, "change"), _url(packet, "simple_history", oldest.history_id)):
        page = as_ada.get(url).content.decode()
        assert f'href="{download}"' in page, url
        assert "/media/" not in page and packet.file.name not in page, url


def test_an_assessment_attachment_in_the_admin_links_the_checked_download(as_ada, people):
    case = make_case(people["priya"])
    assessment = make_assessment(people["lena"], case)
    letter = SimpleUploadedFile("counsel-letter.pdf", b"%PDF-1.4 letter", "application/pdf")
    assessment_services.assessment_save(
        actor=people["lena"],
        assessment=assessment,
        reason="Counsel's letter",
        attachments={"lawful_source": letter},
    )
    answer = assessment.answers.get(question_key="lawful_source")
    download = reverse("assessments:attachment", args=[assessment.pk, "lawful_source"])
    for url in (_url(assessment, "change"), _url(answer, "change")):
        page = as_ada.get(url).content.decode()
        assert f'href="{download}"' in page, url
        assert "/media/" not in page, url


def test_every_page_of_the_admin_renders(as_ada, people):
    case, offer = approved_offer(people)
    plan = make_plan(people["tariq"], offer)
    record_faults(people["tariq"], plan)
    _waiver(people)
    _packet(people)
    make_budget(people["priya"], case)
    make_import(people["priya"], case, ("2026-09", CLEAN))
    compute_demand_save(actor=people["priya"], case=case, fields=DEMAND)
    tracked_create(
        FileIntegrityAlarm,
        actor=None,
        case=case,
        record="Audit packet 1",
        storage_name="packets/1.pdf",
        expected_sha256="a" * 64,
        found_sha256="b" * 64,
        detected_at=timezone.now(),
    )
    for model, model_admin in admin.site._registry.items():
        meta = model._meta
        listing = as_ada.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        assert listing.status_code == 200, model
        first = model._default_manager.first()
        if first is None or not isinstance(model_admin, RecordAdmin | TrackedAdmin):
            continue
        assert as_ada.get(_url(first, "change")).status_code == 200, model
        assert as_ada.get(_url(first, "history")).status_code == 200, model
        oldest = first.history.order_by("history_id").first()
        assert as_ada.get(_url(first, "simple_history", oldest.history_id)).status_code == 200


def test_every_tracked_model_in_the_admin_is_read_only_or_written_through_a_service():
    inlined = set()
    for model, model_admin in admin.site._registry.items():
        for inline in model_admin.inlines:
            if issubclass(inline.model, TrackedModel):
                assert issubclass(inline, ReadOnlyInline), inline
                inlined.add(inline.model)
        if issubclass(model, TrackedModel):
            assert isinstance(model_admin, RecordAdmin | TrackedAdmin), model
    # A tracked model is either on its own guarded page or only shown inside its parent's.
    for model in apps.get_models():
        if issubclass(model, TrackedModel):
            assert model in admin.site._registry or model in inlined, model


def test_decisions_sign_offs_waivers_and_what_was_received_or_issued_are_record_pages():
    records = (
        Approval,
        AcceptanceSignOff,
        RedFlagWaiver,
        HarnessToken,
        EvidenceBundle,
        SpecVerification,
        AuditPacket,
        PacketRequest,
        CostImport,
        CostPeriod,
        ThresholdAlert,
        FileIntegrityAlarm,
    )
    for model in records:
        assert isinstance(admin.site._registry[model], RecordAdmin), model
    case_admin = admin.site._registry[ProcurementCase]
    assert "status" not in case_admin.editable_fields
    assert "offer_minimum_waiver" not in case_admin.editable_fields
    signoff_fields = {"signed_off_by", "signed_off_at", "review_by", "voided_sign_off"}
    assert not signoff_fields & set(admin.site._registry[DataExportAssessment].editable_fields)
