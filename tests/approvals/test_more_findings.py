"""More computed findings bind through the register: approvable → blocked → approvable.

- Training traffic planned outside one cluster blocks the access gate
  (docs/rules/access.md#training-traffic).
- The single entry point's MFA resting on a tech lead's risk acceptance alone needs
  legal's acceptance too (docs/rules/access.md#access-controls).
- The hardware's export-control and authorisation answers count only with their
  document on file (docs/rules/data-export.md#hard-requirements).

One ready case is built for the module; each test works on its own copy and its writes
are rolled back at its end.
"""

import copy
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from apps.access.rules import ENTRY_MFA, ENTRY_MFA_FINDING, TRAINING_TRAFFIC_FINDING
from apps.approvals.acceptances import finding_accept
from apps.approvals.selectors import case_register
from apps.approvals.services import case_submit_for_approval
from apps.core.roles import Role
from tests.access.factories import make_matrix
from tests.approvals.factories import make_ready_case

ASSESSMENTS = "/api/v1/data-export-assessments/"


@pytest.fixture(scope="module")
def _ready(module_people):
    case, offer, _offers = make_ready_case(module_people)
    return case, offer


@pytest.fixture
def ready(_ready, people):
    """The ready case, built once for the module; each test gets its own copy."""
    return copy.deepcopy(_ready)


def _all_gates(api, case) -> dict[int, dict]:
    data = api.get(f"/api/v1/cases/{case.pk}/gates/").json()
    return {o["offer"]: {g["key"]: g for g in o["gates"]} for o in data["offers"]}


def _gates(api, case, offer) -> dict:
    return _all_gates(api, case)[offer.pk]


def _approve(api, case, offer):
    body = {"offer": offer.pk, "decision": "approved", "comment": "Go"}
    return api.post(f"/api/v1/cases/{case.pk}/decision/", body, format="json")


def _refused_naming(api, people, case, offer, named: str) -> None:
    """Submitted for approval, the tech lead's approval is refused and names the finding."""
    case_submit_for_approval(actor=people["priya"], case=case)
    refused = _approve(api, case, offer)
    assert refused.status_code == 400 and named in str(refused.json()["offer"])


# --- Training traffic over the public network ------------------------------------


def _put_plan(api, case, *, in_one_cluster, training_link):
    links = [{"workload": "online_inference", "link": "encrypted_tunnel"}]
    if training_link:
        links.append({"workload": "multi_node_training", "link": training_link})
    url = f"/api/v1/cases/{case.pk}/network-plan/"
    current = api.get(url)
    body = {
        "target_latency_ms": "400",
        "user_to_gateway_ms": "8",
        "multi_node_training_in_one_cluster": in_one_cluster,
        "links": links,
        "change_reason": "Training plan",
    }
    if current.status_code == 200:
        body["version"] = current.json()["version"]
    response = api.put(url, body, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


@pytest.mark.parametrize(
    "in_one_cluster,training_link,named",
    [
        (False, None, "planned to leave one cluster"),
        (True, "public_internet", "linked over “Public internet, encrypted, resumable”"),
        (False, "public_internet", "linked over “Public internet, encrypted, resumable”"),
        (True, "dedicated_line", "linked over “Dedicated line / cloud interconnect”"),
        (True, "encrypted_tunnel", "linked over “Nearby access point + encrypted tunnel”"),
        (None, "in_cluster_rdma", "confirm its traffic stays inside one cluster"),
    ],
    ids=["leaves", "internet", "internet-and-leaves", "dedicated", "tunnel", "unconfirmed"],
)
def test_training_traffic_outside_one_cluster_blocks_the_access_gate(
    api_as, people, ready, in_one_cluster, training_link, named
):
    case, offer = ready
    tech = api_as("tariq")
    # Training kept on the in-cluster network, confirmed: the gate holds.
    _put_plan(tech, case, in_one_cluster=True, training_link="in_cluster_rdma")
    assert _gates(tech, case, offer)["access_matrix"]["held"] is True
    plan = _put_plan(tech, case, in_one_cluster=in_one_cluster, training_link=training_link)
    assert any(named in p for p in plan["training_problems"])  # the plan page says the same
    every = _all_gates(tech, case)
    for gates in every.values():  # the plan is the whole case's: every offer is held back
        gate = gates["access_matrix"]
        assert gate["held"] is False and named in gate["reason"]
    # One finding of the whole case in the register, not one per offer.
    mine = [e for e in case_register(case) if e.rule.code == TRAINING_TRAFFIC_FINDING]
    assert mine and all(e.finding.offer_id is None and e.blocking for e in mine)
    assert len(mine) == len(plan["training_problems"])
    assert {e.rule.owners for e in mine} == {(Role.TECH_LEAD,)}
    _refused_naming(tech, people, case, offer, named)
    # Blocking: nobody accepts it, not even its owner.
    with pytest.raises(ValidationError, match="nobody can accept it"):
        finding_accept(
            actor=people["tariq"],
            case=case,
            code=TRAINING_TRAFFIC_FINDING,
            offer_id=None,
            key=mine[0].finding.key,
            role=Role.TECH_LEAD,
            reason="Fast enough",
            expires_on=timezone.localdate() + timedelta(days=30),
        )
    # Back on the in-cluster network: approvable again.
    _put_plan(tech, case, in_one_cluster=True, training_link="in_cluster_rdma")
    assert _gates(tech, case, offer)["access_matrix"]["held"] is True
    assert _approve(tech, case, offer).status_code == 201


def test_a_plan_without_training_raises_nothing(api_as, ready):
    case, offer = ready
    tech = api_as("tariq")
    plan = _put_plan(tech, case, in_one_cluster=None, training_link=None)
    assert plan["training_problems"] == []
    assert _gates(tech, case, offer)["access_matrix"]["held"] is True


def test_a_decision_binds_to_the_network_plan_it_relied_on(api_as, people, ready):
    case, offer = ready
    tech = api_as("tariq")
    _put_plan(tech, case, in_one_cluster=True, training_link="in_cluster_rdma")
    case_submit_for_approval(actor=people["priya"], case=case)
    assert _approve(tech, case, offer).status_code == 201
    assert tech.get(f"/api/v1/cases/{case.pk}/gates/").json()["stale"] is False
    # Training moved onto the public internet after the decision: it no longer holds.
    _put_plan(tech, case, in_one_cluster=True, training_link="public_internet")
    data = tech.get(f"/api/v1/cases/{case.pk}/gates/").json()
    assert data["stale"] is True
    assert any(c["label"] == "workload links" for c in data["stale_changes"])


# --- The entry point's MFA on the tech lead's risk acceptance alone ---------------


def _control_off(people, case, key: str, status: str = "partial"):
    """The tech lead records one control as not in place; the others stay in place."""
    make_matrix(
        people["tariq"],
        case,
        reason="Control re-assessed",
        controls=[{"key": key, "status": status, "evidence": ""}],
    )


def _accept_risk(api, case, key: str, days: int):
    url = f"/api/v1/cases/{case.pk}/access-matrix/controls/{key}/risk-acceptance/"
    controls = api.get(f"/api/v1/cases/{case.pk}/access-matrix/").json()["controls"]
    version = next(c for c in controls if c["key"] == key)["version"]
    body = {
        "reason": "Bastion MFA rolls out next sprint",
        "expires_on": (timezone.localdate() + timedelta(days=days)).isoformat(),
        "version": version,
    }
    response = api.post(url, body, format="json")
    assert response.status_code == 200, response.content


def _legal_accepts(people, case, *, who="lena", role=Role.LEGAL, document=True):
    evidence = None
    if document:
        evidence = SimpleUploadedFile("controls.txt", b"VPN-only access, logged", "text/plain")
    return finding_accept(
        evidence=evidence,
        actor=people[who],
        case=case,
        code=ENTRY_MFA_FINDING,
        offer_id=None,
        key=ENTRY_MFA,
        role=role,
        reason="Data stays de-identified until the MFA rollout",
        expires_on=timezone.localdate() + timedelta(days=30),
    )


@pytest.mark.parametrize("status", ["partial", "missing", "not_applicable"])
def test_the_entry_points_mfa_needs_legal_besides_the_tech_leads_risk_acceptance(
    api_as, people, ready, status
):
    case, offer = ready
    tech = api_as("tariq")
    _control_off(people, case, ENTRY_MFA, status)
    gate = _gates(tech, case, offer)["access_matrix"]
    assert gate["held"] is False and "not in place" in gate["reason"]  # a gap, as before
    _accept_risk(tech, case, ENTRY_MFA, days=60)
    gate = _gates(tech, case, offer)["access_matrix"]
    named = "legal must accept this risk too"
    assert gate["held"] is False and named in gate["reason"]
    assert "Awaits acceptance by: Legal reviewer" in gate["reason"]
    _refused_naming(tech, people, case, offer, named)
    # The tech lead cannot carry it alone: neither as tech lead nor in legal's name.
    for role, field in ((Role.TECH_LEAD, "role"), (Role.LEGAL, "role")):
        with pytest.raises(ValidationError) as refused:
            _legal_accepts(people, case, who="tariq", role=role)
        assert field in refused.value.message_dict
    # Legal's acceptance carries the evidence of the controls standing in for MFA.
    with pytest.raises(ValidationError) as refused:
        _legal_accepts(people, case, document=False)
    assert "controls that stand in for MFA" in str(refused.value.message_dict["evidence"])
    _legal_accepts(people, case)
    gate = _gates(tech, case, offer)["access_matrix"]
    assert gate["held"] is True
    assert any("accepted by Lena" in w and named in w for w in gate["waivers"])
    assert _approve(tech, case, offer).status_code == 201


def test_legals_acceptance_lapses_when_the_tech_leads_acceptance_changes(api_as, people, ready):
    case, offer = ready
    tech = api_as("tariq")
    _control_off(people, case, ENTRY_MFA)
    _accept_risk(tech, case, ENTRY_MFA, days=60)
    _legal_accepts(people, case)
    assert _gates(tech, case, offer)["access_matrix"]["held"] is True
    # Accepted again for longer: legal accepted the earlier terms, not these.
    _accept_risk(tech, case, ENTRY_MFA, days=120)
    gate = _gates(tech, case, offer)["access_matrix"]
    assert gate["held"] is False and "Awaits acceptance by: Legal reviewer" in gate["reason"]
    # The MFA in place with its evidence: nothing left to accept.
    make_matrix(
        people["tariq"],
        case,
        reason="MFA rolled out",
        controls=[{"key": ENTRY_MFA, "status": "in_place", "evidence": "WebAuthn on the bastion"}],
    )
    assert _gates(tech, case, offer)["access_matrix"]["held"] is True
    assert not [e for e in case_register(case) if e.rule.code == ENTRY_MFA_FINDING]


def test_another_controls_risk_stays_the_tech_leads_alone(api_as, people, ready):
    case, offer = ready
    tech = api_as("tariq")
    _control_off(people, case, "revocation_on_leaving")
    _accept_risk(tech, case, "revocation_on_leaving", days=60)
    gate = _gates(tech, case, offer)["access_matrix"]
    assert gate["held"] is True and "accepted by a tech lead" in gate["reason"]
    assert not [e for e in case_register(case) if e.rule.code == ENTRY_MFA_FINDING]


# --- The hardware's documents on file ----------------------------------------------


def _answer(api, assessment_pk: int, key: str, answer: dict):
    current = api.get(f"{ASSESSMENTS}{assessment_pk}/").json()
    return api.patch(
        f"{ASSESSMENTS}{assessment_pk}/",
        {"answers": {key: answer}, "change_reason": "Re-read", "version": current["version"]},
        format="json",
    )


def _sign_off(api, assessment_pk: int):
    version = api.get(f"{ASSESSMENTS}{assessment_pk}/").json()["version"]
    return api.post(f"{ASSESSMENTS}{assessment_pk}/sign-off/", {"version": version}, format="json")


@pytest.mark.parametrize(
    "key,answer",
    [
        ("export_control_licence", {"value": "yes", "note": ""}),
        ("authorization_documents", {"value": "yes", "note": ""}),
        ("authorization_documents", {"value": "yes", "note": "   "}),
    ],
)
def test_a_hardware_yes_without_its_document_blocks(api_as, people, ready, key, answer):
    case, offer = ready
    legal, tech = api_as("lena"), api_as("tariq")
    assert _gates(tech, case, offer)["hardware_compliance"]["held"] is True
    assessment = case.data_export_assessments.get()
    assert _answer(legal, assessment.pk, key, answer).status_code == 200
    named = "(no evidence note or attachment)"
    gate = _gates(tech, case, offer)["hardware_compliance"]
    assert gate["held"] is False and named in gate["reason"]
    # Nor can the assessment be signed off on it: the rule is the gate's.
    refused = _sign_off(legal, assessment.pk)
    assert refused.status_code == 400 and named in str(refused.json())
    _refused_naming(tech, people, case, offer, named)
    # The document on file: signed off again, approvable again.
    fixed = {"value": "yes", "note": "Licence 3A090 and purchase invoices filed, ref. EXP-12"}
    assert _answer(legal, assessment.pk, key, fixed).status_code == 200
    assert _sign_off(legal, assessment.pk).status_code == 200
    assert all(g["held"] for g in _gates(tech, case, offer).values())
    assert _approve(tech, case, offer).status_code == 201
