"""Assigning an item of My work to one person (docs/rules/my-work.md#assignments): who may
assign, who may take it, what the others then see, the notice the assignee gets, and the
overdue item shown to the role's lead."""

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone

from apps.approvals.assignments import assignment_set, leads_of
from apps.approvals.models import WorkAssignment
from apps.approvals.services import case_submit_for_approval
from apps.casework.dashboard import dashboard_for
from apps.casework.inbox import work_items
from apps.core.models import Notification
from tests.approvals.factories import make_ready_case

ASSIGN = reverse("approvals:assign")
MY_WORK = reverse("approvals:dashboard")


@pytest.fixture
def world(people, django_user_model):
    from django.contrib.auth.models import Group

    # A second tech lead, who may take the decision priya submitted.
    tomas = django_user_model.objects.create_user(
        username="tomas", password="pw", first_name="Tomas", email="tomas@diligence.example"
    )
    tomas.groups.add(Group.objects.get(name="tech_lead"))
    people["tomas"] = tomas
    case, offer, _offers = make_ready_case(people)
    case_submit_for_approval(actor=people["priya"], case=case)
    return case


def keys(person) -> set[str]:
    return {item.key for item in work_items(dashboard_for(person))}


def _post(client, case, key="decision", **fields):
    return client.post(ASSIGN, {"case": case.pk, "key": key, **fields})


def test_an_item_assigned_to_one_tech_lead_leaves_the_others_list(
    world, people, browser_as, django_capture_on_commit_callbacks
):
    case = world
    assert "decision" in keys(people["tariq"]) and "decision" in keys(people["tomas"])
    due = timezone.localdate() + timedelta(days=3)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(
            browser_as("priya"),
            case,
            assignee=people["tomas"].pk,
            due_on=due.isoformat(),
            next=MY_WORK,
        )
    assert response.status_code == 302 and response["Location"] == MY_WORK
    saved = WorkAssignment.objects.get(case=case, item_key="decision")
    assert (saved.assignee, saved.due_on, saved.assigned_by, saved.role) == (
        people["tomas"],
        due,
        people["priya"],
        "tech_lead",
    )
    assert saved.history.count() == 1
    assert "decision" not in keys(people["tariq"])
    item = next(i for i in work_items(dashboard_for(people["tomas"])) if i.key == "decision")
    assert item.due_on == due and item.assignee_name == "Tomas"
    html = browser_as("tomas").get(MY_WORK).content.decode()
    assert "Assigned to Tomas by" in html
    # Tomas is told, by the notification the assignment sends.
    told = Notification.objects.get(recipient=people["tomas"], event="assignment")
    assert case.name in told.summary and told.path == item.url


def test_reassigning_and_giving_back_to_the_role(world, people, browser_as):
    case = world
    due = (timezone.localdate() + timedelta(days=3)).isoformat()
    client = browser_as("tariq")  # a holder of the item's role
    assert _post(client, case, assignee=people["tomas"].pk, due_on=due).status_code == 302
    assert _post(client, case, assignee=people["tariq"].pk, due_on=due).status_code == 302
    assert "decision" not in keys(people["tomas"])
    assert _post(client, case, assignee="").status_code == 302
    assert "decision" in keys(people["tomas"])
    saved = WorkAssignment.objects.get(case=case, item_key="decision")
    assert saved.assignee is None and saved.history.count() == 3


@pytest.mark.parametrize(
    ("who", "allowed"),
    [("priya", True), ("ada", True), ("tariq", True), ("lena", False), ("aude", False)],
)
def test_who_may_assign_a_tech_leads_item(world, people, browser_as, who, allowed):
    case = world
    due = (timezone.localdate() + timedelta(days=3)).isoformat()
    response = _post(browser_as(who), case, assignee=people["tomas"].pk, due_on=due)
    assert response.status_code == (302 if allowed else 403)
    assert WorkAssignment.objects.filter(case=case).exists() is allowed


def test_refusals_say_why_and_write_nothing(world, people, browser_as):
    case = world
    client = browser_as("priya")
    today = timezone.localdate()
    # Someone without the item's role, a date past, a year and more ahead, none at all.
    for fields in (
        {"assignee": people["lena"].pk, "due_on": today.isoformat()},
        {"assignee": people["tomas"].pk, "due_on": (today - timedelta(days=1)).isoformat()},
        {"assignee": people["tomas"].pk, "due_on": (today + timedelta(days=400)).isoformat()},
        {"assignee": people["tomas"].pk},
        {"assignee": 999999, "due_on": today.isoformat()},
        {"assignee": "x"},
    ):
        response = _post(client, case, **fields)
        assert response.status_code == 400, fields
    assert _post(client, case, key="nothing:here").status_code == 400
    assert client.post(ASSIGN, {}).status_code == 400
    assert _post(client, case, assignee="").status_code == 400  # nobody has it
    assert not WorkAssignment.objects.exists()
    assert browser_as("priya").get(ASSIGN).status_code == 405


def test_an_overdue_assignment_is_shown_to_the_roles_lead(world, people, settings):
    case = world
    assignment_set(
        actor=people["priya"],
        case=case,
        item_key="decision",
        roles=("tech_lead",),
        label="Decide",
        path="/",
        assignee=people["tomas"],
        due_on=timezone.localdate(),
    )
    ada = people["ada"]
    assert "decision" not in keys(ada)  # assigned, not overdue: the assignee's alone
    WorkAssignment.objects.filter(case=case).update(due_on=timezone.localdate() - timedelta(days=2))
    # No lead named: the administrators lead every role.
    assert leads_of("tech_lead") == {ada.pk}
    escalated = next(i for i in work_items(dashboard_for(ada)) if i.key == "decision")
    assert escalated.escalated and escalated.overdue_days == 2
    assert "decision" not in keys(people["tariq"])
    # Named a lead, tariq has it instead, and the daily digest tells him.
    settings.ROLE_LEADS = {"tech_lead": ["tariq"]}
    assert leads_of("tech_lead") == {people["tariq"].pk}
    assert "decision" in keys(people["tariq"]) and "decision" not in keys(ada)


def test_the_service_refuses_what_the_page_refuses(world, people):
    case = world
    with pytest.raises(PermissionDenied):
        assignment_set(
            actor=people["lena"],
            case=case,
            item_key="decision",
            roles=("tech_lead",),
            label="x",
            path="/",
            assignee=people["tomas"],
            due_on=timezone.localdate(),
        )
    with pytest.raises(ValidationError):
        assignment_set(
            actor=people["priya"],
            case=case,
            item_key="decision",
            roles=("tech_lead",),
            label="x",
            path="/",
            assignee=people["lena"],
            due_on=timezone.localdate(),
        )


def _notices(person, event) -> list[Notification]:
    return list(Notification.objects.filter(recipient=person, event=event).order_by("pk"))


def test_assigned_work_due_soon_and_overdue_is_told_once_each(
    world, people, django_capture_on_commit_callbacks, settings
):
    from apps.casework.tasks import send_reminders_task

    settings.ROLE_LEADS = {"tech_lead": ["tariq"]}
    people["tariq"].email = "tariq@diligence.example"
    people["tariq"].save(update_fields=["email"])
    case = world
    today = timezone.localdate()
    due = today + timedelta(days=1)
    assignment_set(
        actor=people["priya"],
        case=case,
        item_key="decision",
        roles=("tech_lead",),
        label="Pending approval",
        path="/",
        assignee=people["tomas"],
        due_on=due,
    )
    with django_capture_on_commit_callbacks(execute=True):
        send_reminders_task()
        send_reminders_task()  # run again the same day: nothing more is told
    [soon] = _notices(people["tomas"], "due_soon")
    assert case.name in soon.summary and "Pending approval" in soon.summary
    assert _notices(people["tariq"], "due_soon") == []  # the lead hears of it once overdue
    assert _notices(people["tomas"], "overdue") == []

    # Two days on, it is overdue: the assignee and the role's lead are told, once.
    WorkAssignment.objects.filter(pk=WorkAssignment.objects.get(case=case).pk).update(
        due_on=today - timedelta(days=1)
    )
    with django_capture_on_commit_callbacks(execute=True):
        send_reminders_task()
        send_reminders_task()
    [late] = _notices(people["tomas"], "overdue")
    [lead] = _notices(people["tariq"], "overdue")
    assert "Overdue since" in late.summary and "Tomas" in lead.summary
    assert late.path == lead.path


def test_an_item_no_longer_waiting_is_not_told_of(
    world, people, django_capture_on_commit_callbacks
):
    from apps.casework.assignments_due import assignments_due_tell

    case = world
    today = timezone.localdate()
    assignment_set(
        actor=people["priya"],
        case=case,
        item_key="decision",
        roles=("tech_lead",),
        label="Pending approval",
        path="/",
        assignee=people["tomas"],
        due_on=today,
    )
    WorkAssignment.objects.filter(case=case).update(item_key="gone:item")
    with django_capture_on_commit_callbacks(execute=True):
        assert assignments_due_tell(today) == 0
    assert _notices(people["tomas"], "due_soon") == []
