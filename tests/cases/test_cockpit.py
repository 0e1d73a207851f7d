"""The case cockpit: where the case stands, one tile per area, who mends what, and each
area's details one click away."""

import copy
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.casework.panels import AREAS
from tests.approvals.factories import make_ready_case
from tests.factories import FULL_SPEC, make_case, make_offer
from tests.sizing.test_sizing_pages import DEMAND

ROLES = ("priya", "lena", "tariq", "aude", "ada")


@pytest.fixture(scope="module")
def _ready(module_people):
    return make_ready_case(module_people)


@pytest.fixture
def ready(_ready, people):
    """The ready case (three offers, the first through every gate), built once for the
    module; each test its copy."""
    return copy.deepcopy(_ready)


def cockpit(client, case) -> str:
    response = client.get(reverse("cases:detail", args=[case.pk]))
    assert response.status_code == 200
    return response.content.decode()


def tile_state(html: str, case, area: str) -> str:
    """The state class of one area's tile."""
    href = re.escape(reverse("cases:area", args=[case.pk, area]))
    found = re.search(rf'<li class="tile tile-(\w+)">\s*<h3><a href="{href}">', html)
    assert found, f"no tile for {area}"
    return found.group(1)


def steps(html: str) -> list[tuple[str, str]]:
    return re.findall(
        r'<li class="step-(\w+)"[^>]*><span class="step-mark"[^>]*>[^<]*</span> (.+?)<', html
    )


def test_the_stepper_shows_where_the_case_stands_and_what_moves_it_on(browser_as, priya):
    case = make_case(priya)
    client = browser_as("priya")
    html = cockpit(client, case)
    assert steps(html) == [
        ("current", "Draft"),
        ("upcoming", "Evaluating"),
        ("upcoming", "Pending approval"),
        ("upcoming", "Approved"),
        ("upcoming", "Accepted"),
    ]
    assert "Add the first offer: the case then moves to evaluation." in html

    make_offer(priya, case)
    html = cockpit(client, case)
    assert steps(html)[:2] == [("done", "Draft"), ("current", "Evaluating")]
    assert 'aria-current="step"' in html
    assert "submit the case for approval" in html


def test_a_tile_turns_green_once_its_area_is_mended(browser_as, priya):
    case = make_case(priya)
    make_offer(priya, case, spec=FULL_SPEC)
    client = browser_as("tariq")
    html = cockpit(client, case)
    assert tile_state(html, case, "sizing") == "todo"
    assert "No compute demand yet" in html

    saved = client.post(
        f"{reverse('sizing:calculator')}?case={case.pk}", {**DEMAND, "case": case.pk}
    )
    assert saved.status_code == 302
    html = cockpit(client, case)
    assert tile_state(html, case, "sizing") == "done"
    assert "No compute demand yet" not in html


def test_every_area_has_a_tile_for_a_role_that_sees_everything(browser_as, ready):
    case, _offer, _made = ready
    html = cockpit(browser_as("ada"), case)
    for area in AREAS:
        assert tile_state(html, case, area) in {"done", "open", "todo", "idle"}
    # The areas show in the case's order: sizing first, the audit trail last.
    shown = re.findall(rf'<h3><a href="/cases/{case.pk}/area/([a-z-]+)/">', html)
    assert shown == list(AREAS)


def test_what_is_missing_links_the_form_only_for_those_who_may_fill_it_in(browser_as, priya):
    case = make_case(priya)
    make_offer(priya, case)  # no clause checklist yet: the legal reviewer's to mend
    offer = case.offers.get()
    # The line links where the checklist is started: the offer's page, not the area's list.
    fix = f'href="{reverse("offers:detail", args=[offer.pk])}"'
    legal = cockpit(browser_as("lena"), case)
    assert fix in legal and "no contract clause checklist yet" in legal
    # Every line of the area has its own page: no "Mend it" sends elsewhere.
    assert "Mend it: Contracts" not in legal
    auditor = cockpit(browser_as("aude"), case)
    assert "Mend it: Contracts" not in auditor
    assert "Mended by: Legal reviewer" in auditor


def test_who_has_what_to_do_names_each_role_with_its_open_areas(browser_as, priya):
    case = make_case(priya)
    make_offer(priya, case)
    html = cockpit(browser_as("aude"), case)
    section = html[html.index("Who has what to do") :]
    assert "<dt>Legal reviewer</dt>" in section
    legal = section[section.index("<dt>Legal reviewer</dt>") :].split("</dd>")[0]
    assert f'href="/cases/{case.pk}/area/contracts/"' in legal
    assert f'href="/cases/{case.pk}/area/sizing/"' not in legal


@pytest.mark.parametrize("area", list(AREAS))
def test_each_area_page_shows_its_details_and_what_it_lacks(browser_as, ready, area):
    case, _offer, _made = ready
    client = browser_as("ada")
    response = client.get(reverse("cases:area", args=[case.pk, area]))
    assert response.status_code == 200
    html = response.content.decode()
    assert f'<a href="/cases/{case.pk}/area/{area}/" aria-current="page">' in html
    assert f"<h2>{response.context['panel'].title} " in html


def test_an_area_hidden_from_a_role_is_neither_in_its_tabs_nor_open_to_it(
    browser_as, priya, people
):
    from django.contrib.auth.models import Group

    case = make_case(priya)
    # A role without the access matrix: the auditor, stripped of it for this test.
    auditor = Group.objects.get(name=people["aude"].groups.get().name)
    auditor.permissions.remove(*auditor.permissions.filter(codename="view_accessmatrix"))
    client = browser_as("aude")
    html = cockpit(client, case)
    assert f"/cases/{case.pk}/area/access/" not in html
    assert client.get(reverse("cases:area", args=[case.pk, "access"])).status_code == 403
    assert client.get(f"/cases/{case.pk}/area/no-such-area/").status_code == 404
    assert client.get(reverse("cases:area", args=[case.pk + 1000, "costs"])).status_code == 404


@pytest.mark.parametrize("username", ROLES)
def test_no_link_from_the_cockpit_leads_to_a_refusal_or_an_error(browser_as, ready, username):
    case, _offer, _made = ready
    client = browser_as(username)
    html = cockpit(client, case)
    main = html[html.index("<main") : html.index("</main>")]
    links = {href for href in re.findall(r'href="(/[^"#]*)', main)}
    assert links
    for href in sorted(links):
        status = client.get(href.replace("&amp;", "&")).status_code
        assert status in (200, 302), (href, status)


def test_the_cockpit_reads_a_fixed_number_of_queries_whatever_the_offers(
    browser_as, people, priya, settings
):
    settings.CASE_STANDING_STORED = False  # the page computed on every view
    case, _offer, _made = make_ready_case(people, offers=1)
    client = browser_as("tariq")
    cockpit(client, case)

    def counted() -> int:
        with CaptureQueriesContext(connection) as ctx:
            cockpit(client, case)
        return len(ctx.captured_queries)

    few = counted()
    for _ in range(4):
        make_offer(priya, case, spec=FULL_SPEC)
    assert counted() == few


def test_each_missing_line_links_the_form_that_mends_it_for_those_who_may_open_it(
    browser_as, priya
):
    case = make_case(priya)
    offer = make_offer(priya, case)  # no declared spec, no checklist, not scored
    spec = f'<a href="{reverse("offers:spec", args=[offer.pk])}">{offer.vendor}: declared spec'
    scorecard = f'<a href="{reverse("scorecards:scorecard", args=[offer.pk])}">Not scored yet'
    start = f'<a href="{reverse("offers:detail", args=[offer.pk])}">{offer.vendor}: no contract'
    tech_lead = cockpit(browser_as("tariq"), case)
    assert spec in tech_lead and start in tech_lead
    procurement = cockpit(browser_as("priya"), case)
    assert scorecard in procurement and spec not in procurement  # only a tech lead declares it
    assert f"{offer.vendor}: declared spec unconfirmed" in procurement  # the line is still read
