"""Every approvals page and endpoint, for every role: allowed, 403, anonymous."""

import copy

import pytest
from django.urls import reverse

from apps.approvals.services import approval_decide, case_submit_for_approval
from tests.approvals.factories import make_ready_case
from tests.factories import FULL_SPEC, make_case, make_offer

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
SUBMITTERS = {"priya", "ada"}
DECIDERS = {"tariq", "ada"}


@pytest.fixture
def world(priya):
    # Access does not depend on the gates: a rejection needs none of them.
    case = make_case(priya)
    offer = make_offer(priya, case, spec=FULL_SPEC)
    case.refresh_from_db()
    return {"case": case, "offer": offer}


@pytest.fixture(scope="module")
def _ready_world(module_people):
    case, offer, _offers = make_ready_case(module_people)
    return {"case": case, "offer": offer}


@pytest.fixture
def ready_world(_ready_world, people):
    """The ready case, built once for the module; each test gets its own copy."""
    return copy.deepcopy(_ready_world)


PAGES = [
    ("approvals:case", lambda w: [w["case"].pk], EVERYONE),
    ("approvals:submit", lambda w: [w["case"].pk], SUBMITTERS),
    ("approvals:decide", lambda w: [w["case"].pk], DECIDERS),
    ("approvals:dashboard", lambda w: [], EVERYONE),
]


@pytest.mark.parametrize("name,args,allowed", PAGES, ids=[p[0] for p in PAGES])
@pytest.mark.parametrize("role", ROLES)
def test_page_access(browser_as, world, name, args, allowed, role):
    response = browser_as(role).get(reverse(name, args=args(world)))
    assert response.status_code == (200 if role in allowed else 403)


@pytest.mark.parametrize("name,args,allowed", PAGES, ids=[p[0] for p in PAGES])
def test_page_sends_anonymous_to_login(client, world, name, args, allowed):
    response = client.get(reverse(name, args=args(world)))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("role", ROLES)
def test_submitting_in_the_browser(browser_as, world, role):
    case = world["case"]
    response = browser_as(role).post(reverse("approvals:submit", args=[case.pk]), {"note": "Go"})
    case.refresh_from_db()
    if role in SUBMITTERS:
        assert response.status_code == 302
        assert case.status == "pending_approval"
    else:
        assert response.status_code == 403
        assert case.status == "evaluating"


@pytest.mark.parametrize("role", ROLES)
def test_deciding_in_the_browser(browser_as, people, world, role):
    case, offer = world["case"], world["offer"]
    case_submit_for_approval(actor=people["priya"], case=case)
    response = browser_as(role).post(
        reverse("approvals:decide", args=[case.pk]),
        {"offer": offer.pk, "decision": "rejected", "comment": "Prepayment too high"},
    )
    case.refresh_from_db()
    if role in DECIDERS:
        assert response.status_code == 302
        assert case.status == "rejected"
    else:
        assert response.status_code == 403
        assert case.status == "pending_approval"


def test_refused_approval_shows_every_open_gate_in_the_form(browser_as, people, ready_world):
    world = ready_world
    case = world["case"]
    case_submit_for_approval(actor=people["priya"], case=case)
    unready = case.offers.exclude(pk=world["offer"].pk).first()
    response = browser_as("tariq").post(
        reverse("approvals:decide", args=[case.pk]),
        {"offer": unready.pk, "decision": "approved", "comment": "Try"},
    )
    assert response.status_code == 200
    errors = response.context["form"].errors["offer"]
    assert any("No clause checklist" in e for e in errors)
    assert any("No spec verification" in e for e in errors)
    case.refresh_from_db()
    assert case.status == "pending_approval"
    missing_comment = browser_as("tariq").post(
        reverse("approvals:decide", args=[case.pk]),
        {"offer": world["offer"].pk, "decision": "approved", "comment": ""},
    )
    assert "comment" in missing_comment.context["form"].errors


def _gates(w):
    return f"/api/v1/cases/{w['case'].pk}/gates/"


# (method, path, body, roles allowed, success status, state needed)
API_CALLS = [
    ("get", _gates, None, EVERYONE, 200, None),
    ("get", lambda w: "/api/v1/approvals/", None, EVERYONE, 200, None),
    ("get", lambda w: f"/api/v1/approvals/{w['approval'].pk}/", None, EVERYONE, 200, "decided"),
    (
        "post",
        lambda w: f"/api/v1/cases/{w['case'].pk}/submit-for-approval/",
        lambda w: {"note": "Ready"},
        SUBMITTERS,
        200,
        None,
    ),
    (
        "post",
        lambda w: f"/api/v1/cases/{w['case'].pk}/decision/",
        lambda w: {"offer": w["offer"].pk, "decision": "rejected", "comment": "No"},
        DECIDERS,
        201,
        "pending",
    ),
]
API_IDS = [f"{c[0]}-{i}" for i, c in enumerate(API_CALLS)]


def _prepare(world, people, state):
    if state in ("pending", "decided"):
        case_submit_for_approval(actor=people["priya"], case=world["case"])
        world["case"].refresh_from_db()
    if state == "decided":
        world["approval"] = approval_decide(
            actor=people["tariq"],
            case=world["case"],
            offer=world["offer"],
            decision="rejected",
            comment="No",
        )


@pytest.mark.parametrize("method,path,body,allowed,success,state", API_CALLS, ids=API_IDS)
@pytest.mark.parametrize("role", ROLES)
def test_api_access(api_as, people, world, method, path, body, allowed, success, state, role):
    _prepare(world, people, state)
    response = getattr(api_as(role), method)(
        path(world), body(world) if body else None, format="json"
    )
    assert response.status_code == (success if role in allowed else 403), response.content


@pytest.mark.parametrize("method,path,body,allowed,success,state", API_CALLS, ids=API_IDS)
def test_api_refuses_anonymous_with_401(
    client, people, world, method, path, body, allowed, success, state
):
    _prepare(world, people, state)
    response = getattr(client, method)(path(world), content_type="application/json")
    assert response.status_code == 401


def test_api_gates_and_refusal_name_the_open_gates(api_as, people, ready_world):
    world = ready_world
    case = world["case"]
    data = api_as("aude").get(_gates(world)).json()
    first = next(o for o in data["offers"] if o["offer"] == world["offer"].pk)
    assert first["all_held"] is True and len(first["gates"]) == 10
    other = next(o for o in data["offers"] if o["offer"] != world["offer"].pk)
    assert {g["key"] for g in other["gates"] if not g["held"]} == {
        "red_flags",
        "verification",
        "endpoint_security",
    }
    case_submit_for_approval(actor=people["priya"], case=case)
    refused = api_as("tariq").post(
        f"/api/v1/cases/{case.pk}/decision/",
        {"offer": other["offer"], "decision": "approved", "comment": "Try"},
        format="json",
    )
    assert refused.status_code == 400
    assert len(refused.json()["offer"]) == 3
    bad = api_as("tariq").post(
        f"/api/v1/cases/{case.pk}/decision/", {"decision": "maybe", "comment": ""}, format="json"
    )
    assert bad.status_code == 400 and {"decision", "comment"} <= set(bad.json())


def test_whoever_submitted_the_case_cannot_decide_it(api_as, people, ready_world):
    """Segregation of duties: ada submits (she does not own the case), so tariq decides."""
    case, offer = ready_world["case"], ready_world["offer"]
    submitted = api_as("ada").post(
        f"/api/v1/cases/{case.pk}/submit-for-approval/", {}, format="json"
    )
    assert submitted.status_code == 200
    body = {"offer": offer.pk, "decision": "approved", "comment": "All gates held"}
    refused = api_as("ada").post(f"/api/v1/cases/{case.pk}/decision/", body, format="json")
    assert refused.status_code == 403
    assert "submitted this case" in refused.json()["detail"]
    case.refresh_from_db()
    assert case.status == "pending_approval" and case.submitted_by == people["ada"]
    decided = api_as("tariq").post(f"/api/v1/cases/{case.pk}/decision/", body, format="json")
    assert decided.status_code == 201
    case.refresh_from_db()
    assert case.status == "approved"


def test_every_gate_names_what_it_rests_on_in_page_api_and_both_languages(
    api_as, browser_as, ready_world
):
    """Each gate carries its public source (or the case's stated need), as data with the rule."""
    from apps.approvals.gates import GATE_BASIS

    data = api_as("aude").get(_gates(ready_world)).json()
    gates = data["offers"][0]["gates"]
    assert {g["key"] for g in gates} == set(GATE_BASIS)
    basis = {g["key"]: g["basis"] for g in gates}
    assert "Personal Information Protection Law, Art. 38 to 40" in basis["assessment"]
    assert "DORA), Art. 28(8)" in basis["exit_readiness"]
    assert "OWASP API Security Top 10 (2023)" in basis["endpoint_security"]
    assert all(text.strip() for text in basis.values())
    page = browser_as("aude").get(reverse("approvals:case", args=[ready_world["case"].pk]))
    assert "ISO/IEC 27001:2022, Annex A 5.15 to 5.18" in page.content.decode()
    chinese = browser_as("aude").get(
        reverse("approvals:case", args=[ready_world["case"].pk]), HTTP_ACCEPT_LANGUAGE="zh-hans"
    )
    assert "《个人信息保护法》第三十八条至第四十条" in chinese.content.decode()


def test_the_decision_form_disables_offers_that_cannot_be_approved_with_the_reason(
    browser_as, people, ready_world
):
    import re

    case, ready = ready_world["case"], ready_world["offer"]
    case_submit_for_approval(actor=people["priya"], case=case)
    html = browser_as("tariq").get(reverse("approvals:decide", args=[case.pk])).content.decode()
    options = dict(re.findall(r'<option value="(\d+)"([^>]*>[^<]*)</option>', html))
    assert "disabled" not in options[str(ready.pk)] and "cannot" not in options[str(ready.pk)]
    others = [text for pk, text in options.items() if pk != str(ready.pk)]
    assert others and all(text.startswith(" disabled>") for text in others)
    assert any(
        "cannot be approved: No open red flag; Passing spec verification newer than 30 days; "
        "Endpoint refuses unauthenticated and over-limit requests" in text
        for text in others
    )


@pytest.mark.parametrize("role", ["priya", "lena", "tariq", "aude", "ada"])
def test_the_gates_link_only_to_pages_the_reader_may_open(browser_as, role, ready_world):
    """A gate's "open the record" is shown to those who may open it; others read who can."""
    import re

    client = browser_as(role)
    html = client.get(reverse("approvals:case", args=[ready_world["case"].pk])).content.decode()
    tables = "".join(re.findall(r"(?s)<table>.*?</table>", html))
    links = set(re.findall(r'<a href="([^"]+)">open the record</a>', tables))
    for url in links:
        assert client.get(url, follow=True).status_code == 200, url
    if role == "ada":  # the administrator may open everything
        assert links and "Fixed by: " not in tables


def test_a_link_the_reader_may_not_follow_names_who_may(people, ready_world):
    from apps.core.links import may_open, who_may_open

    edit = reverse("cases:edit", args=[ready_world["case"].pk])
    assert may_open(people["priya"], edit) and not may_open(people["aude"], edit)
    assert "Administrator" in who_may_open(edit) and "Auditor" not in who_may_open(edit)
    assert may_open(people["aude"], reverse("approvals:case", args=[ready_world["case"].pk]))
    assert not may_open(people["aude"], "") and who_may_open("/no/such/page/") == []
