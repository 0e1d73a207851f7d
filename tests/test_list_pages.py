"""The case and vendor lists: filtered and sorted as the URL says, pages that keep both."""

import re

from django.urls import reverse

from apps.cases.models import ProcurementCase
from apps.cases.services import case_update
from tests.factories import make_case, make_offer, make_vendor

CASES = reverse("cases:list")
VENDORS = reverse("vendors:list")


def names(html: str, detail: str) -> list[str]:
    """The linked names of the list's rows, in order."""
    body = html[html.index("<tbody>") : html.index("</tbody>")]
    return re.findall(rf'<td><a href="/{detail}/\d+/">([^<]+)</a>', body)


def test_cases_filter_by_words_status_workload_and_owner(browser_as, priya, people):
    make_case(priya, name="Chat assistant", requirements="600 users")
    make_case(priya, name="Batch embeddings", workload="training")
    make_case(people["pablo"], name="Night jobs", requirements="Embeddings overnight")
    evaluating = make_case(priya, name="Fine-tuning")
    make_offer(priya, evaluating)  # the first offer moves it to evaluation
    client = browser_as("aude")

    def shown(**query) -> list[str]:
        response = client.get(CASES, query)
        assert response.status_code == 200
        return sorted(names(response.content.decode(), "cases"))

    assert shown(q="embeddings") == ["Batch embeddings", "Night jobs"]
    assert shown(status=ProcurementCase.Status.EVALUATING) == ["Fine-tuning"]
    assert shown(workload="training") == ["Batch embeddings"]
    assert shown(owner=people["pablo"].pk) == ["Night jobs"]
    assert shown(q="embeddings", owner=priya.pk) == ["Batch embeddings"]
    # A value the list does not know is refused in the form, not by an error page.
    response = client.get(CASES, {"status": "nonsense"})
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()


def test_cases_sort_by_each_column_both_ways(browser_as, priya):
    for name in ("Bravo", "Alpha", "Charlie"):
        make_case(priya, name=name)
    client = browser_as("priya")
    html = client.get(CASES).content.decode()
    assert names(html, "cases") == ["Charlie", "Alpha", "Bravo"]  # newest first
    html = client.get(CASES, {"sort": "name"}).content.decode()
    assert names(html, "cases") == ["Alpha", "Bravo", "Charlie"]
    assert '<th aria-sort="ascending"><a href="?sort=-name">Case' in html
    html = client.get(CASES, {"sort": "-name"}).content.decode()
    assert names(html, "cases") == ["Charlie", "Bravo", "Alpha"]
    assert 'aria-sort="descending"' in html
    for column in ("status", "workload", "offers", "owner", "opened", "-opened"):
        assert client.get(CASES, {"sort": column}).status_code == 200


def test_headings_and_pages_keep_the_filters(browser_as, priya):
    for n in range(53):
        make_case(priya, name=f"Case {n:02}")
    client = browser_as("priya")
    html = client.get(CASES, {"q": "Case", "sort": "name"}).content.decode()
    assert names(html, "cases")[0] == "Case 00" and len(names(html, "cases")) == 50
    assert 'href="?q=Case&amp;sort=name&amp;page=2"' in html
    assert '<input type="hidden" name="sort" value="name">' in html
    # Sorting again starts from the first page, with the words kept.
    page_two = client.get(CASES, {"q": "Case", "sort": "name", "page": 2}).content.decode()
    assert names(page_two, "cases") == ["Case 50", "Case 51", "Case 52"]
    assert 'href="?q=Case&amp;sort=-name"' in page_two


def test_vendors_filter_and_sort(browser_as, priya):
    tokyo = make_vendor(priya, name="Borealis", jurisdiction="Japan", regions="Tokyo")
    make_vendor(priya, name="Aurora", jurisdiction="Singapore", regions="Singapore")
    make_vendor(priya, name="Cumulus", jurisdiction="Malaysia", regions="Johor")
    case = make_case(priya)
    make_offer(priya, case, vendor=tokyo)
    client = browser_as("lena")

    def shown(**query) -> list[str]:
        response = client.get(VENDORS, query)
        assert response.status_code == 200
        return names(response.content.decode(), "vendors")

    assert shown(q="tokyo") == ["Borealis"]
    assert shown(jurisdiction="malay") == ["Cumulus"]
    assert shown(sort="-name")[:1] == ["Cumulus"]
    assert shown(sort="-offers")[0] == "Borealis"
    assert shown(q="nothing like it") == []
    assert "No vendor matches these filters." in client.get(VENDORS, {"q": "zzz"}).content.decode()


def test_a_renamed_case_sorts_by_its_new_name(browser_as, priya):
    first = make_case(priya, name="Zulu")
    make_case(priya, name="Mike")
    case_update(
        actor=priya,
        case=first,
        fields={"name": "Alpha"},
        reason="Renamed",
        expected_version=first.version,
    )
    html = browser_as("priya").get(CASES, {"sort": "name"}).content.decode()
    assert names(html, "cases") == ["Alpha", "Mike"]


def test_packets_are_paged_sorted_and_filtered_by_who_issued_them(
    browser_as, priya, people, settings, tmp_path
):
    from tests.packets.factories import make_stored_packet

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PACKET_SIGNING_DIR = tmp_path / "signing"
    case = make_case(priya)
    made = [make_stored_packet(priya, case) for _ in range(3)]
    made.append(make_stored_packet(people["aude"], case))
    client = browser_as("aude")
    url = reverse("packets:list", args=[case.pk])

    def numbers(**query) -> list[str]:
        response = client.get(url, query)
        assert response.status_code == 200
        html = response.content.decode()
        body = html[html.index("<tbody>") : html.index("</tbody>")]
        return re.findall(r"<td><strong>([^<]+)</strong>", body)

    newest_first = [packet.number for packet in reversed(made)]
    assert numbers() == newest_first
    assert numbers(sort="packet") == sorted(newest_first)
    assert numbers(issued_by=people["aude"].pk) == [made[-1].number]
    assert numbers(issued_by=priya.pk) == [packet.number for packet in reversed(made[:3])]
    assert client.get(url, {"issued_by": "nobody"}).status_code == 200
