"""Every rule module of the areas names the findings it raises, and each reaches the register.

docs/rules/findings.md#findings-of-the-areas: each rule module of a domain app lists in
``REGISTER_FINDINGS`` the register codes its rules raise (an empty tuple where it raises
none). The walk finds the rule modules itself (every ``apps/<app>/rules.py``, every module
of an ``apps/<app>/rules/`` package, and any other module that declares
``REGISTER_FINDINGS``), so a module added later is walked without being listed here. It
fails when a rule module declares nothing, when a declared code is not an area rule of the
register (``apps.casework.findings.AREA_RULES``), or when a declared code never reaches a
case's register: ``WORLDS`` holds, for each code, the smallest change to a case ready for
approval that raises it.
"""

import ast
import copy
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from apps.access.models import AccessControl
from apps.access.rules import ENTRY_MFA
from apps.access.services import control_risk_accept
from apps.approvals.findings import Severity, Status
from apps.approvals.selectors import case_register
from apps.assessments.models import DataExportAssessment
from apps.assessments.services import (
    assessment_save,
    audit_facts_save,
    dataset_remove,
    dataset_update,
    weight_file_remove,
)
from apps.cases.models import ProcurementCase
from apps.cases.services import case_update
from apps.casework.findings import AREA_RULES
from apps.casework.registers import area_registers
from apps.contracts.models import ClauseChecklist
from apps.contracts.services import checklist_save, contract_dates_save
from apps.sizing.services import requirement_spec_save
from apps.vendors.services import certification_create
from tests.acceptance.factories import make_evidence
from tests.access.factories import make_matrix, make_plan
from tests.approvals.factories import make_ready_case
from tests.casework.factories import lapsed_reassessment
from tests.costs.factories import CLEAN, IDLE, TRAINING_HEADER, make_budget, make_import
from tests.factories import restore_default_templates
from tests.workloads.factories import BUILT_IN, load_test_summary, upload_set

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "apps"
LAYER = "casework"  # the whole-case layer weighs the areas' findings; it has no rules of its own
ADD_ONE = "add one to WORLDS in tests/test_findings_walk.py."


def _declares(path: Path) -> bool:
    """Whether the module assigns ``REGISTER_FINDINGS`` at its top level (read, not run)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "REGISTER_FINDINGS" for t in targets):
            return True
    return False


def _is_rule_module(path: Path) -> bool:
    parts = path.relative_to(APPS).parts  # (app, ..., file)
    return path.name == "rules.py" or "rules" in parts[1:-1]


def rule_modules() -> dict[str, Path]:
    """Every rule module of the domain apps, by dotted name."""
    found = {}
    for path in sorted(APPS.glob("*/**/*.py")):
        parts = path.relative_to(APPS).parts
        if parts[0] == LAYER or "migrations" in parts or "management" in parts:
            continue
        if _is_rule_module(path) or _declares(path):
            dotted = ".".join(("apps", *path.relative_to(APPS).with_suffix("").parts))
            found[dotted.removesuffix(".__init__")] = path
    return found


RULE_MODULES = rule_modules()


def declared() -> dict[str, str]:
    """Each declared code → the rule module that declares it."""
    codes: dict[str, str] = {}
    for name in RULE_MODULES:
        for code in getattr(import_module(name), "REGISTER_FINDINGS", ()):
            codes.setdefault(code, name)
    return codes


DECLARED = declared()


# --- the worlds: the smallest change to the ready case that raises each code -----------


@dataclass
class World:
    case: ProcurementCase
    offer: Any  # the ready offer: the only one with contract terms
    people: dict


def _case(world: World, **fields) -> None:
    case_update(
        actor=world.people["priya"], case=world.case, fields=fields, reason="The need changed"
    )


def _terms(world: World, **terms) -> None:
    checklist_save(
        actor=world.people["lena"],
        checklist=ClauseChecklist.objects.get(offer=world.offer),
        items=[],
        reason="Terms read again",
        contract_terms=terms,
    )


def _dates(world: World, **days_from_today) -> None:
    """The contract's dates, each so many days from today."""
    today = timezone.localdate()
    contract_dates_save(
        actor=world.people["lena"],
        checklist=ClauseChecklist.objects.get(offer=world.offer),
        dates={name: today + timedelta(days=n) for name, n in days_from_today.items()},
        reason="Dates read from the signed contract",
    )


def _requirement(world: World, **fields) -> None:
    requirement_spec_save(
        actor=world.people["tariq"], case=world.case, fields=fields, reason="Written"
    )


def _training_over_the_internet(world: World) -> None:
    make_plan(
        world.people["tariq"],
        world.case,
        multi_node_training_in_one_cluster=True,
        links=[{"workload": "multi_node_training", "link": "public_internet"}],
    )


def _entry_mfa_on_the_tech_leads_word(world: World) -> None:
    make_matrix(
        world.people["tariq"],
        world.case,
        reason="Control re-assessed",
        controls=[{"key": ENTRY_MFA, "status": "partial", "evidence": ""}],
    )
    control_risk_accept(
        actor=world.people["tariq"],
        control=AccessControl.objects.get(matrix__case=world.case, key=ENTRY_MFA),
        reason="Bastion MFA rolls out next sprint",
        expires_on=timezone.localdate() + timedelta(days=60),
    )


def _raw_data_sent_where_it_stays(world: World) -> None:
    # The assessment now says raw data is not to be sent abroad (data may not leave); the
    # plan's data sync sends raw data. The edit voids the sign-off: a gate's own finding.
    assessment_save(
        actor=world.people["lena"],
        assessment=DataExportAssessment.objects.get(case=world.case, offer=None),
        answers={"raw_data_leaves": {"value": "no"}},
        reason="Raw data stays",
    )
    make_plan(
        world.people["tariq"],
        world.case,
        links=[{"workload": "data_sync", "link": "dedicated_line", "data_sent": "raw"}],
    )


def _export_window_not_stated(world: World) -> None:
    _case(world, exit_window_days=30)
    _terms(world, data_export_days=None)


def _sla_not_stated(world: World) -> None:
    _case(world, availability_need_pct=Decimal("99.9"))
    _terms(world, sla_availability_pct=None)


# --- the data-export assessment's audit facts (apps.assessments.audit_facts) ----------
# The ready case's assessment lists one internal dataset and one weight file, encrypts at
# rest and in transit, and keeps logs 365 days (tests/assessments/factories.AUDIT_FACTS);
# it answers that the data holds no personal information.


def _assessment(world: World) -> DataExportAssessment:
    return DataExportAssessment.objects.get(case=world.case, offer=None)


def _facts(world: World, **fields) -> None:
    audit_facts_save(
        actor=world.people["lena"],
        assessment=_assessment(world),
        fields=fields,
        reason="Read again",
    )


def _no_dataset(world: World) -> None:
    dataset = _assessment(world).datasets.get()
    dataset_remove(actor=world.people["lena"], dataset=dataset, reason="Not sent after all")


def _personal_dataset(world: World) -> None:
    dataset = _assessment(world).datasets.get()
    dataset_update(
        actor=world.people["lena"],
        dataset=dataset,
        fields={"sensitivity": "personal"},
        reason="Holds customer names",
    )


def _no_weight_file(world: World) -> None:
    weight_file = _assessment(world).weight_files.get()
    weight_file_remove(
        actor=world.people["tariq"], weight_file=weight_file, reason="Listed by mistake"
    )


# --- the vendor's certifications (apps.vendors.rules) -----------------------------------


def _certification(world: World, *, expires_in: int) -> None:
    today = timezone.localdate()
    certification_create(
        actor=world.people["priya"],
        vendor=world.offer.vendor,
        kind="iso_27001",
        issuer="BSI",
        issued_on=today - timedelta(days=3 * 365),
        expires_on=today + timedelta(days=expires_in),
    )


# --- the cost guardrails against the bills, and a representative load test -------------


def _idle_gpus_on_the_bill(world: World) -> None:
    # The budget picks the ready offer: the bills are about it. 62 % of the GPU-hours idle.
    make_budget(world.people["priya"], world.case, offer=world.offer)
    make_import(world.people["priya"], world.case, ("2026-01", IDLE))


def _training_job_over_its_spend_cap(world: World) -> None:
    priya = world.people["priya"]
    make_budget(priya, world.case, offer=world.offer, training_max_spend=Decimal("25000"))
    make_import(priya, world.case, ("2026-01", f"{CLEAN},,31000.00"), header=TRAINING_HEADER)


def _load_test_on_built_in_prompts(world: World) -> None:
    upload_set(world.people["tariq"], world.case)
    make_evidence(
        world.people["tariq"], world.offer, summary=load_test_summary(prompt_set=BUILT_IN)
    )


# The ready case's contract terms (READY_TERMS) give 90 days to export the data, 99.99 %
# and standard images; the case states no exit window or availability need; its offer is
# priced per hour with 30 % prepaid; it has no requirement spec.
WORLDS: dict[str, Callable[[World], None]] = {
    "contracts.export_window_short": lambda w: _case(w, exit_window_days=120),
    "contracts.export_window_not_stated": _export_window_not_stated,
    "contracts.sla_below_need": lambda w: _case(w, availability_need_pct=Decimal("99.999")),
    "contracts.sla_not_stated": _sla_not_stated,
    "contracts.image_not_portable": lambda w: _terms(w, image_format="proprietary"),
    "contracts.exit_penalty": lambda w: _terms(w, exit_penalty_pct="10"),
    "contracts.exit_penalty_high": lambda w: _terms(w, exit_penalty_pct="30"),
    # 30 % against ordinary customers' 22 %: a premium of 36 %, within 30–50 %.
    "contracts.premium_in_range": lambda w: _terms(
        w, prepayment_pct="30", ordinary_prepayment_pct="22"
    ),
    # 30 % against 15 %: a premium of 100 %.
    "contracts.premium_above_range": lambda w: _terms(
        w, prepayment_pct="30", ordinary_prepayment_pct="15"
    ),
    "contracts.billing_differs": lambda w: _terms(w, billing_basis="per_month"),
    "contracts.prepayment_differs": lambda w: _terms(w, prepayment_pct="50"),
    "contracts.notice_deadline_passed": lambda w: _dates(w, notice_deadline=-1, renewal_date=30),
    "contracts.end_date_near": lambda w: _dates(w, effective_date=-300, end_date=45),
    # The offer has 64 cards and states no throughput.
    "sizing.requirement_short": lambda w: _requirement(w, card_count=128),
    # 64 cards against 70: 8.6 % short, within a tolerance of 10 %.
    "sizing.requirement_within_tolerance": lambda w: _requirement(
        w, card_count=70, tolerance_pct=10
    ),
    "sizing.requirement_not_stated": lambda w: _requirement(w, throughput_tokens_per_s=1000),
    "access.training_traffic_outside_cluster": _training_over_the_internet,
    "access.entry_mfa_risk_accepted": _entry_mfa_on_the_tech_leads_word,
    "access.data_leaves_against_assessment": _raw_data_sent_where_it_stays,
    # --- the data-export assessment's audit facts ---------------------------------------
    "assessments.data_inventory_missing": _no_dataset,
    "assessments.inventory_contradicts_answers": _personal_dataset,
    "assessments.weight_hashes_missing": _no_weight_file,
    "assessments.encryption_in_transit": lambda w: _facts(w, encryption_in_transit="no"),
    "assessments.encryption_at_rest": lambda w: _facts(w, encryption_at_rest="no"),
    "assessments.encryption_not_stated": lambda w: _facts(w, encryption_at_rest="not_stated"),
    # Fewer days than LOG_RETENTION_MIN_DAYS (180).
    "assessments.log_retention_short": lambda w: _facts(w, log_retention_days=90),
    # --- the cost guardrails against the bills, and a representative load test ---------
    "costs.idle_over_limit": _idle_gpus_on_the_bill,
    "costs.training_cap_exceeded": _training_job_over_its_spend_cap,
    "workloads.load_not_representative": _load_test_on_built_in_prompts,
    # --- the vendor's certifications ----------------------------------------------------
    "vendors.certification_expired": lambda w: _certification(w, expires_in=-1),
    "vendors.certification_expiring": lambda w: _certification(w, expires_in=30),
    # --- the vendor's recurring reassessment, started 31 days ago and never completed ----
    "vendors.reassessment_lapsed": lambda w: lapsed_reassessment(w.offer),
}


@pytest.fixture(scope="module")
def _ready(module_people):
    restore_default_templates()  # published by the migrations, whatever ran before
    case, offer, _offers = make_ready_case(module_people, offers=1)
    return World(case=case, offer=offer, people=module_people)


@pytest.fixture
def ready(_ready, db) -> World:
    """The ready case, built once for the module; each test's changes to it are undone."""
    return copy.deepcopy(_ready)


def _today():
    return timezone.localdate()


def _area_entries(case) -> dict[str, Any]:
    fresh = ProcurementCase.objects.get(pk=case.pk)
    return {e.rule.code: e for e in case_register(fresh) if not e.rule.code.startswith("gate.")}


# --- the walk ----------------------------------------------------------------------------


def test_the_walk_finds_the_rule_modules():
    names = set(RULE_MODULES)
    assert {
        "apps.contracts.terms",
        "apps.sizing.requirement",
        "apps.contracts.rules",
        "apps.evidence.rules",
        "apps.evidence.rules.identity",
    } <= names
    assert not any(name.startswith(f"apps.{LAYER}.") for name in names)


def test_every_rule_module_declares_the_findings_it_raises():
    silent = [
        str(path.relative_to(ROOT))
        for name, path in RULE_MODULES.items()
        if not isinstance(getattr(import_module(name), "REGISTER_FINDINGS", None), tuple)
    ]
    assert not silent, (
        "These rule modules do not declare REGISTER_FINDINGS (a tuple of register codes; "
        "`REGISTER_FINDINGS: tuple[str, ...] = ()` where they raise none): " + ", ".join(silent)
    )


def test_every_declared_code_is_an_area_rule_of_the_register():
    unknown = sorted(
        f"{code} ({module})" for code, module in DECLARED.items() if code not in AREA_RULES
    )
    assert not unknown, "Declared but not in apps.casework.findings.AREA_RULES: " + ", ".join(
        unknown
    )


def test_every_area_rule_is_declared_by_a_rule_module():
    undeclared = sorted(set(AREA_RULES) - set(DECLARED))
    assert not undeclared, "In AREA_RULES, but no rule module declares: " + ", ".join(undeclared)


def test_every_declared_code_has_a_world():
    missing = [
        f"{code} (declared in {DECLARED[code]})" for code in sorted(set(DECLARED) - set(WORLDS))
    ]
    assert not missing, "No world raises: " + ", ".join(missing) + f"; {ADD_ONE}"
    stale = sorted(set(WORLDS) - set(DECLARED))
    assert not stale, "WORLDS holds codes no rule module declares: " + ", ".join(stale)


def test_the_ready_case_raises_no_area_finding(ready):
    assert _area_entries(ready.case) == {}


@pytest.mark.parametrize("code", sorted(DECLARED))
def test_each_declared_code_reaches_the_register(ready, code):
    world = WORLDS.get(code)
    if world is None:
        pytest.fail(f"No world raises {code} (declared in {DECLARED[code]}): {ADD_ONE}")
    world(ready)
    raised = _area_entries(ready.case)
    assert set(raised) == {code}, f"The world of {code} raises {sorted(raised)}"
    entry, rule = raised[code], AREA_RULES[code]
    # About the offer, or (a finding of the network plan or the access matrix) the whole case.
    assert entry.finding.offer_id in (ready.offer.pk, None)
    assert (entry.rule.severity, entry.rule.owners) == (rule.severity, rule.owners)
    # The register weighs it as its severity says: a blocking or unaccepted one is open and
    # awaits every owner; one that informs never blocks.
    if rule.severity is Severity.INFORMS:
        assert entry.status is Status.INFORMS and not entry.blocking
    else:
        assert entry.status is Status.OPEN and entry.blocking
        expected = () if rule.severity is Severity.BLOCKS else rule.owners
        assert entry.awaiting == expected
    # My work reads the areas' findings of many cases at once: the very same ones.
    (read,) = area_registers([ProcurementCase.objects.get(pk=ready.case.pk)], today=_today())
    assert [(e.finding.identity, e.finding.message, e.status) for e in read.entries] == [
        (e.finding.identity, e.finding.message, e.status) for e in raised.values()
    ], f"My work does not read {code} as the case's register does"
