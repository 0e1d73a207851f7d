"""A packet request's progress is not history: the task's steps are written on the request
without history rows, and the timeline shows how the request ended, in words."""

import re

import pytest
from django.urls import reverse

from apps.costs.services import budget_save
from apps.packets.models import PacketRequest
from apps.packets.services import packet_request_create, packet_request_progress
from tests.costs.factories import BUDGET_FIELDS, make_budget
from tests.factories import make_case, make_offer

pytestmark = pytest.mark.django_db

CHAPTERS = [
    {"title": "Compute demand and sizing", "pages": None},
    {"title": "Manifest", "pages": None},
]
# How Python prints a list of dictionaries, a dictionary, or a string inside them.
PYTHON_REPR = re.compile(r"\[\{|\{'|'\}|': |\[&#x27;|&#x27;: ")


def _issue_steps(request) -> PacketRequest:
    """The steps the issuing task reports, as it reports them."""
    request = packet_request_progress(
        request, percent=5, step="Gathering the case records", status="running"
    )
    request = packet_request_progress(
        request, percent=10, step="Laying out the pages", chapters=CHAPTERS
    )
    for index in range(len(CHAPTERS)):
        done = [{**c, "pages": 2} if i <= index else c for i, c in enumerate(CHAPTERS)]
        request = packet_request_progress(
            request, percent=40 + 20 * index, step="Laying out the pages", chapters=done
        )
    request = packet_request_progress(request, percent=85, step="Signing")
    request = packet_request_progress(request, percent=95, step="Storing")
    return packet_request_progress(
        request, percent=100, step="Issued", status=PacketRequest.Status.DONE
    )


def test_progress_is_written_without_history_rows(priya):
    case = make_case(priya)
    make_offer(priya, case)
    request = packet_request_create(actor=priya, case=case, queue=False)

    running = packet_request_progress(
        request, percent=40, step="Laying out the pages", status="running", chapters=CHAPTERS
    )
    # The status page reads the progress from the request itself.
    assert (running.status, running.progress_pct, running.chapters) == ("running", 40, CHAPTERS)

    done = _issue_steps(request)
    assert (done.status, done.progress_pct, done.step) == ("done", 100, "Issued")
    rows = list(done.history.order_by("history_id"))
    # Who asked for it, and that it was issued: nothing in between.
    assert [(row.history_type, row.status) for row in rows] == [("+", "queued"), ("~", "done")]


def test_the_timeline_shows_the_request_ending_without_its_progress(priya, browser_as):
    case = make_case(priya)
    make_offer(priya, case)
    request = packet_request_create(actor=priya, case=case, queue=False)
    _issue_steps(request)

    response = browser_as("aude").get(
        reverse("audit:case-timeline", args=[case.pk]), {"record_type": "packets.packetrequest"}
    )
    assert response.status_code == 200
    entries = list(response.context["page"].object_list)
    assert [entry.action for entry in entries] == ["changed", "created"]
    assert [(c.field, c.old, c.new) for c in entries[0].changes] == [("status", "Queued", "Done")]
    html = response.content.decode()
    assert "Compute demand and sizing" not in html and "progress (%)" not in html
    assert not PYTHON_REPR.search(html)


def test_a_stored_list_reads_as_words_on_the_timeline(priya, browser_as):
    case = make_case(priya)
    make_budget(priya, case, thresholds_pct=[50, 80])
    budget_save(
        actor=priya,
        case=case,
        fields={**BUDGET_FIELDS, "thresholds_pct": [50, 80, 100]},
        reason="A last alert at the whole budget",
    )
    response = browser_as("aude").get(
        reverse("audit:case-timeline", args=[case.pk]), {"record_type": "costs.budget"}
    )
    changes = {c.field: (c.old, c.new) for c in response.context["page"].object_list[0].changes}
    assert changes["thresholds_pct"] == ("50; 80", "50; 80; 100")
    assert "[50, 80" not in response.content.decode()
