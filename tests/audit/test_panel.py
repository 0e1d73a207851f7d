"""The case page's audit section and ``chain_status()`` (used by packets)."""

from django.urls import reverse

from apps.audit.selectors import chain_status
from apps.audit.services import chain_verification_run
from apps.cases.models import ProcurementCase
from tests.audit.tampering import raw_update
from tests.factories import make_case
from tests.pages import whole_case


def test_chain_status_before_and_after_verification(priya):
    make_case(priya)
    status = chain_status()
    assert status.verified is None and status.head_seq > 0
    chain_verification_run(actor=priya)
    make_case(priya)
    status = chain_status()
    assert status.verified is True
    assert status.rows_since == 1 and status.head_seq == status.verified_head_seq + 1


def test_the_case_page_shows_the_head_and_the_last_result(browser_as, priya):
    case = make_case(priya)
    page = whole_case(browser_as("lena"), case.pk).content.decode()
    assert chain_status().short_hash in page and "never run" in page
    assert reverse("audit:case-timeline", args=[case.pk]) in page
    assert reverse("audit:case-export", args=[case.pk]) not in page
    assert "Verify the chain now" not in page
    browser_as("aude").post(
        reverse("audit:chain-verify"), {"next": reverse("cases:detail", args=[case.pk])}
    )
    page = whole_case(browser_as("aude"), case.pk).content.decode()
    assert "intact" in page and "Verify the chain now" in page
    assert reverse("audit:case-export", args=[case.pk]) in page


def test_a_broken_chain_is_listed_as_missing_on_the_case_page(browser_as, priya):
    case = make_case(priya)
    row = ProcurementCase.history.model.objects.get(id=case.pk)
    raw_update(ProcurementCase.history.model, row.pk, "name", "Other")
    record, _report = chain_verification_run()
    assert not record.intact
    response = browser_as("priya").get(reverse("cases:detail", args=[case.pk]))
    missing = [line for tile in response.context["tiles"] for line in tile.missing]
    assert any("audit chain failed verification" in line for line in missing)
    assert f"history row {row.pk}" in " ".join(missing)
