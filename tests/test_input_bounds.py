"""Every value a person types has a bound, and past it the page or the API says which
field is wrong (docs/rules/README.md#input-bounds).

Priya opens cases and offers, Lena records contract terms, Fiona's budget is in a
currency: a 1,000-character name, a 10,001-character note, an exit window of
99,999,999,999 days, a three-letter code no currency has or a prepayment of 150 %
is refused by name, on the page and in the API, and nothing is written. The checks
over the models, the forms and the API schema keep every field bounded as new ones
are added.
"""

import importlib
import inspect
import pkgutil
from decimal import Decimal

import pytest
from django import forms
from django.apps import apps as django_apps
from django.core.validators import MaxValueValidator
from django.db import connection, models
from django.urls import reverse

import apps as project_apps
from apps.cases.models import ProcurementCase
from apps.contracts.models import ContractTerms
from apps.core.bounds import CURRENCY_CODES, TEXT_MAX_LENGTH
from apps.costs.models import Budget
from apps.offers.models import Offer
from apps.vendors.models import Vendor
from tests.contracts.factories import make_checklist
from tests.factories import make_case, make_offer, make_vendor

LONG_NAME = "n" * 1_000
LONG_TEXT = "t" * (TEXT_MAX_LENGTH + 1)
LONG_REASON = "r" * 501


# --- every field has its bound -----------------------------------------------------

# Written by the server, never typed: a size measured, a count made, a position kept.
SERVER_WRITTEN_NUMBERS = {
    "cases.CaseStanding.seq",
    "cases.StandingMark.key",
    "cases.StandingMark.seq",
    "scorecards.CriteriaSet.revision",
    "scorecards.CriteriaPreset.number",
    "contracts.ChecklistTemplate.number",
    "contracts.TemplateItem.number",
    "contracts.ChecklistItem.number",
    "contracts.RedFlagWaiver.evidence_size_bytes",
    "contracts.ContractDocument.number",
    "contracts.ContractDocument.size_bytes",
    "contracts.ContractDocument.page_count",
    "access.AccessRole.position",
    "access.AccessPermission.position",
    "access.AccessControl.position",
    "evidence.EvidenceBundle.size",
    "evidence.EvidenceUpload.size",
    "evidence.EvidenceUpload.refusal_status",
    "packets.PacketRequest.year",
    "packets.PacketRequest.sequence",
    "packets.AuditPacket.size_bytes",
    "packets.AuditPacket.page_count",
    "audit.ChainHead.seq",
    "audit.ChainEntry.seq",
    "audit.ChainEntry.history_id",
    "audit.ChainVerification.rows_checked",
    "audit.ChainVerification.head_seq",
    "audit.ChainVerification.problem_count",
    "approvals.Reminder.object_pk",
    "approvals.Reminder.threshold",
    "approvals.FindingAcceptance.evidence_size_bytes",
    "costs.CostImport.size_bytes",
    "costs.CostImport.row_count",
    "costs.ThresholdAlert.threshold_pct",
    "acceptance.AcceptanceAttachment.size_bytes",
    "comments.Comment.target_id",
    "workloads.WorkloadSet.size_bytes",
    "workloads.WorkloadSet.set_version",
    "workloads.WorkloadSet.item_count",
    "portal.OneTimeCode.attempts",
    "portal.VendorDocument.size_bytes",
    "vendors.Certification.report_size_bytes",
    "core.WebhookDelivery.attempt",
    "core.WebhookDelivery.status_code",  # the receiver's answer
    # Read from a vendor's bill: its reader bounds each cell (tests/costs/test_input_boundaries.py).
    "costs.CostPeriod.tokens_in",
    "costs.CostPeriod.tokens_out",
    "costs.CostPeriod.requests",
}
SERVER_WRITTEN_TEXT = {
    "cases.CaseStanding.html",  # the rendered cockpit
    "assessments.DataExportAssessment.voided_sign_off",  # who signed and who voided
    "evidence.EvidenceUpload.refusal",  # bounded where it is made (REFUSAL_CHARS)
    "packets.PacketRequest.error",
    "packets.AuditPacket.signer_certificate_pem",
    "approvals.FindingAcceptance.facts",  # the finding as the rule stated it
    "approvals.FindingAcceptance.message",
    "acceptance.AcceptanceSignOff.void_reason",
    "approvals.Approval.lapse_reason",  # each condition not passed, as its rules said
    "core.Notification.summary",  # the sentence the event's own area wrote
    "core.WebhookDelivery.body",  # the payload as sent
    "core.WebhookDelivery.error",  # the receiver's answer, or why none came
}


def _fields():
    for model in django_apps.get_models():
        if not model.__module__.startswith("apps.") or model.__name__.startswith("Historical"):
            continue
        for field in model._meta.concrete_fields:
            if field.editable and not field.auto_created and not field.is_relation:
                yield f"{model._meta.label}.{field.name}", field


def test_every_typed_whole_number_has_a_maximum_below_its_column():
    unbounded = []
    for name, field in _fields():
        if not isinstance(field, models.IntegerField) or name in SERVER_WRITTEN_NUMBERS:
            continue
        column_max = connection.ops.integer_field_range(field.get_internal_type())[1]
        limits = [v.limit_value for v in field.validators if isinstance(v, MaxValueValidator)]
        if not any(limit < column_max for limit in limits):
            unbounded.append(name)
    assert unbounded == []


def test_every_typed_free_text_has_a_length_limit():
    unbounded = [
        name
        for name, field in _fields()
        if isinstance(field, models.TextField)
        and field.max_length is None
        and name not in SERVER_WRITTEN_TEXT
    ]
    assert unbounded == []


def _form_classes():
    for module in pkgutil.walk_packages(project_apps.__path__, "apps."):
        if ".migrations" in module.name or ".management" in module.name:
            continue
        loaded = importlib.import_module(module.name)
        for _name, cls in inspect.getmembers(loaded, inspect.isclass):
            if cls.__module__ == module.name and issubclass(cls, forms.BaseForm):
                yield f"{module.name}.{cls.__name__}", cls


# The sign-in form's user name and password are checked against the accounts, not stored.
SIGN_IN = {"apps.accounts.sso.SignInForm.username", "apps.accounts.sso.SignInForm.password"}


def test_every_text_box_of_every_form_has_a_length_limit():
    unbounded = [
        f"{form_name}.{field_name}"
        for form_name, form in _form_classes()
        for field_name, field in form.base_fields.items()
        if isinstance(field, forms.CharField)
        and field.max_length is None
        and not isinstance(field.widget, forms.HiddenInput)
        and f"{form_name}.{field_name}" not in SIGN_IN
    ]
    assert unbounded == []


# A number in a request body that names a record (its id) or the version edited.
RECORD_REFERENCES = {"id", "version", "case", "offer", "vendor", "plan", "assessment", "bundle"}
RECORD_REFERENCES |= {"item", "owner"}
FIELDED_BODIES = {"application/json", "multipart/form-data", "application/x-www-form-urlencoded"}
FORMATTED = {"binary", "date", "date-time", "uri", "email", "uuid", "decimal", "time"}


def _unbounded_in(schema, components, path, seen=frozenset()):
    """Strings without a maximum length and numbers without a maximum, by path."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name in seen:
            return
        seen, schema = seen | {name}, components[name]
    for key in ("allOf", "oneOf", "anyOf"):
        for part in schema.get(key, []):
            yield from _unbounded_in(part, components, path, seen)
    if schema.get("readOnly"):
        return
    kind = schema.get("type")
    if kind == "object":
        for name, part in (schema.get("properties") or {}).items():
            yield from _unbounded_in(part, components, f"{path}.{name}", seen)
        if isinstance(schema.get("additionalProperties"), dict):
            yield from _unbounded_in(schema["additionalProperties"], components, path, seen)
    elif kind == "array":
        yield from _unbounded_in(schema.get("items", {}), components, f"{path}[]", seen)
    elif kind == "string" and "enum" not in schema and schema.get("format") not in FORMATTED:
        if "maxLength" not in schema and "pattern" not in schema:
            yield path
    elif kind in ("integer", "number") and "maximum" not in schema:
        names_a_record = path.rsplit(".", 1)[-1].rstrip("[]") in RECORD_REFERENCES
        if not names_a_record:
            yield path


def test_every_string_and_number_the_api_takes_has_a_maximum(browser_as):
    schema = browser_as("aude").get("/api/schema/", {"format": "json"}).json()
    components = schema["components"]["schemas"]
    unbounded = []
    for route, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method not in ("post", "put", "patch"):
                continue
            for kind, body in operation.get("requestBody", {}).get("content", {}).items():
                if kind not in FIELDED_BODIES:
                    continue  # a file sent as the body: bounded by its size
                where = f"{method.upper()} {route} ({kind})"
                unbounded += _unbounded_in(body["schema"], components, where)
    assert unbounded == []


# --- refused by name on the page ---------------------------------------------------


def _case_page(world):
    return reverse("cases:create"), {"name": "Chat", "workload": "inference"}, "form"


def _offer_page(world):
    data = {
        "vendor": world["vendor"].pk,
        "accelerator_model": "NVIDIA H200 SXM 141GB",
        "accelerator_count": "64",
        "unit_price": "3.10",
        "currency": "USD",
        "billing_basis": "per_hour",
        "prepayment_ratio": "30",
        "contract_term_months": "12",
    }
    return reverse("offers:create", args=[world["case"].pk]), data, "form"


def _vendor_page(world):
    return reverse("vendors:create"), {"name": "Aurora", "jurisdiction": "Singapore"}, "form"


def _budget_page(world):
    data = {
        "currency": "USD",
        "total_amount": "1900000",
        "monthly_amount": "160000",
        "thresholds_pct": "70, 90, 100",
        "gpus_per_instance": "8",
    }
    return reverse("costs:budget", args=[world["case"].pk]), data, "budget_form"


# (page, field, a value past its bound, the records that must stay as they were)
PAGE_REFUSALS = [
    (_case_page, "name", LONG_NAME, ProcurementCase),
    (_case_page, "requirements", LONG_TEXT, ProcurementCase),
    (_case_page, "exit_window_days", "99999999999", ProcurementCase),
    (_case_page, "exit_window_days", "3651", ProcurementCase),
    (_case_page, "slo_p95_ttft_ms", "600001", ProcurementCase),
    (_offer_page, "accelerator_count", "100001", Offer),
    (_offer_page, "contract_term_months", "121", Offer),
    (_offer_page, "prepayment_ratio", "150", Offer),
    (_offer_page, "currency", "XYZ", Offer),
    (_offer_page, "currency", "usd dollars", Offer),
    (_offer_page, "notes", LONG_TEXT, Offer),
    (_vendor_page, "name", LONG_NAME, Vendor),
    (_vendor_page, "contacts", LONG_TEXT, Vendor),
    (_budget_page, "currency", "ABC", Budget),
    (_budget_page, "gpus_per_instance", "1025", Budget),
]


@pytest.fixture
def world(priya):
    return {"case": make_case(priya), "vendor": make_vendor(priya)}


@pytest.mark.parametrize(
    ("page", "field", "bad", "model"),
    PAGE_REFUSALS,
    ids=[f"{page.__name__[1:]}-{field}-{len(bad)}" for page, field, bad, _m in PAGE_REFUSALS],
)
def test_a_page_refuses_a_value_past_its_bound_by_name(browser_as, world, page, field, bad, model):
    url, data, form = page(world)
    before = model.objects.count()
    response = browser_as("priya").post(url, {**data, field: bad})
    assert response.status_code in (200, 400)  # the form again, never a 500 or a redirect
    assert field in response.context[form].errors
    assert model.objects.count() == before


# --- refused by name in the API ----------------------------------------------------


def _case_api(world):
    return "post", "/api/v1/cases/", {"name": "Chat", "workload": "inference"}


def _case_edit_api(world):
    case = world["case"]
    body = {"name": "Renamed", "version": case.version, "change_reason": "Clearer"}
    return "patch", f"/api/v1/cases/{case.pk}/", body


def _offer_api(world):
    body = {
        "case": world["case"].pk,
        "vendor": world["vendor"].pk,
        "accelerator_model": "NVIDIA H200 SXM 141GB",
        "accelerator_count": 64,
        "currency": "USD",
        "prepayment_ratio": "0.3",
    }
    return "post", "/api/v1/offers/", body


def _vendor_api(world):
    return "post", "/api/v1/vendors/", {"name": "Aurora", "jurisdiction": "Singapore"}


def _budget_api(world):
    body = {"currency": "USD", "total_amount": "1900000", "monthly_amount": "160000"}
    return "put", f"/api/v1/cases/{world['case'].pk}/costs/budget/", body


def _terms_api(world):
    checklist = world["checklist"]
    body = {"terms": {}, "change_reason": "MSA", "version": checklist.version}
    return "patch", f"/api/v1/clause-checklists/{checklist.pk}/", body


# (endpoint, field path in the body, a value past its bound, the records that stay)
API_REFUSALS = [
    (_case_api, "name", LONG_NAME, ProcurementCase),
    (_case_api, "requirements", LONG_TEXT, ProcurementCase),
    (_case_api, "exit_window_days", 99_999_999_999, ProcurementCase),
    (_case_api, "exit_window_days", 3651, ProcurementCase),
    (_case_edit_api, "change_reason", LONG_REASON, ProcurementCase),
    (_offer_api, "accelerator_count", 100_001, Offer),
    (_offer_api, "contract_term_months", 121, Offer),
    (_offer_api, "prepayment_ratio", "1.5", Offer),
    (_offer_api, "currency", "XYZ", Offer),
    (_offer_api, "currency", "usd", Offer),
    (_offer_api, "notes", LONG_TEXT, Offer),
    (_vendor_api, "contacts", LONG_TEXT, Vendor),
    (_budget_api, "currency", "ABC", Budget),
    (_budget_api, "gpus_per_instance", 1025, Budget),
    (_terms_api, "terms.data_export_days", 3651, ContractTerms),
    (_terms_api, "terms.maintenance_notice_hours", 8761, ContractTerms),
]


@pytest.fixture
def api_world(priya, lena):
    offer = make_offer(priya, make_case(priya))
    return {
        "case": offer.case,
        "vendor": make_vendor(priya),
        "checklist": make_checklist(lena, offer=offer),
    }


def _nested(body: dict, path: str) -> dict:
    *parents, _leaf = path.split(".")
    for name in parents:
        body = body[name]
    return body


@pytest.mark.parametrize(
    ("endpoint", "field", "bad", "model"),
    API_REFUSALS,
    ids=[f"{e.__name__[1:]}-{f}-{len(str(b))}" for e, f, b, _m in API_REFUSALS],
)
def test_the_api_refuses_a_value_past_its_bound_by_name(
    api_as, api_world, endpoint, field, bad, model
):
    method, url, body = endpoint(api_world)
    _nested(body, field)[field.rsplit(".", 1)[-1]] = bad
    user = "lena" if field.startswith("terms.") else "priya"
    changed = [record.version for record in model.objects.order_by("pk")]
    response = getattr(api_as(user), method)(url, body, format="json")
    assert response.status_code == 400, response.content[:300]
    assert field.rsplit(".", 1)[-1] in _nested(response.json(), field)
    assert [record.version for record in model.objects.order_by("pk")] == changed


# --- at the bound, accepted --------------------------------------------------------


def test_values_at_their_bounds_are_kept(api_as, api_world):
    case = api_as("priya").post(
        "/api/v1/cases/",
        {"name": "n" * 200, "requirements": "t" * TEXT_MAX_LENGTH, "exit_window_days": 3650},
        format="json",
    )
    assert case.status_code == 201, case.content[:300]
    offer = api_as("priya").post(
        "/api/v1/offers/",
        {
            "case": api_world["case"].pk,
            "vendor": api_world["vendor"].pk,
            "accelerator_model": "NVIDIA H200 SXM 141GB",
            "accelerator_count": 100_000,
            "contract_term_months": 120,
            "currency": "CNY",
            "prepayment_ratio": "1",
        },
        format="json",
    )
    assert offer.status_code == 201, offer.content[:300]
    stored = Offer.objects.get(pk=offer.json()["id"])
    assert (stored.accelerator_count, stored.currency) == (100_000, "CNY")
    assert stored.prepayment_ratio == Decimal("1")


def test_the_currencies_are_iso_4217_codes():
    assert len(CURRENCY_CODES) == len(set(CURRENCY_CODES)) > 150
    assert all(len(code) == 3 and code.isalpha() and code.isupper() for code in CURRENCY_CODES)
    assert {"USD", "EUR", "CNY", "JPY", "SGD", "GBP", "CHF", "HKD"} <= set(CURRENCY_CODES)


def test_an_offer_saved_in_a_code_off_the_list_still_reads(browser_as, priya):
    case = make_case(priya)
    offer = make_offer(priya, case)
    # Saved before the list was enforced: written past the checks, as an old row is.
    Offer.objects.filter(pk=offer.pk).update(currency="XBT")
    response = browser_as("aude").get(reverse("offers:detail", args=[offer.pk]))
    assert response.status_code == 200 and "XBT" in response.text
    api = browser_as("aude").get(f"/api/v1/offers/{offer.pk}/")
    assert api.status_code == 200 and api.json()["currency"] == "XBT"


# --- the longest name in the case list ----------------------------------------------


def test_the_case_list_shows_the_longest_name_a_case_takes(browser_as, priya):
    longest = "Ｌ" + "l" * 198 + "Z"  # 200 characters, no space to wrap at
    make_case(priya, name=longest)
    response = browser_as("aude").get(reverse("cases:list"))
    assert response.status_code == 200
    html = response.text
    assert f'title="{longest}"' in html  # whole, on hover
    assert longest[:79] + "…" in html  # cut to the column's width in the row
