"""Plans, results, attachments and sign-off through the services; the case becomes accepted."""

import copy
import hashlib

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.acceptance import rules, services
from apps.acceptance.models import AcceptanceAttachment, AcceptanceResult, AcceptanceSignOff
from apps.acceptance.selectors import acceptance_state
from apps.cases.models import ProcurementCase
from apps.core.services import ConcurrentEditError
from tests.acceptance.factories import (
    approved_offer,
    harness_measures,
    make_evidence,
    make_plan,
    record_faults,
)
from tests.acceptance.measures import correctness, soak
from tests.factories import make_case, make_offer
from tests.stored import stored_names

Status = ProcurementCase.Status
pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _approved(module_people):
    """priya's case with its first offer approved, built once for the module's tests."""
    return approved_offer(module_people)


@pytest.fixture
def approved(_approved, db):
    """The module's approved case and offer, copies for one test (its writes are undone)."""
    return copy.deepcopy(_approved)


def test_a_plan_needs_an_approved_offer_or_a_case_pending_approval(approved, people, tariq, priya):
    case = make_case(priya)
    offer = make_offer(priya, case)
    with pytest.raises(ValidationError, match="not approved"):
        make_plan(tariq, offer)
    case_ok, approved_one = approved
    plan = make_plan(tariq, approved_one)
    assert plan.case == case_ok and plan.soak_minutes == 30 and plan.fault_minimum == 3
    assert plan.correctness_pass_pct == 100 and plan.ladder == "1,4,8,16,32"
    with pytest.raises(ValidationError, match="already has"):
        make_plan(tariq, approved_one)


def test_only_a_tech_lead_plans(approved, people, priya, aude):
    _case, offer = approved
    for who in (priya, aude):
        with pytest.raises(PermissionDenied):
            make_plan(who, offer)


def test_a_bad_ladder_is_refused_and_a_good_one_normalised(approved, people, tariq):
    _case, offer = approved
    with pytest.raises(ValidationError, match="ladder"):
        make_plan(tariq, offer, ladder="1,four")
    assert make_plan(tariq, offer, ladder="16, 1,4").ladder == "1,4,16"


def test_full_acceptance_moves_the_case_to_accepted(
    approved, people, tariq, tomas, passing_harness
):
    case, offer = approved
    plan = make_plan(tariq, offer)
    record_faults(tariq, plan)
    state = acceptance_state(plan)
    assert [layer.status for layer in state.layers] == [rules.PASSED] * 4 + [rules.NOT_APPLICABLE]
    assert state.safe_level == 32
    with pytest.raises(PermissionDenied, match="another tech lead"):
        services.acceptance_signoff(actor=tariq, plan=plan, comment="Looks good")
    signoff = services.acceptance_signoff(actor=tomas, plan=plan, comment="All four layers pass")
    case.refresh_from_db()
    assert case.status == Status.ACCEPTED
    assert case.history.first().history_change_reason.startswith("Accepted:")
    after = acceptance_state(plan)
    assert after.accepted, (after.signoff_changes, after.approval, after.overall)
    records = {r["model"] for r in signoff.bound_state["records"]}
    assert {"acceptance.acceptanceresult", "evidence.evidencebundle"} <= records
    assert len(signoff.bound_state["evidence"]) == 1  # soak, correctness, load test: one bundle


def test_sign_off_is_refused_while_a_layer_fails_or_is_unmeasured(
    approved, monkeypatch, people, tariq, tomas
):
    case, offer = approved
    plan = make_plan(tariq, offer)
    record_faults(tariq, plan)
    harness_measures(monkeypatch, soak_run=soak(minutes=45), correctness_run=correctness(99, 100))
    with pytest.raises(ValidationError) as refused:
        services.acceptance_signoff(actor=tomas, plan=plan, comment="?")
    assert "99 of 100 (99.00 %)" in str(refused.value)
    harness_measures(monkeypatch)  # no soak, no correctness run
    with pytest.raises(ValidationError, match="not measured"):
        services.acceptance_signoff(actor=tomas, plan=plan, comment="?")
    case.refresh_from_db()
    assert case.status == Status.APPROVED
    assert not AcceptanceSignOff.objects.exists()


def test_a_later_result_change_voids_the_sign_off_and_reopens_the_case(
    approved, people, tariq, tomas, passing_harness
):
    case, offer = approved
    plan = make_plan(tariq, offer)
    results = record_faults(tariq, plan)
    signoff = services.acceptance_signoff(actor=tomas, plan=plan, comment="Pass")
    services.acceptance_result_update(
        actor=tariq,
        result=results[2],
        fields={"duplicated_data": True},
        reason="Found duplicates on re-reading the logs",
    )
    signoff.refresh_from_db()
    case.refresh_from_db()
    assert signoff.voided_at is not None and "result was changed" in signoff.void_reason
    assert case.status == Status.APPROVED
    state = acceptance_state(plan)
    assert state.signoff is None and not state.accepted
    assert state.layers[3].status == rules.FAILED


def test_new_evidence_after_sign_off_voids_it(approved, people, tariq, tomas, passing_harness):
    case, offer = approved
    plan = make_plan(tariq, offer)
    record_faults(tariq, plan)
    services.acceptance_signoff(actor=tomas, plan=plan, comment="Pass")
    make_evidence(tariq, offer)
    state = acceptance_state(plan)
    assert state.signoff_changes and not state.accepted
    from apps.acceptance.tasks import void_stale_signoffs_task

    [voided_pk] = void_stale_signoffs_task.delay().get()
    voided = AcceptanceSignOff.objects.get(pk=voided_pk)
    assert voided.voided_at is not None
    assert void_stale_signoffs_task.delay().get() == []
    case.refresh_from_db()
    assert case.status == Status.APPROVED


def test_a_stale_plan_edit_is_refused(approved, people, tariq):
    _case, offer = approved
    plan = make_plan(tariq, offer)
    services.acceptance_plan_update(
        actor=tariq, plan=plan, fields={"soak_minutes": 60}, reason="Longer", expected_version=1
    )
    with pytest.raises(ConcurrentEditError):
        services.acceptance_plan_update(
            actor=tariq, plan=plan, fields={"soak_minutes": 45}, reason="x", expected_version=1
        )


def test_a_fault_belongs_to_the_stability_layer(approved, people, tariq):
    _case, offer = approved
    plan = make_plan(tariq, offer)
    with pytest.raises(ValidationError, match="stability"):
        services.acceptance_result_record(
            actor=tariq,
            plan=plan,
            layer="correctness",
            fault_kind="network",
            activity="x",
            outcome="passed",
        )
    assert not AcceptanceResult.objects.exists()


def _stored(media) -> list[str]:
    return stored_names()  # on disk under ``media``, or in the test's bucket


def test_attachment_is_stored_with_digest_and_never_overwritten(approved, people, tariq, _media):
    _case, offer = approved
    [result] = record_faults(tariq, make_plan(tariq, offer), kinds=("network",))
    body = b"2026-11-28T10:52:03Z link down\n"
    first = services.acceptance_attachment_add(
        actor=tariq, result=result, upload=SimpleUploadedFile("net.log", body)
    )
    second = services.acceptance_attachment_add(
        actor=tariq, result=result, upload=SimpleUploadedFile("net.log", body)
    )
    assert first.sha256 == second.sha256 == hashlib.sha256(body).hexdigest()
    assert first.size_bytes == len(body) and first.content_type == "text/plain"
    assert first.storage_name != second.storage_name
    assert len(_stored(_media)) == 2


class _Oversized:
    """An upload that reports its size and must not be read."""

    name = "huge.log"
    size = 10**9

    def read(self, *args):
        raise AssertionError("read before the size check")


@pytest.mark.parametrize(
    "upload,message",
    [
        (_Oversized(), "larger than"),
        (SimpleUploadedFile("tool.exe", b"MZ"), "Files of this type are not taken here"),
        (SimpleUploadedFile("empty.log", b""), "empty"),
    ],
)
def test_refused_upload_stores_nothing(approved, people, tariq, _media, upload, message):
    _case, offer = approved
    [result] = record_faults(tariq, make_plan(tariq, offer), kinds=("network",))
    with pytest.raises(ValidationError, match=message):
        services.acceptance_attachment_add(actor=tariq, result=result, upload=upload)
    assert not AcceptanceAttachment.objects.exists()
    assert _stored(_media) == []


def test_the_size_limit_is_a_setting(approved, people, tariq, settings):
    settings.ACCEPTANCE_ATTACHMENT_MAX_BYTES = 10
    _case, offer = approved
    [result] = record_faults(tariq, make_plan(tariq, offer), kinds=("network",))
    with pytest.raises(ValidationError, match="10"):
        services.acceptance_attachment_add(
            actor=tariq, result=result, upload=SimpleUploadedFile("a.log", b"x" * 11)
        )
