"""Two-factor sign-in: setting it up, the code after the password, recovery codes, the
organisation's policy by role, and decisions and waivers refused without it."""

import time

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import Client
from django.urls import reverse
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp.util import random_hex
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from apps.accounts.twofactor import TwoFactorMiddleware
from apps.accounts.views import PENDING_KEY_SESSION_KEY
from apps.approvals.models import Approval
from apps.approvals.services import case_submit_for_approval
from apps.contracts.models import RedFlagWaiver
from apps.contracts.services import red_flag_waive
from apps.core.roles import roles_of
from apps.core.second_factor import is_required_for
from tests.contracts.factories import item, make_checklist, make_legal, set_statuses
from tests.factories import FULL_SPEC, make_case, make_offer

MIDDLEWARE_PATH = f"{TwoFactorMiddleware.__module__}.{TwoFactorMiddleware.__name__}"


def code_for(device: TOTPDevice, *, ahead: int = 0) -> str:
    """The code the person's app shows now (or ``ahead`` steps later)."""
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time() + ahead * device.step
    return f"{totp.token():0{device.digits}d}"


def enrol(user, codes=("aaaa2222", "bbbb3333")) -> TOTPDevice:
    device = TOTPDevice.objects.create(user=user, name="phone", key=random_hex(20), confirmed=True)
    recovery = StaticDevice.objects.create(user=user, name="recovery", confirmed=True)
    for code in codes:
        StaticToken.objects.create(device=recovery, token=code)
    return device


def sign_in(client: Client, username: str):
    return client.post(reverse("login"), {"username": username, "password": "pw"})


def verify(client: Client, code: str, next_url: str = ""):
    return client.post(reverse("accounts:two_factor_verify"), {"code": code, "next": next_url})


def is_verified(client: Client) -> bool:
    return "otp_device_id" in client.session


@pytest.fixture
def decidable(people):
    case = make_case(people["priya"])
    offer = make_offer(people["priya"], case, spec=FULL_SPEC)
    case_submit_for_approval(actor=people["priya"], case=case)
    case.refresh_from_db()
    return case, offer


@pytest.fixture
def red_flag(people):
    lena = people["lena"]
    checklist = make_checklist(lena)
    set_statuses(lena, checklist, {"sla": "missing"})
    return item(checklist, "sla")


@pytest.fixture
def without_the_middleware(settings):
    """The page's own check, as it stands if a path ever slipped past the middleware."""
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != MIDDLEWARE_PATH]


# --- Setting it up ---------------------------------------------------------------------


def test_setting_up_through_the_pages(client, tariq):
    sign_in(client, "tariq")
    page = client.get(reverse("accounts:two_factor"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Set up two-factor sign-in" in html
    assert "otpauth://totp/Diligence%3Atariq" in html
    key = client.session[PENDING_KEY_SESSION_KEY]
    pending = TOTPDevice(user=tariq, key=key)
    assert page.context["secret"].replace(" ", "") in pending.config_url

    wrong = client.post(reverse("accounts:two_factor"), {"action": "confirm", "code": "000000"})
    if code_for(pending) != "000000":
        assert wrong.status_code == 200
        assert "That code is not right" in wrong.content.decode()
        assert not TOTPDevice.objects.filter(user=tariq).exists()

    shown = client.post(
        reverse("accounts:two_factor"), {"action": "confirm", "code": code_for(pending)}
    )
    assert shown.status_code == 200
    codes = shown.context["codes"]
    assert len(codes) == 10 and len(set(codes)) == 10
    assert "shown only this once" in shown.content.decode()
    device = TOTPDevice.objects.get(user=tariq)
    assert device.confirmed and device.key == key
    stored = set(StaticToken.objects.filter(device__user=tariq).values_list("token", flat=True))
    assert stored == set(codes)
    # This session passed the code it was set up with; the pages open.
    assert is_verified(client)
    assert client.get(reverse("approvals:dashboard")).status_code == 200
    # The same page now says it is on, and shows no secret and no codes again.
    again = client.get(reverse("accounts:two_factor"))
    assert "Turn off two-factor sign-in" in again.content.decode()
    assert key not in again.content.decode() and codes[0] not in again.content.decode()


def test_turning_it_off_needs_a_current_code(client, tariq):
    device = enrol(tariq)
    sign_in(client, "tariq")
    verify(client, code_for(device))
    refused = client.post(reverse("accounts:two_factor"), {"action": "remove", "code": "12"})
    assert "That code is not right" in refused.content.decode()
    assert TOTPDevice.objects.filter(user=tariq).exists()
    TOTPDevice.objects.filter(pk=device.pk).update(throttling_failure_count=0)  # no waiting
    client.post(
        reverse("accounts:two_factor"), {"action": "remove", "code": code_for(device, ahead=1)}
    )
    assert not TOTPDevice.objects.filter(user=tariq).exists()
    assert not StaticDevice.objects.filter(user=tariq).exists()
    # The next sign-in asks for nothing more than the password.
    client.logout()
    sign_in(client, "tariq")
    assert client.get(reverse("approvals:dashboard")).status_code == 200


def test_new_recovery_codes_replace_the_old(client, tariq):
    device = enrol(tariq, codes=("oldcode1",))
    sign_in(client, "tariq")
    verify(client, code_for(device))
    shown = client.post(
        reverse("accounts:two_factor"), {"action": "codes", "code": code_for(device, ahead=1)}
    )
    assert len(shown.context["codes"]) == 10
    tokens = set(StaticToken.objects.filter(device__user=tariq).values_list("token", flat=True))
    assert tokens == set(shown.context["codes"]) and "oldcode1" not in tokens


def test_devices_are_each_persons_own(client, tariq, lena):
    enrol(lena)
    sign_in(client, "tariq")
    # Lena's authenticator asks nothing of Tariq, and his page offers to set up his own.
    assert client.get(reverse("approvals:dashboard")).status_code == 200
    page = client.get(reverse("accounts:two_factor"))
    assert "Set up two-factor sign-in" in page.content.decode()


# --- Signing in -------------------------------------------------------------------------


def test_sign_in_asks_for_the_code_before_any_page(client, tariq):
    device = enrol(tariq)
    response = sign_in(client, "tariq")
    assert response.status_code == 302
    dashboard = reverse("approvals:dashboard")
    asked = client.get(dashboard)
    assert asked.status_code == 302
    assert asked["Location"] == f"{reverse('accounts:two_factor_verify')}?next=%2Fdashboard%2F"
    assert client.get(reverse("cases:list")).status_code == 302
    assert client.get(reverse("accounts:two_factor")).status_code == 302
    api = client.get("/api/v1/cases/")
    assert api.status_code == 403 and "authenticator" in api.json()["detail"]
    page = client.get(asked["Location"])
    assert page.status_code == 200 and "Enter your code" in page.content.decode()

    wrong = verify(client, "123 456" if code_for(device) != "123456" else "654321", dashboard)
    assert wrong.status_code == 200
    assert "That code is not right" in wrong.content.decode()
    assert not is_verified(client)
    assert client.get(dashboard).status_code == 302

    TOTPDevice.objects.filter(pk=device.pk).update(throttling_failure_count=0)
    right = verify(client, code_for(device), dashboard)
    assert right.status_code == 302 and right["Location"] == dashboard
    assert is_verified(client)
    assert client.get(dashboard).status_code == 200
    assert client.get("/api/v1/cases/").status_code == 200


def test_a_code_is_not_taken_twice(client, tariq):
    device = enrol(tariq)
    sign_in(client, "tariq")
    code = code_for(device)
    assert verify(client, code).status_code == 302
    client.logout()
    sign_in(client, "tariq")
    assert verify(client, code).status_code == 200
    assert not is_verified(client)


def test_wrong_codes_are_throttled_and_lock_the_account_out(client, tariq, settings):
    settings.AXES_FAILURE_LIMIT = 3
    device = enrol(tariq)
    sign_in(client, "tariq")
    verify(client, "000000" if code_for(device) != "000000" else "111111")
    device.refresh_from_db()
    assert device.throttling_failure_count == 1
    # Right after a wrong code, even the right one waits (django-otp's own throttling).
    TOTPDevice.objects.filter(pk=device.pk).update(throttling_failure_count=8)
    StaticDevice.objects.filter(user=tariq).update(
        throttling_failure_count=8, throttling_failure_timestamp=device.throttling_failure_timestamp
    )
    held = verify(client, code_for(device))
    assert "Too many wrong codes" in held.content.decode()
    assert not is_verified(client)
    # Each refused code counts toward the sign-in lock-out, as a wrong password does.
    locked = verify(client, "000000")
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session
    assert sign_in(client, "tariq").status_code == 429


def test_a_recovery_code_works_once(client, tariq):
    enrol(tariq, codes=("abcd2345", "efgh6777"))
    sign_in(client, "tariq")
    used = verify(client, "ABCD 2345", reverse("cases:list"))
    assert used.status_code == 302 and used["Location"] == reverse("cases:list")
    assert is_verified(client)
    page = client.get(reverse("cases:list"))
    assert "1 recovery code is left" in page.content.decode()
    assert list(StaticToken.objects.values_list("token", flat=True)) == ["efgh6777"]
    client.logout()
    sign_in(client, "tariq")
    again = verify(client, "abcd2345")
    assert again.status_code == 200 and "That code is not right" in again.content.decode()
    assert not is_verified(client)


def test_the_code_page_goes_nowhere_outside_the_site(client, tariq):
    device = enrol(tariq)
    sign_in(client, "tariq")
    response = verify(client, code_for(device), "https://evil.example/")
    assert response["Location"] == reverse("approvals:dashboard")


def test_people_without_an_authenticator_pass_straight_through(client, tariq):
    sign_in(client, "tariq")
    assert client.get(reverse("approvals:dashboard")).status_code == 200
    assert client.get(reverse("accounts:two_factor_verify")).status_code == 302


def test_the_header_links_the_page(browser_as):
    page = browser_as("aude").get(reverse("approvals:dashboard"))
    assert reverse("accounts:two_factor") in page.content.decode()


@pytest.mark.parametrize("role", ["priya", "lena", "tariq", "fiona", "aude", "ada"])
def test_every_role_may_set_it_up(browser_as, role):
    assert browser_as(role).get(reverse("accounts:two_factor")).status_code == 200


@pytest.mark.parametrize("name", ["accounts:two_factor", "accounts:two_factor_verify"])
def test_anonymous_visitors_are_sent_to_sign_in(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


# --- The organisation's policy ----------------------------------------------------------


def test_a_required_role_is_sent_to_set_it_up_first(client, tariq, priya, settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["tech_lead"]
    sign_in(client, "tariq")
    sent = client.get(reverse("approvals:dashboard"))
    assert sent.status_code == 302
    assert sent["Location"].startswith(reverse("accounts:two_factor"))
    page = client.get(reverse("accounts:two_factor"))
    assert "requires two-factor sign-in for your role" in page.content.decode()
    assert client.get("/api/v1/cases/").status_code == 403
    # The language and logging out stay open.
    language = client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    assert language.status_code == 302 and "zh-hans" in language.cookies["django_language"].value
    assert client.post(reverse("logout")).status_code == 302
    # Another role is not asked.
    sign_in(client, "priya")
    assert client.get(reverse("approvals:dashboard")).status_code == 200


def test_finance_may_be_required_to_use_it(client, people, settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["finance_approver"]
    assert is_required_for(people["fiona"]) and not is_required_for(people["priya"])
    sign_in(client, "fiona")
    sent = client.get(reverse("approvals:dashboard"))
    assert sent.status_code == 302
    assert sent["Location"].startswith(reverse("accounts:two_factor"))


def test_a_required_role_with_an_authenticator_must_pass_the_code(client, tariq, settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["tech_lead", "admin"]
    device = enrol(tariq)
    sign_in(client, "tariq")
    assert client.get(reverse("approvals:dashboard"))["Location"].startswith(
        reverse("accounts:two_factor_verify")
    )
    verify(client, code_for(device))
    assert client.get(reverse("approvals:dashboard")).status_code == 200


def test_the_admin_needs_the_second_factor_when_required(client, ada, settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["admin"]
    ada.is_staff = True
    ada.save(update_fields=["is_staff"])
    sign_in(client, "ada")
    sent = client.get("/admin/")
    assert sent.status_code == 302 and sent["Location"].startswith(reverse("accounts:two_factor"))
    device = enrol(ada)
    client.logout()
    sign_in(client, "ada")
    assert client.get("/admin/")["Location"].startswith(reverse("accounts:two_factor_verify"))
    verify(client, code_for(device))
    assert client.get("/admin/").status_code == 200
    # The admin lists authenticators, to remove a lost one, but never shows a key.
    listing = client.get("/admin/otp_totp/totpdevice/")
    assert listing.status_code == 200 and device.key not in listing.content.decode()
    change = client.get(f"/admin/otp_totp/totpdevice/{device.pk}/change/")
    assert change.status_code == 200 and device.key not in change.content.decode()


def test_policy_off_changes_nothing(client, tariq, decidable, settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = []
    case, offer = decidable
    sign_in(client, "tariq")
    response = client.post(
        reverse("approvals:decide", args=[case.pk]),
        {"offer": offer.pk, "decision": "rejected", "comment": "Too dear"},
    )
    assert response.status_code == 302
    assert Approval.objects.filter(case=case).count() == 1


def test_an_unknown_role_in_the_setting_stops_the_checks(settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["tech_lead", "techlead"]
    with pytest.raises(SystemCheckError, match="TWO_FACTOR_REQUIRED_ROLES names no such role"):
        call_command("check")


# --- Decisions and waivers --------------------------------------------------------------


def _decide(client, case, offer):
    return client.post(
        reverse("approvals:decide", args=[case.pk]),
        {"offer": offer.pk, "decision": "rejected", "comment": "Prepayment too high"},
    )


def test_a_decision_page_is_refused_without_the_second_factor(
    client, tariq, decidable, settings, without_the_middleware
):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["tech_lead"]
    case, offer = decidable
    sign_in(client, "tariq")
    refused = _decide(client, case, offer)
    assert refused.status_code == 403
    assert "requires two-factor sign-in" in refused.content.decode()
    assert not Approval.objects.filter(case=case).exists()
    # Reading the page is still allowed; only the decision needs the code.
    assert client.get(reverse("approvals:decide", args=[case.pk])).status_code == 200


def test_a_decision_page_is_accepted_once_verified(client, tariq, decidable, settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["tech_lead"]
    case, offer = decidable
    device = enrol(tariq)
    sign_in(client, "tariq")
    # Unverified, the middleware sends the decision to the code page first.
    sent = _decide(client, case, offer)
    assert sent.status_code == 302
    assert sent["Location"].startswith(reverse("accounts:two_factor_verify"))
    assert not Approval.objects.filter(case=case).exists()
    verify(client, code_for(device))
    assert _decide(client, case, offer).status_code == 302
    case.refresh_from_db()
    assert case.status == "rejected"


def test_a_decision_through_the_api_needs_the_second_factor(
    client, api_as, tariq, decidable, settings
):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["tech_lead"]
    case, offer = decidable
    body = {"offer": offer.pk, "decision": "rejected", "comment": "No"}
    url = f"/api/v1/cases/{case.pk}/decision/"
    # A personal token is a password, not a second factor.
    refused = api_as("tariq").post(url, body, format="json")
    assert refused.status_code == 403
    assert "requires two-factor sign-in" in refused.json()["detail"]
    assert not Approval.objects.filter(case=case).exists()
    # A session that passed the code may decide.
    device = enrol(tariq)
    sign_in(client, "tariq")
    verify(client, code_for(device))
    accepted = client.post(url, body, content_type="application/json")
    assert accepted.status_code == 201
    assert Approval.objects.filter(case=case, decided_by=tariq).exists()


def test_policy_off_a_token_still_decides(api_as, decidable, settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = []
    case, offer = decidable
    response = api_as("tariq").post(
        f"/api/v1/cases/{case.pk}/decision/",
        {"offer": offer.pk, "decision": "rejected", "comment": "No"},
        format="json",
    )
    assert response.status_code == 201


def test_a_waiver_page_is_refused_without_the_second_factor(
    client, lena, red_flag, settings, without_the_middleware
):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["legal_reviewer"]
    sign_in(client, "lena")
    refused = client.post(reverse("contracts:waive", args=[red_flag.pk]), {"reason": "Credits"})
    assert refused.status_code == 403
    assert "requires two-factor sign-in" in refused.content.decode()
    assert not RedFlagWaiver.objects.exists()


def test_a_waiver_page_is_accepted_once_verified(client, lena, red_flag, settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["legal_reviewer"]
    device = enrol(lena)
    sign_in(client, "lena")
    verify(client, code_for(device))
    response = client.post(reverse("contracts:waive", args=[red_flag.pk]), {"reason": "Credits"})
    assert response.status_code == 302
    assert RedFlagWaiver.objects.filter(item=red_flag, waived_by=lena).exists()


def test_waiver_api_calls_need_the_second_factor(client, api_as, lena, red_flag, settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["legal_reviewer"]
    url = "/api/v1/red-flag-waivers/"
    refused = api_as("lena").post(url, {"item": red_flag.pk, "reason": "Credits"}, format="json")
    assert refused.status_code == 403
    assert "requires two-factor sign-in" in refused.json()["detail"]
    assert not RedFlagWaiver.objects.exists()

    waiver = red_flag_waive(actor=lena, item=red_flag, reason="Credits")
    for action, body in (("confirm", {"note": "Agreed"}), ("withdraw", {"reason": "Renegotiated"})):
        response = api_as("lena").post(f"{url}{waiver.pk}/{action}/", body, format="json")
        assert response.status_code == 403, action
    waiver.refresh_from_db()
    assert waiver.confirmed_at is None and waiver.lapsed_at is None
    # Reading stays open to the token.
    assert api_as("lena").get(url).status_code == 200

    device = enrol(lena)
    sign_in(client, "lena")
    verify(client, code_for(device))
    withdrawn = client.post(
        f"{url}{waiver.pk}/withdraw/", {"reason": "Renegotiated"}, content_type="application/json"
    )
    assert withdrawn.status_code == 200
    waiver.refresh_from_db()
    assert waiver.lapsed_at is not None


def test_confirm_and_withdraw_pages_are_refused_without_the_second_factor(
    client, lena, red_flag, settings, without_the_middleware
):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["legal_reviewer"]
    leo = make_legal()
    waiver = red_flag_waive(actor=leo, item=red_flag, reason="Credits")
    sign_in(client, "lena")
    confirm = client.post(reverse("contracts:waiver-confirm", args=[waiver.pk]), {"note": "Yes"})
    withdraw = client.post(reverse("contracts:waiver-withdraw", args=[waiver.pk]), {"reason": "No"})
    assert confirm.status_code == 403 and withdraw.status_code == 403
    waiver.refresh_from_db()
    assert waiver.confirmed_at is None and waiver.lapsed_at is None


def test_other_roles_are_not_held_by_anothers_requirement(client, lena, red_flag, settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["tech_lead"]
    sign_in(client, "lena")
    response = client.post(reverse("contracts:waive", args=[red_flag.pk]), {"reason": "Credits"})
    assert response.status_code == 302
    assert RedFlagWaiver.objects.exists()


def test_the_role_is_read_from_groups(client, people, settings):
    """Someone given the role later is held by it at once."""
    settings.TWO_FACTOR_REQUIRED_ROLES = ["tech_lead"]
    sign_in(client, "aude")
    assert client.get(reverse("approvals:dashboard")).status_code == 200
    people["aude"].groups.add(Group.objects.get(name="tech_lead"))
    assert client.get(reverse("approvals:dashboard")).status_code == 302


def test_the_code_page_offers_no_other_pages(client, tariq):
    enrol(tariq)
    sign_in(client, "tariq")
    page = client.get(reverse("accounts:two_factor_verify")).content.decode()
    assert reverse("cases:list") not in page and reverse("approvals:waiting") not in page
    assert reverse("logout") in page


def test_the_pages_speak_chinese(client, tariq):
    zh = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}
    sign_in(client, "tariq")
    setup = client.get(reverse("accounts:two_factor"), **zh).content.decode()
    assert "设置双重验证登录" in setup and "身份验证器应用" in setup
    enrol(tariq)
    client.logout()
    sign_in(client, "tariq")
    refused = client.post(reverse("accounts:two_factor_verify"), {"code": "00000a"}, **zh)
    assert "输入验证码" in refused.content.decode()
    assert "验证码不正确" in refused.content.decode()


# --- Superusers and staff count as administrators ---------------------------------------
# docs/roles.md#administrators-outside-the-role-groups


@pytest.fixture
def root(db, monkeypatch):
    """The first administrator, made as the README says: ``createsuperuser``, in no group."""
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "pw")
    call_command("createsuperuser", interactive=False, username="root", email="root@example.com")
    user = get_user_model().objects.get(username="root")
    assert user.is_superuser and not user.groups.exists()
    return user


def test_a_superuser_in_no_group_is_an_administrator(client, root):
    assert roles_of(root) == {"admin"}
    sign_in(client, "root")
    page = client.get(reverse("approvals:dashboard")).content.decode()
    assert "Administrator" in page


def test_a_superuser_must_set_up_the_second_factor_before_the_admin(client, root, settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["admin"]
    assert is_required_for(root)
    sign_in(client, "root")
    for path in ("/admin/", reverse("approvals:dashboard")):
        sent = client.get(path)
        assert sent.status_code == 302
        assert sent["Location"].startswith(reverse("accounts:two_factor"))
    device = enrol(root)
    client.logout()
    sign_in(client, "root")
    assert client.get("/admin/")["Location"].startswith(reverse("accounts:two_factor_verify"))
    verify(client, code_for(device))
    assert client.get("/admin/").status_code == 200


def test_staff_outside_the_role_groups_count_as_administrators(people, settings):
    staff = get_user_model().objects.create_user(username="sam", password="pw", is_staff=True)
    settings.TWO_FACTOR_REQUIRED_ROLES = ["admin"]
    assert is_required_for(staff) and not is_required_for(people["tariq"])
    settings.TWO_FACTOR_REQUIRED_ROLES = ["tech_lead"]
    assert not is_required_for(staff)


def test_a_superuser_decides_no_case_without_the_second_factor(client, root, decidable, settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["admin"]
    case, offer = decidable
    sign_in(client, "root")
    sent = _decide(client, case, offer)
    assert sent.status_code == 302
    assert sent["Location"].startswith(reverse("accounts:two_factor"))
    assert not Approval.objects.filter(case=case).exists()


def test_the_decision_page_itself_refuses_an_unverified_superuser(
    client, root, decidable, settings, without_the_middleware
):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["admin"]
    case, offer = decidable
    sign_in(client, "root")
    refused = _decide(client, case, offer)
    assert refused.status_code == 403
    assert "requires two-factor sign-in" in refused.content.decode()
    assert not Approval.objects.filter(case=case).exists()


def test_a_superusers_token_is_not_a_second_factor(root, decidable, settings):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["admin"]
    case, offer = decidable
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=root).key}")
    refused = api.post(
        f"/api/v1/cases/{case.pk}/decision/",
        {"offer": offer.pk, "decision": "rejected", "comment": "No"},
        format="json",
    )
    assert refused.status_code == 403
    assert not Approval.objects.filter(case=case).exists()


def test_a_verified_superuser_decides_as_an_administrator_may(client, root, decidable, settings):
    """The rules let an administrator decide a case they neither raised nor submitted."""
    settings.TWO_FACTOR_REQUIRED_ROLES = ["admin"]
    case, offer = decidable
    device = enrol(root)
    sign_in(client, "root")
    verify(client, code_for(device))
    assert _decide(client, case, offer).status_code == 302
    case.refresh_from_db()
    assert case.status == "rejected"
    assert Approval.objects.get(case=case).decided_by == root


def test_a_superuser_does_not_decide_a_case_they_submitted(client, root, people):
    case = make_case(people["priya"])
    offer = make_offer(people["priya"], case, spec=FULL_SPEC)
    case_submit_for_approval(actor=root, case=case)
    sign_in(client, "root")
    refused = _decide(client, case, offer)
    assert refused.status_code == 200
    assert "You submitted this case for approval, so you cannot decide it" in (
        refused.content.decode()
    )
    assert not Approval.objects.filter(case=case, decided_by=root).exists()
    case.refresh_from_db()
    assert case.status == "pending_approval"


def test_a_code_used_once_is_refused_with_its_own_reason(client, tariq):
    device = enrol(tariq)
    sign_in(client, "tariq")
    code = code_for(device)
    assert verify(client, code).status_code == 302
    client.logout()
    sign_in(client, "tariq")
    again = verify(client, code)
    assert again.status_code == 200 and not is_verified(client)
    page = again.content.decode()
    assert "That code has already been used: each code works once." in page
    assert "That code is not right" not in page

    # On the page that turns it off too, a code already used is named as such.
    TOTPDevice.objects.filter(pk=device.pk).update(throttling_failure_count=0)
    assert verify(client, code_for(device, ahead=1)).status_code == 302
    client.get(reverse("accounts:two_factor"))
    TOTPDevice.objects.filter(pk=device.pk).update(throttling_failure_count=0)
    used = client.post(
        reverse("accounts:two_factor"), {"action": "remove", "code": code_for(device, ahead=1)}
    )
    assert "That code has already been used" in used.content.decode()
    assert TOTPDevice.objects.filter(user=tariq).exists()


def test_a_wrong_code_is_still_called_wrong(client, tariq):
    device = enrol(tariq)
    sign_in(client, "tariq")
    assert verify(client, code_for(device)).status_code == 302
    client.logout()
    sign_in(client, "tariq")
    TOTPDevice.objects.filter(pk=device.pk).update(throttling_failure_count=0)
    wrong = "000000" if code_for(device) != "000000" else "111111"
    page = verify(client, wrong).content.decode()
    assert "That code is not right" in page and "already been used" not in page
