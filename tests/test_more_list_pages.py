"""The other lists: bundles, harness tokens, checklist templates and the history pages,
filtered (and, where a list has columns to sort, sorted) as the URL says, paged keeping both."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.approvals.models import Approval
from apps.cases.services import case_update
from apps.contracts.models import ChecklistTemplate
from apps.core.services import tracked_create, tracked_update
from apps.evidence.models import EvidenceBundle, HarnessToken
from apps.evidence.services import harness_token_revoke
from tests.access.factories import make_matrix
from tests.assessments.factories import make_assessment
from tests.evidence.factories import make_bundle_record, make_token
from tests.factories import make_case, make_offer, make_vendor


def rows(html: str) -> list[str]:
    body = html[html.index("<tbody>") : html.index("</tbody>")]
    return re.findall(r"<tr[ >].*?</tr>", body, flags=re.S)


def cells(html: str, pattern: str) -> list[str]:
    """The first match of ``pattern`` in each row of the list, in order."""
    found = []
    for row in rows(html):
        match = re.search(pattern, row, flags=re.S)
        if match:
            found.append(match.group(1))
    return found


# --- evidence bundles ---------------------------------------------------------------


@pytest.fixture
def bundles(tariq):
    case = make_case(tariq)
    alpha = make_offer(tariq, case, vendor=make_vendor(tariq, name="Alpha Cloud"))
    bravo = make_offer(tariq, case, vendor=make_vendor(tariq, name="Bravo Compute"))
    token_a, token_b = make_token(tariq, case, alpha).record, make_token(tariq, case, bravo).record
    made = []
    for n in range(1, 6):
        offer, token = (alpha, token_a) if n % 2 else (bravo, token_b)
        verdict = "failed" if n == 4 else "verified"
        made.append(make_bundle_record(case, offer, token, n=n, verdict=verdict))
    start = timezone.now() - timedelta(days=1)
    for n, bundle in enumerate(made):  # received in order, one minute apart
        EvidenceBundle.objects.filter(pk=bundle.pk).update(
            received_at=start + timedelta(minutes=n), size=100 * (n + 1)
        )
    return {"case": case, "alpha": alpha, "bravo": bravo, "bundles": made}


def shas(html: str) -> list[str]:
    return cells(html, r'<code title="([0-9a-f]{64})">')


def test_bundles_filter_by_offer_verdict_and_prefix(browser_as, bundles):
    client = browser_as("priya")
    url = reverse("evidence:bundles", args=[bundles["case"].pk])
    every = [b.sha256 for b in reversed(bundles["bundles"])]
    assert shas(client.get(url).content.decode()) == every  # newest first

    def shown(**query) -> list[str]:
        response = client.get(url, query)
        assert response.status_code == 200
        return shas(response.content.decode())

    alpha = [b.sha256 for b in reversed(bundles["bundles"]) if b.offer_id == bundles["alpha"].pk]
    assert shown(offer=bundles["alpha"].pk) == alpha
    assert shown(verdict="failed") == [bundles["bundles"][3].sha256]
    assert shown(q=bundles["bundles"][2].sha256) == [bundles["bundles"][2].sha256]
    bravo_token = bundles["bundles"][1].token
    bravo = [b.sha256 for b in reversed(bundles["bundles"]) if b.token_id == bravo_token.pk]
    assert shown(q=f"{bravo_token.prefix}…") == bravo
    assert shown(q="zzzz") == []
    assert "No bundle matches these filters." in client.get(url, {"q": "zzzz"}).content.decode()
    # Values the list does not know are refused in the form, not by an error page.
    for bad in ({"verdict": "nonsense"}, {"offer": "999999"}):
        response = client.get(url, bad)
        assert response.status_code == 200
        assert "Select a valid choice" in response.content.decode()
    # A column the list cannot sort by leaves it in its usual order.
    assert shown(sort="sha256") == every


def test_bundles_sort_both_ways(browser_as, bundles):
    client = browser_as("aude")
    url = reverse("evidence:bundles", args=[bundles["case"].pk])
    oldest_first = [b.sha256 for b in bundles["bundles"]]
    html = client.get(url, {"sort": "received"}).content.decode()
    assert shas(html) == oldest_first
    assert '<th aria-sort="ascending"><a href="?sort=-received">Received' in html
    assert shas(client.get(url, {"sort": "-received"}).content.decode()) == oldest_first[::-1]
    assert shas(client.get(url, {"sort": "-size"}).content.decode()) == oldest_first[::-1]
    by_offer = shas(client.get(url, {"sort": "offer"}).content.decode())
    alpha = {b.sha256 for b in bundles["bundles"] if b.offer_id == bundles["alpha"].pk}
    assert set(by_offer[:3]) == alpha and set(by_offer[3:]).isdisjoint(alpha)
    for column in ("run", "verdict", "token", "-offer"):
        assert client.get(url, {"sort": column}).status_code == 200


def test_bundle_pages_keep_the_filter_and_do_not_grow_in_queries(
    browser_as, bundles, django_assert_max_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    case, alpha = bundles["case"], bundles["alpha"]
    token = HarnessToken.objects.filter(offer=alpha).first()
    client = browser_as("tariq")
    url = reverse("evidence:bundles", args=[case.pk])
    with CaptureQueriesContext(connection) as few:
        assert client.get(url, {"offer": alpha.pk}).status_code == 200
    for n in range(10, 62):
        make_bundle_record(case, alpha, token, n=n)
    with django_assert_max_num_queries(len(few)):
        html = client.get(url, {"offer": alpha.pk, "sort": "size"}).content.decode()
    assert len(shas(html)) == 50
    assert f'href="?offer={alpha.pk}&amp;sort=size&amp;page=2"' in html
    page_two = client.get(url, {"offer": alpha.pk, "sort": "size", "page": 2}).content.decode()
    assert len(shas(page_two)) == 55 - 50
    assert f'href="?offer={alpha.pk}&amp;sort=-size"' in page_two


def test_the_evidence_page_links_the_bundle_list(browser_as, bundles):
    case = bundles["case"]
    html = browser_as("lena").get(reverse("evidence:case", args=[case.pk])).content.decode()
    assert reverse("evidence:bundles", args=[case.pk]) in html


def test_uploads_not_stored_filter_sort_and_page_keeping_the_filter(browser_as, tariq):
    from apps.evidence.models import EvidenceUpload

    case = make_case(tariq)
    token = make_token(tariq, case).record
    start = timezone.now() - timedelta(hours=1)
    for n in range(45):
        failed = n % 3 == 0
        EvidenceUpload.objects.create(
            token=token,
            case=case,
            sha256=f"{n:064x}",
            size=100 + n,
            storage_name="",
            state=EvidenceUpload.State.FAILED if failed else EvidenceUpload.State.REFUSED,
            received_at=start + timedelta(seconds=n),
            finished_at=start + timedelta(seconds=n),
            refusal=f"Reason {n:02d}.",
            refusal_status=400,
        )
    client = browser_as("lena")
    url = reverse("evidence:case", args=[case.pk])

    def reasons(**query) -> list[int]:
        response = client.get(url, query)
        assert response.status_code == 200
        html = response.content.decode()
        html = html[html.index('id="uploads"') :]
        return [int(n) for n in re.findall(r"<td>Reason (\d\d)\.", html)]

    assert reasons() == list(range(44, 24, -1))  # newest first, twenty a page
    failed = [n for n in range(45) if n % 3 == 0]
    assert reasons(state="failed") == failed[::-1]
    assert reasons(state="failed", sort="size") == failed
    assert reasons(q=f"{7:064x}") == [7]
    html = client.get(url, {"state": "refused", "sort": "-size"}).content.decode()
    assert 'href="?state=refused&amp;sort=-size&amp;page=2"' in html
    refused = [n for n in range(45) if n % 3][::-1]
    assert reasons(state="refused", sort="-size", page=2) == refused[20:30]
    empty = client.get(url, {"q": "ffff"}).content.decode()
    assert "No upload matches these filters." in empty
    bad = client.get(url, {"state": "verified"})
    assert bad.status_code == 200 and "Select a valid choice" in bad.content.decode()


# --- harness tokens -----------------------------------------------------------------


@pytest.fixture
def tokens(tariq, people):
    case = make_case(tariq)
    alpha = make_offer(tariq, case, vendor=make_vendor(tariq, name="Alpha Cloud"))
    made = {
        "nightly": make_token(tariq, case, alpha, label="Nightly run").record,
        "soak": make_token(people["ada"], case, label="Soak test").record,
        "old": make_token(tariq, case, label="Old run").record,
        "revoked": make_token(tariq, case, alpha, label="Withdrawn").record,
    }
    HarnessToken.objects.filter(pk=made["old"].pk).update(
        expires_at=timezone.now() - timedelta(hours=1)
    )
    harness_token_revoke(actor=tariq, token=made["revoked"], reason="Leaked in a log")
    return {"case": case, "alpha": alpha, **made}


def labels(html: str) -> list[str]:
    return cells(html, r"<td><code>[^<]+…</code></td><td>[^<]*</td><td>([^<]*)</td>")


def test_tokens_filter_by_words_state_offer_and_issuer(browser_as, tokens, people):
    client = browser_as("aude")
    url = reverse("evidence:tokens", args=[tokens["case"].pk])

    def shown(**query) -> list[str]:
        response = client.get(url, query)
        assert response.status_code == 200
        return sorted(labels(response.content.decode()))

    assert shown() == ["Nightly run", "Old run", "Soak test", "Withdrawn"]
    assert shown(q="run") == ["Nightly run", "Old run"]
    assert shown(q=tokens["soak"].prefix) == ["Soak test"]
    assert shown(state="active") == ["Nightly run", "Soak test"]
    assert shown(state="expired") == ["Old run"]
    assert shown(state="revoked") == ["Withdrawn"]
    assert shown(offer=tokens["alpha"].pk) == ["Nightly run", "Withdrawn"]
    assert shown(created_by=people["ada"].pk) == ["Soak test"]
    assert "No token matches these filters." in client.get(url, {"q": "zzz"}).content.decode()
    response = client.get(url, {"state": "lost"})
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()


def test_tokens_sort_both_ways_and_page_keeping_the_filter(browser_as, tokens, tariq):
    client = browser_as("tariq")
    url = reverse("evidence:tokens", args=[tokens["case"].pk])
    html = client.get(url, {"sort": "label"}).content.decode()
    assert labels(html) == ["Nightly run", "Old run", "Soak test", "Withdrawn"]
    assert labels(client.get(url, {"sort": "-label"}).content.decode()) == [
        "Withdrawn",
        "Soak test",
        "Old run",
        "Nightly run",
    ]
    for column in ("prefix", "offer", "by", "expires", "used", "-used"):
        assert client.get(url, {"sort": column}).status_code == 200
    for n in range(51):
        make_token(tariq, tokens["case"], label=f"Batch {n:02}")
    html = client.get(url, {"q": "Batch", "sort": "label"}).content.decode()
    assert labels(html)[0] == "Batch 00" and len(labels(html)) == 50
    assert 'href="?q=Batch&amp;sort=label&amp;page=2"' in html
    page_two = client.get(url, {"q": "Batch", "sort": "label", "page": 2}).content.decode()
    assert labels(page_two) == ["Batch 50"]


def test_issuing_a_token_from_a_filtered_list_still_shows_it_once(browser_as, tokens):
    client = browser_as("tariq")
    url = reverse("evidence:tokens", args=[tokens["case"].pk])
    response = client.post(f"{url}?state=active", {"ttl_hours": 2, "label": "Fresh"})
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    assert "Fresh" in labels(response.content.decode())


# --- checklist templates --------------------------------------------------------------


def publish(actor, number: int, note: str) -> ChecklistTemplate:
    return tracked_create(
        ChecklistTemplate, actor=actor, number=number, note=note, published_by=actor
    )


def versions(html: str) -> list[str]:
    return cells(html, r"<strong>Version (\d+)</strong>")


def test_templates_filter_sort_and_page(browser_as, lena, people):
    first = ChecklistTemplate.objects.order_by("-number").first().number
    publish(lena, first + 1, "Audit rights tightened")
    publish(people["aude"], first + 2, "Wording of the zebra clause")
    client = browser_as("priya")
    url = reverse("contracts:templates")
    html = client.get(url).content.decode()
    assert versions(html)[:2] == [str(first + 2), str(first + 1)]  # newest first
    assert html.count('<span class="badge ok">latest</span>') == 1
    assert versions(client.get(url, {"q": "ZEBRA"}).content.decode()) == [str(first + 2)]
    by_lena = client.get(url, {"published_by": lena.pk}).content.decode()
    assert versions(by_lena) == [str(first + 1)]
    # A version's clauses are searched too: the shipped version has an audit-rights clause.
    assert str(first) in versions(client.get(url, {"q": "audit"}).content.decode())
    ascending = versions(client.get(url, {"sort": "version"}).content.decode())
    assert ascending == sorted(ascending, key=int) and ascending[-1] == str(first + 2)
    for column in ("by", "published", "checklists", "-checklists"):
        assert client.get(url, {"sort": column}).status_code == 200
    response = client.get(url, {"published_by": "nobody"})
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert "No version matches these filters." in client.get(url, {"q": "zzz"}).content.decode()
    for n in range(first + 3, first + 53):
        publish(lena, n, f"Revision {n}")
    html = client.get(url, {"published_by": lena.pk}).content.decode()
    assert len(versions(html)) == 50
    assert f'href="?published_by={lena.pk}&amp;page=2"' in html
    page_two = client.get(url, {"published_by": lena.pk, "page": 2}).content.decode()
    assert versions(page_two) == [str(first + 1)]


# --- history pages --------------------------------------------------------------------


def whos(html: str) -> list[str]:
    return cells(html, r"<td>[^<]+</td><td>([^<]+)</td>")


def test_access_history_filters_by_person_kind_and_dates(browser_as, priya, tariq, people):
    case = make_case(priya)
    make_matrix(tariq, case, reason="First draft")
    make_matrix(people["ada"], case, reason="Reviewed", controls=[])
    client = browser_as("lena")
    url = reverse("access:history", args=[case.pk])
    everyone = set(whos(client.get(url).content.decode()))
    assert everyone == {"ada", "tariq"}
    assert set(whos(client.get(url, {"user": tariq.pk}).content.decode())) == {"tariq"}
    html = client.get(url, {"record_type": "access.accessmatrix"}).content.decode()
    assert {row.count("access matrix") > 0 for row in rows(html)} == {True}
    tomorrow = (timezone.localdate() + timedelta(days=1)).isoformat()
    html = client.get(url, {"since": tomorrow}).content.decode()
    assert whos(html) == [] and "No history matches." in html
    response = client.get(url, {"since": tomorrow, "until": "2020-01-01"})
    assert response.status_code == 200
    assert "The end of the range is before its start." in response.content.decode()
    response = client.get(url, {"user": "nobody", "record_type": "nothing.like.it"})
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()


def test_assessment_history_filters_by_kind_and_person(browser_as, priya, lena):
    case = make_case(priya)
    assessment = make_assessment(lena, case)
    client = browser_as("aude")
    url = reverse("assessments:history", args=[assessment.pk])
    html = client.get(url).content.decode()
    assert "Data-export assessment" in html
    only = client.get(url, {"record_type": "assessments.dataexportassessment"}).content.decode()
    assert len(rows(only)) == 1
    assert whos(client.get(url, {"user": priya.pk}).content.decode()) == []


def test_approval_history_is_filtered_and_paged_keeping_the_filter(browser_as, priya, people):
    case = make_case(priya)
    aude = people["aude"]
    now = timezone.now()
    for n in range(52):
        approval = tracked_create(
            Approval,
            actor=aude,
            case=case,
            decision=Approval.Decision.REJECTED,
            decided_by=aude,
            decided_at=now,
            comment=f"Not yet, {n}",
        )
    tracked_update(approval, actor=people["ada"], reason="Marked stale", fields={"stale_at": now})
    client = browser_as("lena")
    url = reverse("approvals:case", args=[case.pk])
    html = client.get(url, {"user": aude.pk}).content.decode()
    history = html[html.index('id="history"') :]
    assert "Marked stale" not in history
    assert f'href="?user={aude.pk}&amp;page=2"' in history
    page_two = client.get(url, {"user": aude.pk, "page": 2}).content.decode()
    assert "Page 2 of 2" in page_two
    only_ada = client.get(url, {"user": people["ada"].pk}).content.decode()
    assert "Marked stale" in only_ada[only_ada.index('id="history"') :]
    response = client.get(url, {"until": "not a date"})
    assert response.status_code == 200 and "Enter a valid date." in response.content.decode()


def test_record_history_is_filtered_and_paged_keeping_the_filter(browser_as, priya, people):
    case = make_case(priya, name="Version 0")
    for n in range(1, 53):
        case = case_update(
            actor=priya,
            case=case,
            fields={"name": f"Version {n}"},
            reason=f"Rename {n}",
            expected_version=case.version,
        )
    client = browser_as("aude")
    url = reverse("audit:record-timeline", args=["cases.procurementcase", case.pk])
    html = client.get(url, {"user": priya.pk}).content.decode()
    assert f'href="?user={priya.pk}&amp;page=2"' in html
    assert 'name="record_type"' not in html  # one kind of record: nothing to choose
    # A filter matching nothing shows an empty list, not "no such history".
    response = client.get(url, {"user": people["aude"].pk})
    assert response.status_code == 200 and "No history matches." in response.content.decode()
    response = client.get(url, {"user": "nobody"})
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()


def test_every_filter_of_these_lists_is_labelled(browser_as, tariq, lena):
    from tests.browser.test_labels import unlabelled

    case = make_case(tariq)
    make_matrix(tariq, case, reason="First draft")
    assessment = make_assessment(lena, case)
    urls = [
        reverse("evidence:bundles", args=[case.pk]),
        reverse("evidence:tokens", args=[case.pk]),
        reverse("contracts:templates"),
        reverse("access:history", args=[case.pk]),
        reverse("approvals:case", args=[case.pk]),
        reverse("assessments:history", args=[assessment.pk]),
        reverse("audit:record-timeline", args=["cases.procurementcase", case.pk]),
    ]
    client = browser_as("tariq")
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert 'class="list-filters"' in html, url
        assert unlabelled(html) == [], url
