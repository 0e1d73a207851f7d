"""The case page (the cockpit) is served from the cache, and never a stale copy.

Each test first views the page (which fills the cache), then changes one thing
the cached parts depend on, and views it again through HTTP.
"""

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from django.utils.translation import trans_real

from apps.cases.services import case_update
from apps.casework.cockpit import cockpit
from apps.casework.panels import case_nav, case_overview, case_panels
from apps.core.roles import Role
from apps.offers.models import Offer
from tests.access.factories import make_matrix
from tests.approvals.factories import make_ready_case, make_verification
from tests.contracts.factories import set_statuses
from tests.factories import FULL_SPEC, make_case, make_offer


def page(client, case) -> str:
    response = client.get(reverse("cases:detail", kwargs={"pk": case.pk}))
    assert response.status_code == 200
    return response.content.decode()


# The approval tile's line while no offer holds every gate.
NOT_READY = "No offer passes every approval gate yet"


def queries(client, case) -> int:
    with CaptureQueriesContext(connection) as ctx:
        page(client, case)
    return len(ctx.captured_queries)


def test_a_second_view_is_served_from_the_cache_with_the_same_page(browser_as, people):
    case, _offer, _made = make_ready_case(people)
    client = browser_as("tariq")
    first = queries(client, case)
    second = queries(client, case)
    assert second < first - 10
    # The same page, whether rendered now or read from the cache.
    html = page(client, case)
    assert NOT_READY not in html and "Not submitted for approval yet." in html
    for area in ("contracts", "data-export", "packets"):
        assert reverse("cases:area", args=[case.pk, area]) in html


def test_the_cached_page_equals_a_fresh_render(browser_as, people, settings):
    case, _offer, _made = make_ready_case(people)
    client = browser_as("lena")
    page(client, case)
    cached = page(client, case)
    settings.CASE_STANDING_STORED = False
    fresh = page(client, case)
    # Only the per-response CSRF tokens differ.
    strip = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')
    assert strip.sub("", cached) == strip.sub("", fresh)


def test_a_write_by_another_user_shows_at_once(browser_as, people, priya, lena):
    case, offer, _made = make_ready_case(people)
    client = browser_as("tariq")
    assert NOT_READY not in page(client, case)

    # lena reopens a clause: the checklist's tile and the approval gates change.
    checklist = offer.clause_checklist
    item = checklist.items.order_by("number").first()
    set_statuses(lena, checklist, {item.key: "missing"}, reason="Clause removed in the new draft")
    html = page(client, case)
    assert NOT_READY in html
    assert f"{item.number}. {item.title}" in html

    # priya renames the case: the heading changes.
    case.refresh_from_db()
    case_update(
        actor=priya,
        case=case,
        fields={"name": "Chat assistant, second round"},
        reason="New round",
        expected_version=case.version,
    )
    assert "Chat assistant, second round" in page(client, case)

    # A new offer shows in what the offers, the contracts and the evidence lack.
    new = make_offer(priya, case, spec=FULL_SPEC)
    html = page(client, case)
    assert f"Not scored yet: {new.vendor}" in html
    assert f"{new.vendor}: no contract clause checklist yet." in html
    assert f"No passing spec verification for {new.vendor}." in html


def test_a_change_of_role_changes_what_is_shown(browser_as, priya):
    case = make_case(priya)  # no offers: the three-offer minimum does not hold
    client = browser_as("priya")
    # Each role is offered the forms it may fill in, and told who fills in the others.
    waive = f'href="{reverse("offers:create", kwargs={"case_pk": case.pk})}"'
    start = f'href="{reverse("assessments:create", kwargs={"case_pk": case.pk})}"'
    html = page(client, case)
    assert waive in html and start not in html

    # No tracked write: an administrator moves priya from procurement to legal.
    priya.groups.set([Group.objects.get(name=Role.LEGAL)])
    html = page(client, case)
    assert waive not in html and start in html

    priya.groups.set([Group.objects.get(name=Role.PROCUREMENT)])
    html = page(client, case)
    assert waive in html and start not in html


def test_a_renamed_user_shows_with_the_new_name(browser_as, priya):
    case = make_case(priya)
    client = browser_as("priya")
    assert "Priya" in page(client, case)
    # Users are not tracked records: the page (its header names the viewer) notices.
    priya.first_name, priya.last_name = "Priyanka", "Raman"
    priya.save(update_fields=["first_name", "last_name"])
    assert "Priyanka Raman" in page(client, case)


@pytest.fixture
def long_sessions(settings):
    # The tests below move the clock months ahead; the session must outlive that.
    settings.SESSION_COOKIE_AGE = 10 * 365 * 24 * 3600


def test_the_date_rolling_over_re_evaluates_review_by_dates(
    browser_as, priya, tariq, monkeypatch, long_sessions
):
    from apps.access.services import access_matrix_review

    case = make_case(priya)
    matrix = make_matrix(tariq, case, reason="Started")
    matrix = access_matrix_review(actor=tariq, matrix=matrix)
    client = browser_as("tariq")
    expired = "Access matrix review expired on"
    assert expired not in page(client, case)
    assert expired not in page(client, case)  # served from the cache

    # No write at all: only the date moves past the review-by date.
    later = timezone.now() + timedelta(days=(matrix.review_by - timezone.localdate()).days + 1)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert expired in page(client, case)


def test_a_verification_ageing_past_its_limit_turns_its_gate_within_the_day(
    browser_as, people, monkeypatch, settings, long_sessions
):
    settings.APPROVAL_VERIFICATION_MAX_AGE_DAYS = 1
    case, offer, _made = make_ready_case(people)
    # A newer verification, measured a day less five minutes ago: its gate holds
    # for five more minutes.
    make_verification(people["tariq"], offer, age_days=1 - 5 / (24 * 60))
    client = browser_as("tariq")
    assert NOT_READY not in page(client, case)
    assert NOT_READY not in page(client, case)  # served from the cache

    later = timezone.now() + timedelta(minutes=10)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert NOT_READY in page(client, case)


def test_the_page_context_matches_the_uncached_overview(browser_as, people, tariq):
    case, _offer, _made = make_ready_case(people)
    client = browser_as("tariq")
    response = client.get(reverse("cases:detail", kwargs={"pk": case.pk}))  # rendered now
    overview = case_overview(case, actor=tariq)
    expected = cockpit(case, case_panels(case, actor=tariq), case_nav(case, tariq))
    tiles = [(t.area, t.missing, t.state) for t in response.context["tiles"]]
    assert tiles == [(t.area, t.missing, t.state) for t in expected["tiles"]]
    # The whole page served from the cache lists the same lines and tiles, in order.
    html = page(client, case)
    shown = re.findall(r'<li class="warn">(?:<a href="[^"]*">)?(.*?)(?:</a>)?</li>', html)
    assert shown == [escape(item) for item in overview["missing"]]
    assert re.findall(r'<li class="tile tile-(\w+)">', html) == [t.state for t in expected["tiles"]]


def test_shared_reads_run_each_selector_once_per_page(browser_as, people):
    case, _offer, _made = make_ready_case(people, offers=3)
    client = browser_as("tariq")
    offer_queries = []

    def count(execute, sql, params, many, context):
        if sql.startswith("SELECT") and f'FROM "{Offer._meta.db_table}"' in sql:
            offer_queries.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        page(client, case)
    assert len(offer_queries) == 1


def test_a_cached_form_carries_this_responses_csrf_token(aude, priya):
    case = make_case(priya)
    client = Client(enforce_csrf_checks=True)
    client.force_login(aude)
    action = f'action="{reverse("set_language")}"'
    tokens = []
    for _ in range(2):  # rendered, then served from the cache
        html = page(client, case)
        form = html[html.index(action) :]
        tokens.append(re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1))
    assert "csrf-" not in "".join(tokens) and tokens[0] != tokens[1]
    # The token of the cached copy is accepted by a protected form.
    response = client.post(
        reverse("audit:chain-verify"),
        {"csrfmiddlewaretoken": tokens[1], "next": reverse("cases:detail", args=[case.pk])},
    )
    assert response.status_code == 302


@pytest.fixture
def chinese_catalogue(settings):
    po = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
    mo = po.with_suffix(".mo")
    if not mo.exists() or mo.stat().st_mtime < po.stat().st_mtime:
        call_command("compilemessages", locale=["zh_Hans"], ignore_patterns=[".venv"], verbosity=0)
        trans_real._translations = {}
        trans_real._default = None


def test_each_language_gets_its_own_copy(browser_as, people, chinese_catalogue):
    case, _offer, _made = make_ready_case(people)
    client = browser_as("lena")
    url = reverse("cases:detail", kwargs={"pk": case.pk})
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    chinese = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    assert "Who has what to do" in english and "谁需要做什么" not in english
    assert "谁需要做什么" in chinese and "Who has what to do" not in chinese
    again = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Who has what to do" in again


def test_a_chain_verification_shows_at_once(browser_as, priya):
    from apps.audit.services import chain_verification_run
    from tests.audit.tampering import raw_update

    case = make_case(priya)
    client = browser_as("aude")
    failed = "The audit chain failed verification"
    assert failed not in page(client, case)
    row = case.history.model.objects.get(id=case.pk)
    raw_update(case.history.model, row.pk, "name", "Other")  # behind the application's back
    assert failed not in page(client, case)  # nothing tracked moved: served from the cache
    # A verification run is not a tracked write: the chain head does not move.
    chain_verification_run(actor=priya)
    assert failed in page(client, case)


def test_a_budget_and_a_bill_show_at_once(browser_as, priya):
    from tests.costs.factories import CLEAN, make_budget, make_import

    case = make_case(priya)
    client = browser_as("priya")
    no_budget = "No budget yet: procurement sets the total"
    assert no_budget in page(client, case)
    assert no_budget in page(client, case)  # served from the cache
    make_budget(priya, case)
    html = page(client, case)
    assert no_budget not in html and "Costs: no usage or bill imported yet." in html
    make_import(priya, case, ("2026-09", CLEAN))
    assert "Costs: no usage or bill imported yet." not in page(client, case)


def test_an_acceptance_plan_and_its_results_show_at_once(browser_as, people):
    from tests.acceptance.factories import approved_offer, make_plan

    case, offer = approved_offer(people)
    client = browser_as("tariq")
    no_plan = "Approved but no acceptance plan yet"
    assert no_plan in page(client, case)
    assert no_plan in page(client, case)  # served from the cache
    make_plan(people["tariq"], offer)
    assert no_plan not in page(client, case)


def test_a_flash_message_shows_once_on_a_cached_page(browser_as, priya):
    from django.contrib.messages import constants
    from django.contrib.messages.storage.base import Message
    from django.contrib.messages.storage.cookie import CookieStorage
    from django.http import HttpRequest

    case = make_case(priya)
    client = browser_as("priya")
    page(client, case)
    first = page(client, case)  # the whole page, from the cache
    # As a view that wrote nothing tracked would leave it for the next page.
    storage = CookieStorage(HttpRequest())
    message = Message(constants.SUCCESS, "Saved, bob")
    client.cookies[storage.cookie_name] = storage._encode([message])
    assert '<li class="success">Saved, bob</li>' in page(client, case)
    again = page(client, case)
    assert "Saved, bob" not in again
    strip = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')
    assert strip.sub("", again) == strip.sub("", first)


def test_a_renamed_role_shows_in_the_site_header(browser_as, priya):
    case = make_case(priya)
    client = browser_as("priya")
    page(client, case)
    assert " · Buying desk</span>" not in page(client, case)
    # No tracked write: an administrator renames priya's group.
    group = priya.groups.get()
    group.name = "Buying desk"
    group.save(update_fields=["name"])
    assert " · Buying desk</span>" in page(client, case)


def test_the_language_form_returns_to_the_path_asked_for(browser_as, priya):
    case = make_case(priya)
    client = browser_as("priya")
    url = reverse("cases:detail", kwargs={"pk": case.pk})
    page(client, case)
    html = client.get(url + "?from=list").content.decode()
    assert f'name="next" type="hidden" value="{url}?from=list"' in html
    assert f'name="next" type="hidden" value="{url}"' in page(client, case)


def test_a_viewer_who_lost_the_role_gets_no_cached_copy(browser_as, priya, lena):
    case = make_case(priya)
    client = browser_as("lena")
    page(client, case)
    page(client, case)  # the whole page is in the cache
    lena.groups.clear()
    response = client.get(reverse("cases:detail", kwargs={"pk": case.pk}))
    assert response.status_code == 403


def test_a_case_that_is_not_there_is_not_found_whatever_the_cache_holds(browser_as, priya):
    case = make_case(priya)
    client = browser_as("lena")
    page(client, case)
    missing = reverse("cases:detail", kwargs={"pk": case.pk + 1000})
    assert client.get(missing).status_code == 404
    assert client.get(missing).status_code == 404
