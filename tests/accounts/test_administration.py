"""Administration in the app: the People page, invitations by e-mail, roles, deactivation.

Administrators only; everyone else is answered 403 (tests/test_permissions.py lists the
pages too). Each test acts through the pages, as an administrator would.
"""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice
from rest_framework.authtoken.models import Token

from apps.accounts.models import AccountEvent, AccountInvitation
from apps.core.roles import Role
from apps.evidence.models import HarnessToken
from tests.evidence.factories import make_token
from tests.factories import make_case

NOT_ADMINS = ["priya", "lena", "tariq", "fiona", "aude"]


def _signed_in(people, name) -> Client:
    client = Client()
    client.force_login(people[name])
    return client


def _admin_urls(person_pk: int) -> list[tuple[str, str]]:
    return [
        ("get", reverse("accounts:people")),
        ("get", reverse("accounts:invite")),
        ("post", reverse("accounts:invite")),
        ("get", reverse("accounts:invitations")),
        ("get", reverse("accounts:provisioning")),
        ("post", reverse("accounts:provisioning")),
        ("get", reverse("accounts:person", args=[person_pk])),
        ("post", reverse("accounts:person_roles", args=[person_pk])),
        ("post", reverse("accounts:person_deactivate", args=[person_pk])),
        ("post", reverse("accounts:person_reactivate", args=[person_pk])),
    ]


@pytest.mark.parametrize("role", NOT_ADMINS)
def test_every_administration_page_answers_403_to_other_roles(people, role):
    client = _signed_in(people, role)
    for method, url in _admin_urls(people["lena"].pk):
        response = getattr(client, method)(url, {"reason": "x", "roles": ["auditor"]})
        assert response.status_code == 403, (method, url)
    assert set(people["lena"].groups.values_list("name", flat=True)) == {Role.LEGAL}
    assert people["lena"].is_active


def test_anonymous_visitors_are_sent_to_sign_in(people, client):
    for method, url in _admin_urls(people["lena"].pk):
        response = getattr(client, method)(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_people_page_shows_roles_active_last_sign_in_and_two_factor(people):
    tariq = people["tariq"]
    TOTPDevice.objects.create(user=tariq, name="app", confirmed=True)
    tariq.last_login = timezone.now()
    tariq.save(update_fields=["last_login"])
    client = _signed_in(people, "ada")
    page = client.get(reverse("accounts:people"))
    assert page.status_code == 200
    rows = {person.username: labels for person, labels in page.context["rows"]}
    assert [str(label) for label in rows["tariq"]] == ["Tech lead"]
    people_by_name = {person.username: person for person, _labels in page.context["rows"]}
    assert people_by_name["tariq"].has_authenticator
    assert not people_by_name["lena"].has_authenticator
    html = page.content.decode()
    assert "Tech lead" in html and "never" in html


def test_filter_by_role_shows_who_holds_it(people):
    client = _signed_in(people, "ada")
    page = client.get(reverse("accounts:people"), {"role": Role.PROCUREMENT})
    assert {p.username for p, _labels in page.context["rows"]} == {"priya", "pablo"}
    counts = {key: n for key, _label, n in page.context["roles"]}
    assert counts[Role.PROCUREMENT] == 2 and counts[Role.ADMIN] == 1
    admins = client.get(reverse("accounts:people"), {"role": Role.ADMIN})
    assert {p.username for p, _labels in admins.context["rows"]} == {"ada"}


def _invite(client, email="mei@example.org", roles=(Role.LEGAL,)):
    return client.post(
        reverse("accounts:invite"),
        {"email": email, "first_name": "Mei", "last_name": "Chen", "roles": list(roles)},
    )


def _link(mail) -> str:
    return re.search(r"https?://\S+/accounts/invitation/\S+/", mail.body).group(0)


def test_invitation_mails_a_link_that_sets_the_password_once(people, mailoutbox, settings):
    settings.SITE_URL = "https://diligence.example.org"
    client = _signed_in(people, "ada")
    response = _invite(client)
    mei = get_user_model().objects.get(username="mei@example.org")
    assert response.status_code == 302
    assert response["Location"] == reverse("accounts:person", args=[mei.pk])
    assert not mei.has_usable_password()
    assert set(mei.groups.values_list("name", flat=True)) == {Role.LEGAL}
    [mail] = mailoutbox
    assert mail.to == ["mei@example.org"]
    link = _link(mail)
    assert link.startswith("https://diligence.example.org/accounts/invitation/")
    path = link.removeprefix("https://diligence.example.org")

    invitee = Client()
    assert invitee.get(path).status_code == 200
    refused = invitee.post(path, {"password1": "short", "password2": "short"})
    assert refused.status_code == 400
    done = invitee.post(
        path, {"password1": "Harbour-lantern-93", "password2": "Harbour-lantern-93"}
    )
    assert done.status_code == 302 and done["Location"] == reverse("login")
    signed_in = invitee.post(
        reverse("login"), {"username": "mei@example.org", "password": "Harbour-lantern-93"}
    )
    assert signed_in.status_code == 302 and "_auth_user_id" in invitee.session

    again = Client().get(path)
    assert again.status_code == 410
    assert "already used" in again.content.decode()
    assert AccountInvitation.objects.get(user=mei).state() == "used"
    kinds = list(mei.account_events.order_by("at", "pk").values_list("kind", flat=True))
    assert kinds == ["invited", "roles", "password_set"]
    listing = client.get(reverse("accounts:invitations"))
    assert "mei@example.org" in listing.content.decode()


def test_an_expired_or_unknown_link_is_refused_clearly(people, mailoutbox):
    client = _signed_in(people, "ada")
    _invite(client)
    path = "/" + _link(mailoutbox[0]).split("/", 3)[3]
    AccountInvitation.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    expired = Client().post(
        path, {"password1": "Harbour-lantern-93", "password2": "Harbour-lantern-93"}
    )
    assert expired.status_code == 410
    assert "expired" in expired.content.decode()
    mei = get_user_model().objects.get(username="mei@example.org")
    assert not mei.has_usable_password()
    unknown = Client().get(reverse("accounts:invitation", args=["no-such-secret"]))
    assert unknown.status_code == 404
    assert "not valid" in unknown.content.decode()


def test_a_withdrawn_invitation_no_longer_works(people, mailoutbox):
    client = _signed_in(people, "ada")
    _invite(client)
    invitation = AccountInvitation.objects.get()
    response = client.post(reverse("accounts:invitation_withdraw", args=[invitation.pk]))
    assert response.status_code == 302
    path = "/" + _link(mailoutbox[0]).split("/", 3)[3]
    assert Client().get(path).status_code == 410


def test_an_address_already_in_use_is_refused_and_nothing_is_sent(people, mailoutbox):
    people["lena"].email = "lena@example.org"
    people["lena"].save(update_fields=["email"])
    client = _signed_in(people, "ada")
    response = _invite(client, email="LENA@example.org")
    assert response.status_code == 400
    assert "already exists" in response.content.decode()
    assert mailoutbox == []
    assert not AccountInvitation.objects.exists()


def test_an_invitation_whose_mail_fails_keeps_nothing(people, settings, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("mail server down")

    monkeypatch.setattr("apps.accounts.people.send_mail", broken)
    client = _signed_in(people, "ada")
    response = _invite(client)
    assert response.status_code == 502
    assert not get_user_model().objects.filter(username="mei@example.org").exists()
    assert not AccountInvitation.objects.exists()


def test_roles_are_assigned_and_removed_with_a_reason_in_the_history(people):
    client = _signed_in(people, "ada")
    lena = people["lena"]
    url = reverse("accounts:person_roles", args=[lena.pk])
    refused = client.post(url, {"roles": [Role.AUDITOR]})
    assert refused.status_code == 400  # no reason
    response = client.post(url, {"roles": [Role.LEGAL, Role.AUDITOR], "reason": "Covers audits"})
    assert response.status_code == 302
    assert set(lena.groups.values_list("name", flat=True)) == {Role.LEGAL, Role.AUDITOR}
    client.post(url, {"roles": [Role.AUDITOR], "reason": "Left the legal team"})
    assert set(lena.groups.values_list("name", flat=True)) == {Role.AUDITOR}
    event = lena.account_events.filter(kind=AccountEvent.Kind.ROLES).latest("pk")
    assert event.actor == people["ada"]
    assert "Left the legal team" in event.detail
    page = client.get(reverse("accounts:person", args=[lena.pk]))
    assert "Left the legal team" in page.content.decode()


def test_the_last_administrator_keeps_the_role(people):
    client = _signed_in(people, "ada")
    ada = people["ada"]
    response = client.post(
        reverse("accounts:person_roles", args=[ada.pk]),
        {"roles": [Role.AUDITOR], "reason": "Stepping down"},
    )
    assert response.status_code == 409
    assert "last active administrator" in response.content.decode()
    assert ada.groups.filter(name=Role.ADMIN).exists()
    # With a second administrator, the first may step down.
    people["tariq"].groups.add(Group.objects.get(name=Role.ADMIN))
    response = client.post(
        reverse("accounts:person_roles", args=[ada.pk]),
        {"roles": [Role.AUDITOR], "reason": "Stepping down"},
    )
    assert response.status_code == 302


def test_deactivating_ends_sessions_and_revokes_tokens(people):
    priya, tariq = people["priya"], people["tariq"]
    priya_browser = _signed_in(people, "priya")
    assert priya_browser.get(reverse("cases:list")).status_code == 200
    Token.objects.create(user=priya)
    case = make_case(priya)
    harness = make_token(tariq, case).record
    tariq_browser = _signed_in(people, "tariq")

    client = _signed_in(people, "ada")
    url = reverse("accounts:person_deactivate", args=[tariq.pk])
    assert client.post(url, {"reason": ""}).status_code == 400
    response = client.post(url, {"reason": "Left the company"})
    assert response.status_code == 302
    tariq.refresh_from_db()
    assert not tariq.is_active
    assert tariq_browser.get(reverse("cases:list")).status_code == 302  # signed out
    harness = HarnessToken.objects.get(pk=harness.pk)
    assert harness.revoked_at is not None
    assert harness.history.latest().history_change_reason.startswith("Revoked")
    event = tariq.account_events.get(kind=AccountEvent.Kind.DEACTIVATED)
    assert "Left the company" in event.detail and "1 session(s) ended" in event.detail

    response = client.post(
        reverse("accounts:person_deactivate", args=[priya.pk]), {"reason": "Left"}
    )
    assert not Token.objects.filter(user=priya).exists()
    assert priya_browser.get(reverse("cases:list")).status_code == 302
    again = client.post(reverse("accounts:person_deactivate", args=[priya.pk]), {"reason": "x"})
    assert again.status_code == 409
    back = client.post(reverse("accounts:person_reactivate", args=[priya.pk]), {"reason": "Back"})
    assert back.status_code == 302
    priya.refresh_from_db()
    assert priya.is_active


def test_an_administrator_cannot_deactivate_themselves(people):
    client = _signed_in(people, "ada")
    ada = people["ada"]
    response = client.post(reverse("accounts:person_deactivate", args=[ada.pk]), {"reason": "x"})
    assert response.status_code == 400
    assert "your own account" in response.content.decode()
    ada.refresh_from_db()
    assert ada.is_active


def test_provisioning_tokens_are_shown_once_and_stored_hashed(people):
    client = _signed_in(people, "ada")
    response = client.post(reverse("accounts:provisioning"), {"label": "Okta"})
    assert response.status_code == 200
    token = response.context["issued"].token
    assert token.startswith("dlp_")
    assert token in response.content.decode()
    again = client.get(reverse("accounts:provisioning"))
    assert token not in again.content.decode()
    record = response.context["issued"].record
    assert record.token_hash != token and token not in record.token_hash


def test_no_invitation_where_people_sign_in_through_single_sign_on(people, settings, mailoutbox):
    settings.LOCAL_PASSWORDS = False
    client = _signed_in(people, "ada")
    response = _invite(client)
    assert response.status_code == 400
    assert "single sign-on" in response.content.decode()
    assert mailoutbox == []
    assert not get_user_model().objects.filter(username="mei@example.org").exists()
