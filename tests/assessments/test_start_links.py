"""A link to start a data-export assessment opens the one that exists already, and an
offer outside the case assessment's jurisdiction is offered an assessment of its own."""

import pytest
from django.urls import reverse

from apps.assessments.models import DataExportAssessment
from tests.assessments.factories import make_assessment
from tests.factories import make_case, make_offer, make_vendor

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_starting_the_case_assessment_again_opens_the_one_there_is(priya, lena, browser_as):
    case = make_case(priya)
    assessment = make_assessment(lena, case)
    client = browser_as("lena")
    response = client.get(reverse("assessments:create", args=[case.pk]), follow=True)
    assert response.redirect_chain == [(reverse("assessments:detail", args=[assessment.pk]), 302)]
    assert "This already has a data-export assessment: here it is." in (response.content.decode())
    assert DataExportAssessment.objects.filter(case=case).count() == 1


def test_an_offers_own_assessment_is_opened_too(priya, lena, browser_as):
    case = make_case(priya)
    offer = make_offer(priya, case)
    own = make_assessment(lena, case, offer=offer)
    response = browser_as("lena").get(
        reverse("assessments:create", args=[case.pk]), {"offer": offer.pk}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("assessments:detail", args=[own.pk])


def test_an_offer_outside_the_case_assessment_is_sent_to_an_assessment_of_its_own(
    priya, lena, browser_as
):
    case = make_case(priya)
    offer = make_offer(priya, case, vendor=make_vendor(priya, jurisdiction="United States"))
    make_assessment(lena, case, jurisdiction="Singapore")
    start = f"{reverse('assessments:create', args=[case.pk])}?offer={offer.pk}"

    case_page = browser_as("lena").get(reverse("cases:detail", args=[case.pk])).content.decode()
    assert f'href="{start}"' in case_page
    approval = browser_as("lena").get(reverse("approvals:case", args=[case.pk])).content.decode()
    assert f'href="{start}"' in approval
    bare = f'href="{reverse("assessments:create", args=[case.pk])}"'
    assert bare not in case_page and bare not in approval

    form = browser_as("lena").get(start)
    assert form.status_code == 200 and form.context["offer"] == offer
