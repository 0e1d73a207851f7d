"""The case page serves its summary and panels from the cache, and never a stale copy.

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

from apps.accounts.roles import Role
from apps.cases.panels import case_overview
from apps.cases.services import case_update
from apps.offers.models import Offer
from tests.access.factories import make_matrix
from tests.approvals.factories import make_ready_case, make_verification
from tests.contracts.factories import set_statuses
from tests.factories import FULL_SPEC, make_case, make_offer


def page(client, case) -> str:
    response = client.get(reverse("cases:detail", kwargs={"pk": case.pk}))
    assert response.status_code == 200
    return response.content.decode()


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
    assert "every gate held" in html
    for marker in ("Contract clause checklists", "Data-export self-assessment", "Audit packets"):
        assert marker in html


def test_the_cached_page_equals_a_fresh_render(browser_as, people, settings):
    case, _offer, _made = make_ready_case(people)
    client = browser_as("lena")
    page(client, case)
    cached = page(client, case)
    settings.CASE_PAGE_CACHE_SECONDS = 0
    fresh = page(client, case)
    # Only the per-response CSRF tokens differ.
    strip = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')
    assert strip.sub("", cached) == strip.sub("", fresh)


def test_a_write_by_another_user_shows_at_once(browser_as, people, priya, lena):
    case, offer, _made = make_ready_case(people)
    client = browser_as("tariq")
    assert "every gate held" in page(client, case)

    # lena reopens a clause: the checklist panel and the approval gates change.
    checklist = offer.clause_checklist
    item = checklist.items.order_by("number").first()
    set_statuses(lena, checklist, {item.key: "missing"}, reason="Clause removed in the new draft")
    html = page(client, case)
    assert "every gate held" not in html
    assert f"{item.number}. {item.title}" in html

    # priya edits the case's requirements: the summary changes.
    case.refresh_from_db()
    case_update(
        actor=priya,
        case=case,
        fields={"requirements": "Now 900 concurrent users"},
        reason="New forecast",
        expected_version=case.version,
    )
    assert "Now 900 concurrent users" in page(client, case)

    # A new offer appears in the table and in every panel.
    new = make_offer(priya, case, spec=FULL_SPEC)
    html = page(client, case)
    assert f'href="{reverse("offers:detail", kwargs={"pk": new.pk})}"' in html
    assert html.count(str(new.vendor)) >= 4


def test_a_change_of_role_changes_what_is_shown(browser_as, priya):
    case = make_case(priya)  # no offers: the three-offer minimum does not hold
    client = browser_as("priya")
    waive = reverse("cases:waive", kwargs={"pk": case.pk})
    start = "Start the data-export assessment"
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
    client = browser_as("lena")
    assert "Priya" in page(client, case)
    # Users are not tracked records: the page notices all the same.
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
    assert "every gate held" in page(client, case)
    assert "every gate held" in page(client, case)  # served from the cache

    later = timezone.now() + timedelta(minutes=10)
    monkeypatch.setattr(timezone, "now", lambda: later)
    html = page(client, case)
    assert "every gate held" not in html and "1 gate not held" in html


def test_the_page_context_matches_the_uncached_overview(browser_as, people, tariq):
    case, _offer, _made = make_ready_case(people)
    client = browser_as("tariq")
    response = client.get(reverse("cases:detail", kwargs={"pk": case.pk}))  # rendered now
    overview = case_overview(case, actor=tariq)
    assert response.context["missing"] == overview["missing"]
    assert [p.title for p in response.context["panels"]] == [p.title for p in overview["panels"]]
    # The whole page served from the cache shows the same list and panels, in order.
    html = page(client, case)
    assert re.findall(r'<li class="warn">(.*?)</li>', html) == [
        escape(item) for item in overview["missing"]
    ]
    assert re.findall(r'<section class="panel" id="panel-\d+">\n<h2>(.*?)</h2>', html) == [
        escape(p.title) for p in overview["panels"]
    ]


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
    action = f'action="{reverse("packets:request", kwargs={"pk": case.pk})}"'
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
    assert "Contract clause checklists" in english and "合同必查条款清单" not in english
    assert "合同必查条款清单" in chinese and "Contract clause checklists" not in chinese
    again = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Contract clause checklists" in again


def test_a_chain_verification_shows_at_once(browser_as, priya):
    from apps.audit.services import chain_verification_run

    case = make_case(priya)
    client = browser_as("aude")
    assert "never run" in page(client, case)
    assert "never run" in page(client, case)  # served from the cache
    # A verification run is not a tracked write: the chain head does not move.
    chain_verification_run(actor=priya)
    html = page(client, case)
    assert "never run" not in html and "intact" in html


def test_a_budget_and_a_bill_show_at_once(browser_as, priya):
    from tests.costs.factories import CLEAN, make_budget, make_import

    case = make_case(priya)
    client = browser_as("priya")
    assert "No budget yet." in page(client, case)
    assert "No budget yet." in page(client, case)  # served from the cache
    make_budget(priya, case)
    html = page(client, case)
    assert "No budget yet." not in html and "1,900,000.00 USD" in html
    make_import(priya, case, ("2026-09", CLEAN))
    assert "2026-09: 145,252.00" in page(client, case)


def test_an_acceptance_plan_and_its_results_show_at_once(browser_as, people):
    from tests.acceptance.factories import approved_offer, make_plan, record_faults

    case, offer = approved_offer(people)
    client = browser_as("tariq")
    assert "No acceptance plan yet." in page(client, case)
    assert "No acceptance plan yet." in page(client, case)  # served from the cache
    plan = make_plan(people["tariq"], offer)
    html = page(client, case)
    assert "No acceptance plan yet." not in html
    assert reverse("acceptance:plan", kwargs={"pk": plan.pk}) in html
    stability = 'Stability and recovery: <span class="badge {}">'
    assert stability.format("warn") in html
    record_faults(people["tariq"], plan)
    html = page(client, case)
    assert stability.format("warn") not in html and stability.format("ok") in html


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


def test_a_panel_that_is_not_cacheable_is_computed_on_every_view(browser_as, priya, monkeypatch):
    from apps.audit import panels as audit_panels
    from apps.audit.services import chain_verification_run
    from apps.cases import page as case_page
    from apps.cases import views

    case = make_case(priya)
    frozen = case_page.page_versions()
    # The key stands still: only a panel computed on the view can show the run below.
    monkeypatch.setattr(views, "page_versions", lambda: frozen)
    monkeypatch.setattr(audit_panels, "CASE_PANEL_CACHEABLE", False)
    client = browser_as("aude")
    page(client, case)
    assert "never run" in page(client, case)
    chain_verification_run(actor=priya)
    html = page(client, case)
    assert "never run" not in html and "intact" in html
    # The other panels still come from the cache: the same key, the same copy.
    assert "Contract clause checklists" in html


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
