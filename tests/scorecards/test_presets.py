"""Criteria presets per workload kind: administrators publish versions in the app; a new
case starts from the newest version of its kind; a version is never rewritten, and a case
keeps the criteria it copied."""

import pytest
from django.test import Client
from django.urls import reverse

from apps.scorecards.models import CriteriaPreset
from apps.scorecards.services import criteria_set_current, scorecard_save
from tests.factories import make_case, make_offer

TRAINING = [("price", "Price", 50), ("interconnect", "Interconnect", 30), ("exit", "Exit", 20)]


def _post(client, workload, rows, note="Training needs the interconnect"):
    data = {
        "criteria-TOTAL_FORMS": str(len(rows)),
        "criteria-INITIAL_FORMS": str(len(rows)),  # as the page renders its rows
        "criteria-MIN_NUM_FORMS": "0",
        "criteria-MAX_NUM_FORMS": "1000",
        "note": note,
    }
    for i, (key, label, weight) in enumerate(rows):
        data |= {
            f"criteria-{i}-key": key,
            f"criteria-{i}-label": label,
            f"criteria-{i}-weight": str(weight),
        }
    return client.post(reverse("scorecards:preset-publish", args=[workload]), data)


@pytest.fixture
def admin(people):
    client = Client()
    client.force_login(people["ada"])
    return client


@pytest.mark.parametrize("role", ["priya", "lena", "tariq", "fiona", "aude"])
def test_only_administrators_publish_presets(people, role):
    client = Client()
    client.force_login(people[role])
    assert client.get(reverse("scorecards:presets")).status_code == 403
    assert _post(client, "training", TRAINING).status_code == 403
    assert not CriteriaPreset.objects.exists()


def test_a_new_case_starts_from_its_kinds_newest_preset(admin, people):
    response = _post(admin, "training", TRAINING)
    assert response.status_code == 302
    preset = CriteriaPreset.objects.get()
    assert (preset.workload, preset.number) == ("training", 1)
    case = make_case(people["priya"], workload="training")
    criteria_set = criteria_set_current(actor=people["priya"], case=case)
    assert [c["key"] for c in criteria_set.criteria] == ["price", "interconnect", "exit"]
    assert "preset v1" in criteria_set.note
    # Another kind is untouched: the built-in defaults.
    other = make_case(people["priya"], workload="inference")
    assert criteria_set_current(actor=people["priya"], case=other).note == "Default criteria"
    page = admin.get(reverse("scorecards:presets"))
    assert "Interconnect" in page.content.decode()


def test_an_edit_publishes_a_new_version_and_never_rewrites_one_in_use(admin, people):
    _post(admin, "training", TRAINING)
    case = make_case(people["priya"], workload="training")
    offer = make_offer(people["priya"], case)
    scorecard_save(actor=people["priya"], offer=offer, scores={"price": {"score": 4}})
    used = case.criteria_sets.get()

    # The form starts from the newest version.
    form = admin.get(reverse("scorecards:preset-publish", args=["training"]))
    assert form.context["formset"].initial[1]["key"] == "interconnect"
    changed = [("price", "Price", 40), ("interconnect", "Interconnect", 40), ("exit", "Exit", 20)]
    assert _post(admin, "training", changed, note="More weight on the fabric").status_code == 302

    first, second = CriteriaPreset.objects.order_by("number")
    assert first.criteria[0]["weight"] == 50 and first.version == 1  # as published
    assert second.number == 2 and second.criteria[0]["weight"] == 40
    used.refresh_from_db()
    assert used.criteria[0]["weight"] == 50  # the case keeps what it copied
    new_case = make_case(people["priya"], workload="training")
    assert criteria_set_current(actor=people["priya"], case=new_case).criteria[0]["weight"] == 40


def test_bad_input_publishes_nothing(admin):
    unbalanced = [("price", "Price", 50), ("exit", "Exit", 20)]
    response = _post(admin, "training", unbalanced)
    assert response.status_code == 400
    no_reason = _post(admin, "training", TRAINING, note="")
    assert no_reason.status_code == 400
    assert admin.get(reverse("scorecards:preset-publish", args=["mining"])).status_code == 404
    assert not CriteriaPreset.objects.exists()
