"""Single sign-on's rules without the browser: roles from groups, people found by their
provider account only, no takeover by a name or an e-mail address, passwords switched off
but for the break-glass administrators."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from django.urls import reverse
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from apps.accounts.models import ExternalIdentity
from apps.accounts.sso import RoleMappingOIDCBackend, roles_from_claims
from apps.core.second_factor import is_required_for

ROOT = Path(__file__).resolve().parents[2]
ISSUER = "https://id.example.com"


def claims(subject: str, **more) -> dict:
    """What the provider says of one of its accounts (its display name is the subject's,
    unless ``preferred_username`` says otherwise)."""
    return {"iss": ISSUER, "sub": subject, "preferred_username": subject, **more}


@pytest.fixture
def mapped(settings):
    settings.OIDC_ROLE_MAP = [
        "gpu-buyers=procurement_reviewer",
        "gpu-tech=tech_lead",
        "gpu-finance=finance_approver",
        "gpu-admins=admin",
        "typo=no_such_role",
    ]
    settings.OIDC_GROUPS_CLAIM = "groups"


def test_only_mapped_groups_give_roles(mapped):
    assert roles_from_claims({"groups": ["gpu-tech", "staff"]}) == {"tech_lead"}
    assert roles_from_claims({"groups": "gpu-buyers"}) == {"procurement_reviewer"}
    assert roles_from_claims({"groups": ["typo", "staff"]}) == set()  # no role without a map
    assert roles_from_claims({}) == set()


def test_each_sign_in_sets_the_roles_the_groups_give(db, people, mapped):
    backend = RoleMappingOIDCBackend()
    user = backend.create_user(claims("mei", groups=["gpu-tech"]))
    assert set(user.groups.values_list("name", flat=True)) == {"tech_lead"}
    assert not user.has_usable_password() and not user.is_staff
    backend.update_user(user, claims("mei", groups=["gpu-admins"]))
    assert set(user.groups.values_list("name", flat=True)) == {"admin"}
    assert user.is_staff
    assert list(backend.filter_users_by_claims(claims("mei"))) == [user]


def test_a_finance_group_gives_the_finance_approver_role(db, people, mapped):
    assert roles_from_claims({"groups": ["gpu-finance", "staff"]}) == {"finance_approver"}
    user = RoleMappingOIDCBackend().create_user(claims("ines", groups=["gpu-finance"]))
    assert set(user.groups.values_list("name", flat=True)) == {"finance_approver"}
    assert user.has_perm("approvals.add_findingacceptance") and not user.is_staff


def test_a_password_account_is_never_taken_over(db, people, mapped):
    backend = RoleMappingOIDCBackend()
    said = claims("priya", groups=["gpu-admins"])
    assert not backend.filter_users_by_claims(said).exists()
    assert backend.create_user(said) is None
    priya = get_user_model().objects.get(username="priya")
    assert set(priya.groups.values_list("name", flat=True)) == {"procurement_reviewer"}


def test_people_are_found_by_provider_and_subject_never_by_name(db, people, mapped):
    backend = RoleMappingOIDCBackend()
    mei = backend.create_user(claims("u-1", preferred_username="mei", groups=["gpu-tech"]))
    assert mei.username == "mei"
    # Her display name changes at the provider: still her, under the name she was made with.
    renamed = claims("u-1", preferred_username="mei.chen", groups=["gpu-tech"])
    assert list(backend.filter_users_by_claims(renamed)) == [mei]
    # Another account there, or the same subject at another provider, is not her.
    assert not backend.filter_users_by_claims(claims("u-2", preferred_username="mei")).exists()
    elsewhere = {**claims("u-1"), "iss": "https://other.example.com"}
    assert not backend.filter_users_by_claims(elsewhere).exists()
    assert backend.create_user({**elsewhere, "preferred_username": "mei"}) is None
    assert backend.create_user(claims("u-3", preferred_username="MEI")) is None
    assert ExternalIdentity.objects.get().user == mei


def test_an_email_address_anothers_account_uses_is_refused(db, people, mapped, caplog):
    backend = RoleMappingOIDCBackend()
    people["priya"].email = "priya@example.com"
    people["priya"].save(update_fields=["email"])
    said = claims("u-9", preferred_username="p.rao", email="Priya@example.com")
    assert backend.create_user({**said, "groups": ["gpu-tech"]}) is None
    assert not get_user_model().objects.filter(username="p.rao").exists()
    # Nor does a linked account take it on later.
    mei = backend.create_user(claims("u-1", preferred_username="mei", groups=["gpu-tech"]))
    changed = claims("u-1", email="priya@example.com", groups=["gpu-admins"])
    assert backend.update_user(mei, changed) is None
    mei.refresh_from_db()
    assert mei.email == "" and not mei.is_staff
    assert "e-mail address belongs to another account" in caplog.text


def test_claims_without_a_provider_account_are_refused(mapped):
    backend = RoleMappingOIDCBackend()
    assert not backend.verify_claims({"preferred_username": "mei", "groups": ["gpu-tech"]})
    assert not backend.verify_claims({"sub": "u-1", "groups": ["gpu-tech"]})
    assert backend.verify_claims(claims("u-1", groups=["gpu-tech"]))


def test_the_user_info_answers_only_for_the_id_tokens_subject(monkeypatch, mapped, settings):
    settings.OIDC_OP_USER_ENDPOINT = "https://id.example.com/me"
    backend = RoleMappingOIDCBackend()
    payload = {"iss": ISSUER, "sub": "u-1"}
    answer = {"sub": "u-1", "preferred_username": "mei", "groups": ["gpu-tech"]}
    monkeypatch.setattr(OIDCAuthenticationBackend, "get_userinfo", lambda *a: dict(answer))
    assert backend.get_userinfo("access", "id", payload) == {**answer, "iss": ISSUER}
    answer["sub"] = "u-2"
    with pytest.raises(SuspiciousOperation):
        backend.get_userinfo("access", "id", payload)
    # Without a user info endpoint, the ID token's claims are the person's.
    settings.OIDC_OP_USER_ENDPOINT = ""
    assert backend.get_userinfo("access", "id", {**payload, "groups": ["x"]})["groups"] == ["x"]


def test_the_sign_in_routes_are_absent_without_a_provider(client):
    assert client.get(reverse("oidc_authentication_init")).status_code == 404
    assert client.get(reverse("oidc_authentication_callback")).status_code == 404
    page = client.get(reverse("login")).content.decode()
    assert "Sign in with" not in page


def test_with_passwords_off_only_the_break_glass_administrator_signs_in_with_one(
    client, people, settings
):
    settings.LOCAL_PASSWORDS = False
    settings.BREAK_GLASS_USERS = ["ada"]
    settings.OIDC_ENABLED = True  # the page offers the provider's sign-in
    settings.OIDC_PROVIDER_NAME = "Example SSO"
    refused = client.post(reverse("login"), {"username": "priya", "password": "pw"})
    assert refused.status_code == 200
    assert "Passwords are switched off here: sign in with Example SSO." in refused.content.decode()
    assert "_auth_user_id" not in client.session
    allowed = client.post(reverse("login"), {"username": "ada", "password": "pw"})
    assert allowed.status_code == 302 and client.session["_auth_user_id"]


def test_passwords_off_without_a_provider_is_refused_at_start():
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "LOCAL_PASSWORDS": "0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "LOCAL_PASSWORDS is off but single sign-on is not set up" in result.stderr


def test_two_factor_is_asked_of_local_accounts_not_of_single_sign_on_ones(
    db, people, mapped, settings
):
    settings.TWO_FACTOR_REQUIRED_ROLES = ["tech_lead"]
    sso = RoleMappingOIDCBackend().create_user(claims("mei", groups=["gpu-tech"]))
    assert not is_required_for(sso)
    assert is_required_for(people["tariq"])
