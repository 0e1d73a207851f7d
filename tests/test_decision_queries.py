"""The pages a decision is taken on cost the same queries at one offer and at many.

The offer matrix (its page and its XLSX), the approval page and the approval area are
counted once on a case of one offer with three evidence bundles, then again after the
case has grown to five offers of forty bundles each and its history to many more rows:
one growth for the module (``module_db``), each page's counts then checked by a test of
its own, both when the case's gates are gathered and when they are read back as kept
(``apps.casework.stored_gates``). The case waits for a decision, so the approval page
shows its decision form.
"""

import pytest
from django.apps import apps as django_apps
from django.contrib.contenttypes.models import ContentType
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.approvals.services import approval_decide, case_submit_for_approval
from apps.cases.services import case_offer_minimum_waive, case_update
from apps.core.services import tracked_update
from tests.approvals.factories import make_ready_case, make_verification, score_in_full
from tests.contracts.factories import make_checklist
from tests.factories import FULL_SPEC, make_offer

pytestmark = pytest.mark.postgres

PAGES = ("matrix", "matrix-xlsx", "approval", "approval-area")


def _addresses(case) -> dict[str, str]:
    matrix = reverse("scorecards:matrix", args=[case.pk])
    return {
        "matrix": matrix + "?sort=price",
        "matrix-xlsx": matrix + "?format=xlsx",
        "approval": reverse("approvals:case", args=[case.pk]),
        "approval-area": reverse("cases:area", args=[case.pk, "approval"]),
    }


def _view(client, address: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(address)
        if response.streaming:
            b"".join(response.streaming_content)  # what it reads while it streams
    assert response.status_code == 200, (address, response.status_code)
    return len(ctx.captured_queries)


def _count(client, pages: dict[str, str]) -> dict[str, tuple[int, int]]:
    """Each page's queries when its gates are gathered (the first view after a write),
    then when they are read back as kept (the next view)."""
    counts = {}
    for key, address in pages.items():
        cache.clear()  # as after a write: nothing kept for the case's new mark
        gathered = _view(client, address)
        counts[key] = (gathered, _view(client, address))
    return counts


def _rejected(people, case) -> None:
    """Submitted by procurement and rejected by the tech lead (an earlier rejection is
    superseded: its history says by which)."""
    case_submit_for_approval(actor=people["priya"], case=case, note="Ready")
    case.refresh_from_db()
    approval_decide(actor=people["tariq"], case=case, decision="rejected", comment="Not yet")
    case.refresh_from_db()


def _edits(people, case, offers, n: int) -> None:
    """``n`` more history rows for the case and each of its offers."""
    for index in range(n):
        case_update(
            actor=people["priya"], case=case, fields={"name": f"Case edited {index}"}, reason="Edit"
        )
        for offer in offers:
            tracked_update(
                offer, actor=people["priya"], reason="Edit", fields={"notes": f"{index}"}
            )
    case.refresh_from_db()


@pytest.fixture(scope="module")
def counts(module_people):
    """Every page's queries at one offer of three bundles, then at five offers of forty
    bundles each with more history: {page: ((gathered, kept) at one, (gathered, kept) at
    many)}."""
    people = module_people
    priya, lena, tariq = people["priya"], people["lena"], people["tariq"]
    case, offer, _ = make_ready_case(people, offers=1)
    case_offer_minimum_waive(actor=priya, case=case, reason="A single vendor sells it here")
    for _ in range(2):
        make_verification(tariq, offer)  # three bundles in all
    # Two rejections, the first superseded, and the case waiting for a decision again.
    _rejected(people, case)
    _rejected(people, case)
    case_submit_for_approval(actor=priya, case=case, note="Again")
    client = Client()
    client.force_login(tariq)
    pages = _addresses(case)
    # The first view of a process loads the content types once: loaded here, so that each
    # page is counted at its own first view, before the growth and after it.
    ContentType.objects.get_for_models(*django_apps.get_models())
    one = _count(client, pages)

    offers = [offer]
    for _ in range(37):
        make_verification(tariq, offer)
    for _ in range(4):
        other = make_offer(priya, case, spec=FULL_SPEC)
        score_in_full(priya, other)
        make_checklist(lena, offer=other, statuses={"sla": "needs_negotiation"})
        for _ in range(40):
            make_verification(tariq, other, verdict="failed")
        offers.append(other)
    _edits(people, case, offers, 10)
    for _ in range(3):
        approval_decide(actor=tariq, case=case, decision="rejected", comment="Still not yet")
        case.refresh_from_db()
        case_submit_for_approval(actor=priya, case=case, note="Once more")
        case.refresh_from_db()
    many = _count(client, pages)
    return {key: (one[key], many[key]) for key in pages}


@pytest.mark.parametrize("page", PAGES)
def test_decision_pages_cost_the_same_at_one_offer_and_at_five(counts, page):
    (one, one_kept), (many, many_kept) = counts[page]
    assert many == one
    assert many_kept == one_kept


@pytest.mark.parametrize("page", PAGES)
def test_kept_gates_cost_fewer_queries_than_gathering_them(counts, page):
    (one, one_kept), _many = counts[page]
    assert one_kept < one
