from io import StringIO

from django.contrib.auth import get_user_model
from django.core.management import call_command

from apps.cases.models import ProcurementCase
from apps.offers.models import Offer
from apps.offers.selectors import offers_of_case
from apps.scorecards.models import Scorecard
from apps.sizing.selectors import demand_result
from apps.vendors.models import Vendor


def test_seed_demo_builds_the_case_once(db):
    out = StringIO()
    call_command("seed_demo", stdout=out)
    call_command("seed_demo", stdout=StringIO())
    assert ProcurementCase.objects.count() == 1
    assert Vendor.objects.count() == 3 and Offer.objects.count() == 3
    assert get_user_model().objects.count() == 5
    case = ProcurementCase.objects.get()
    result, error = demand_result(case.compute_demand)
    assert error == "" and result.total_cards == 64  # a 70B model on about 64 H200
    unconfirmed = [o for o in offers_of_case(case) if not o.spec_status.confirmed]
    assert [o.spec_status.missing for o in unconfirmed] == [("driver version",)]
    assert Scorecard.objects.values("reviewer").distinct().count() == 2
    assert "diligence-demo" in out.getvalue()


def test_every_demo_user_can_sign_in(db, client):
    call_command("seed_demo", stdout=StringIO())
    for username in ("priya", "lena", "tariq", "aude", "admin"):
        response = client.post(
            "/accounts/login/", {"username": username, "password": "diligence-demo"}
        )
        assert response.status_code == 302, username
        client.post("/accounts/logout/")
