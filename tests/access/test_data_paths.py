"""The network plan's data paths against the data-export assessment
(docs/rules/access.md#data-paths).

Where the assessment that governs an offer concludes that data may not leave, a link
sending raw data, or a batch-inference, training or data-sync link that does not say what
it sends, blocks that offer's access gate.
"""

import copy
from dataclasses import dataclass

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from apps.access.models import WorkloadLink
from apps.access.rules import DATA_LEAVES_FINDING, data_path_findings
from apps.access.services import clean_links
from apps.approvals.services import case_submit_for_approval
from apps.assessments.services import assessment_create, assessment_sign_off
from apps.core.roles import Role
from tests.access.factories import PLAN_FIELDS, make_plan
from tests.approvals.factories import make_ready_case
from tests.assessments.factories import complete_answers, fill_audit_facts
from tests.factories import make_case

# --- the rule, on plain data -------------------------------------------------------------


@dataclass
class Link:
    workload: str
    link: str
    data_sent: str | None = None


SYNC, BATCH, TRAINING, ONLINE = (
    "data_sync",
    "batch_inference",
    "multi_node_training",
    "online_inference",
)


@pytest.mark.parametrize(
    "data_stays,links,keys",
    [
        # Data need not stay: nothing is held, raw or not stated.
        (False, [Link(SYNC, "dedicated_line", "raw")], []),
        (False, [Link(SYNC, "dedicated_line"), Link(BATCH, "public_internet")], []),
        # Data stays: raw data on any link is held, online inference included.
        (True, [Link(SYNC, "dedicated_line", "raw")], ["data_sync:raw"]),
        (True, [Link(ONLINE, "encrypted_tunnel", "raw")], ["online_inference:raw"]),
        (True, [Link(TRAINING, "in_cluster_rdma", "raw")], ["multi_node_training:raw"]),
        # Not stated: held for the workloads that move data, not for online inference.
        (True, [Link(SYNC, "dedicated_line")], ["data_sync:not_stated"]),
        (True, [Link(BATCH, "public_internet", "")], ["batch_inference:not_stated"]),
        (True, [Link(TRAINING, "in_cluster_rdma")], ["multi_node_training:not_stated"]),
        (True, [Link(ONLINE, "encrypted_tunnel")], []),
        # De-identified data or none at all pass.
        (True, [Link(SYNC, "dedicated_line", "deidentified")], []),
        (True, [Link(BATCH, "public_internet", "none")], []),
        (True, [], []),
        # Each link judged on its own, in the plan's order.
        (
            True,
            [
                Link(ONLINE, "encrypted_tunnel", "deidentified"),
                Link(BATCH, "public_internet"),
                Link(SYNC, "dedicated_line", "raw"),
            ],
            ["batch_inference:not_stated", "data_sync:raw"],
        ),
    ],
)
def test_data_paths_held_against_the_assessment(data_stays, links, keys):
    found = data_path_findings(data_stays=data_stays, links=links)
    assert [p.key for p in found] == keys


def test_each_problem_names_the_workload_the_link_and_its_facts():
    raw, unstated = data_path_findings(
        data_stays=True,
        links=[Link(SYNC, "dedicated_line", "raw"), Link(BATCH, "public_internet")],
    )
    assert (raw.workload, raw.problem) == (SYNC, "raw")
    assert "sends raw data" in raw.message and "data may not leave" in raw.message
    assert raw.facts == "data_stays=True; data_sync: link=dedicated_line, data_sent=raw"
    assert (unstated.workload, unstated.problem) == (BATCH, "not_stated")
    assert "does not say what it sends" in unstated.message
    assert unstated.facts.endswith("batch_inference: link=public_internet, data_sent=not_stated")


def test_problems_read_the_models_labels(db):
    link = WorkloadLink(workload=SYNC, link="dedicated_line", data_sent="raw")
    [problem] = data_path_findings(data_stays=True, links=[link])
    assert problem.message.startswith("Data sync over “Dedicated line / cloud interconnect”")


def test_the_service_refuses_an_unknown_value_and_stores_blank_as_not_stated():
    with pytest.raises(ValidationError) as refused:
        clean_links([{"workload": SYNC, "link": "dedicated_line", "data_sent": "everything"}])
    assert "links[0].data_sent" in refused.value.message_dict
    wanted = clean_links([{"workload": SYNC, "link": "dedicated_line", "data_sent": ""}])
    assert wanted[SYNC]["data_sent"] is None


# --- the plan's page ---------------------------------------------------------------------


def test_the_plan_page_saves_and_shows_what_each_link_sends(browser_as, priya):
    case = make_case(priya)
    client = browser_as("tariq")
    url = reverse("access:plan_edit", kwargs={"pk": case.pk})
    drawn = client.get(url)
    assert "Data sent to the vendor over this link" in drawn.content.decode()
    data = {
        **{k: ("" if v is None else str(v)) for k, v in PLAN_FIELDS.items()},
        "multi_node_training_in_one_cluster": "true",
        "links-TOTAL_FORMS": "4",
        "links-INITIAL_FORMS": "4",
    }
    for i, row in enumerate(drawn.context["links"].initial):
        data |= {f"links-{i}-{k}": v for k, v in row.items() if k != "in_use"}
        if row["workload"] in (ONLINE, SYNC):
            data[f"links-{i}-in_use"] = "on"
        if row["workload"] == SYNC:
            data[f"links-{i}-data_sent"] = "deidentified"
    bad = {**data, **{k: "everything" for k in data if k.endswith("-data_sent")}}
    refused = client.post(url, bad)
    assert refused.status_code == 200 and not WorkloadLink.objects.exists()
    assert client.post(url, data).status_code == 302
    sent = {link.workload: link.data_sent for link in WorkloadLink.objects.all()}
    assert sent == {ONLINE: None, SYNC: "deidentified"}
    page = client.get(reverse("access:plan", kwargs={"pk": case.pk})).content.decode()
    assert "De-identified, synthetic or feature data only" in page and "Not stated" in page
    # Drawn again, the editor holds what was saved.
    rows = client.get(url).context["links"].initial
    assert {r["workload"]: r["data_sent"] for r in rows}[SYNC] == "deidentified"


# --- through the register, the gates and the decision --------------------------------------


@pytest.fixture(scope="module")
def _ready(module_people):
    """The ready case; its first offer is governed by an assessment of its own, signed off,
    that keeps raw data at home. The others stay under the case's, which lets it go."""
    case, offer, offers = make_ready_case(module_people)
    lena = module_people["lena"]
    own = assessment_create(
        actor=lena,
        case=case,
        offer=offer,
        answers=complete_answers(raw_data_leaves="no"),
        conclusion="Only de-identified data may be sent to this vendor.",
    )
    fill_audit_facts(lena, own)
    assessment_sign_off(actor=lena, assessment=own)
    return case, offer, offers[1]


@pytest.fixture
def ready(_ready, people):
    """The ready case, built once for the module; each test gets its own copy."""
    return copy.deepcopy(_ready)


def _put_plan(api, case, *, data_sent="__absent__"):
    sync = {"workload": SYNC, "link": "dedicated_line"}
    if data_sent != "__absent__":
        sync["data_sent"] = data_sent
    links = [{"workload": ONLINE, "link": "encrypted_tunnel"}, sync]
    url = f"/api/v1/cases/{case.pk}/network-plan/"
    current = api.get(url)
    body = {
        "target_latency_ms": "400",
        "user_to_gateway_ms": "8",
        "links": links,
        "change_reason": "What the sync sends",
    }
    if current.status_code == 200:
        body["version"] = current.json()["version"]
    response = api.put(url, body, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


def _mine(api, case) -> list[dict]:
    response = api.get(f"/api/v1/cases/{case.pk}/findings/")
    assert response.status_code == 200, response.content
    return [f for f in response.json() if f["code"] == DATA_LEAVES_FINDING]


def _access_gate(api, case, offer) -> dict:
    data = api.get(f"/api/v1/cases/{case.pk}/gates/").json()
    gates = {o["offer"]: {g["key"]: g for g in o["gates"]} for o in data["offers"]}
    return gates[offer.pk]["access_matrix"]


def _approve(api, case, offer):
    body = {"offer": offer.pk, "decision": "approved", "comment": "Go"}
    return api.post(f"/api/v1/cases/{case.pk}/decision/", body, format="json")


def test_raw_data_sent_against_the_assessment_blocks_the_offer_it_governs(api_as, people, ready):
    case, offer, other = ready
    tech = api_as("tariq")
    plan = _put_plan(tech, case, data_sent="raw")
    assert plan["links"][1]["data_sent"] == "raw"

    [finding] = _mine(tech, case)
    assert finding["offer"] == offer.pk and finding["key"] == "data_sync:raw"
    assert finding["severity"] == "blocks" and finding["blocking"] is True
    assert finding["gate"] == "access_matrix"
    assert set(finding["owners"]) == {Role.LEGAL, Role.TECH_LEAD}
    assert (
        "Data sync over “Dedicated line / cloud interconnect” sends raw data"
        in (finding["message"])
    )
    assert "Personal Information Protection Law, Art. 38" in finding["source"]
    assert finding["fix_url"] == reverse("access:plan", args=[case.pk])
    gate = _access_gate(tech, case, offer)
    assert gate["held"] is False and "sends raw data" in gate["reason"]
    # The other offer is governed by the case's assessment, which lets raw data go.
    assert _access_gate(tech, case, other)["held"] is True

    case_submit_for_approval(actor=people["priya"], case=case)
    refused = _approve(tech, case, offer)
    assert refused.status_code == 400 and "sends raw data" in str(refused.json()["offer"])

    # De-identified data only: the finding is gone.
    _put_plan(tech, case, data_sent="deidentified")
    assert _mine(tech, case) == []
    assert _access_gate(tech, case, offer)["held"] is True

    # Not stated (the field left out of the full list): blocks again.
    plan = _put_plan(tech, case)
    assert plan["links"][1]["data_sent"] is None
    [finding] = _mine(tech, case)
    assert finding["key"] == "data_sync:not_stated" and finding["blocking"] is True
    assert "does not say what it sends" in finding["message"]
    assert _access_gate(tech, case, offer)["held"] is False

    # Nothing but control and results: approvable.
    _put_plan(tech, case, data_sent="none")
    assert _mine(tech, case) == []
    assert _approve(tech, case, offer).status_code == 201


def test_an_unknown_value_is_a_clear_error(api_as, ready):
    case, _offer, _other = ready
    response = api_as("tariq").put(
        f"/api/v1/cases/{case.pk}/network-plan/",
        {
            "target_latency_ms": "400",
            "user_to_gateway_ms": "8",
            "links": [{"workload": SYNC, "link": "dedicated_line", "data_sent": "all"}],
        },
        format="json",
    )
    assert response.status_code == 400
    assert "data_sent" in str(response.json())


def test_the_plan_page_edit_clears_the_finding(browser_as, tariq, ready):
    case, offer, _other = ready
    make_plan(tariq, case, links=[{"workload": SYNC, "link": "dedicated_line", "data_sent": "raw"}])
    client = browser_as("tariq")
    assert [f["key"] for f in _findings_page(client, case)] == ["data_sync:raw"]
    url = reverse("access:plan_edit", kwargs={"pk": case.pk})
    drawn = client.get(url)
    form = drawn.context["form"]
    data = {
        **{k: ("" if v is None else str(v)) for k, v in PLAN_FIELDS.items()},
        "multi_node_training_in_one_cluster": "true",
        "version": str(form.initial["version"]),
        "change_reason": "The sync sends embeddings only",
        "links-TOTAL_FORMS": "4",
        "links-INITIAL_FORMS": "4",
    }
    for i, row in enumerate(drawn.context["links"].initial):
        data |= {f"links-{i}-{k}": v for k, v in row.items() if k != "in_use"}
        if row["workload"] == SYNC:
            assert row["data_sent"] == "raw"
            data[f"links-{i}-in_use"] = "on"
            data[f"links-{i}-data_sent"] = "deidentified"
    assert client.post(url, data).status_code == 302
    assert _findings_page(client, case) == []


def _findings_page(client, case) -> list[dict]:
    """The register as the API lists it, read with the browser's session."""
    response = client.get(f"/api/v1/cases/{case.pk}/findings/")
    assert response.status_code == 200, response.content
    return [f for f in response.json() if f["code"] == DATA_LEAVES_FINDING]
