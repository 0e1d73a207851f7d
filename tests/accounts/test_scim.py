"""SCIM 2.0 provisioning, driven as an identity provider drives it: with the bearer token an
administrator made on the Provisioning page, over HTTP (Django's test client), in SCIM's
JSON. The provider creates a person, finds them by user name, puts them in and out of
roles, switches them off; refusals come back in SCIM's error format.
"""

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from apps.accounts.models import AccountEvent
from apps.core.roles import Role
from apps.evidence.models import HarnessToken
from tests.evidence.factories import make_token
from tests.factories import make_case

USER = "urn:ietf:params:scim:schemas:core:2.0:User"
PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
ERROR = "urn:ietf:params:scim:api:messages:2.0:Error"


class ScimClient:
    """What an identity provider sends: JSON with a bearer token, under /scim/v2."""

    def __init__(self, token: str):
        self.http = Client()
        self.headers = {"Authorization": f"Bearer {token}"}

    def call(self, method: str, path: str, body=None, **params):
        response = self.http.generic(
            method,
            "/scim/v2" + path,
            json.dumps(body) if body is not None else "",
            content_type="application/scim+json",
            headers=self.headers,
            QUERY_STRING="&".join(f"{k}={v}" for k, v in params.items()),
        )
        data = json.loads(response.content) if response.content else None
        return response, data

    def get(self, path, **params):
        return self.call("GET", path, **params)

    def post(self, path, body):
        return self.call("POST", path, body)

    def put(self, path, body):
        return self.call("PUT", path, body)

    def patch(self, path, *operations):
        return self.call("PATCH", path, {"schemas": [PATCH], "Operations": list(operations)})

    def delete(self, path):
        return self.call("DELETE", path)


@pytest.fixture
def provider(people):
    admin = Client()
    admin.force_login(people["ada"])
    page = admin.post(reverse("accounts:provisioning"), {"label": "Entra ID"})
    return ScimClient(page.context["issued"].token)


def _quoted(text: str) -> str:
    from urllib.parse import quote

    return quote(text)


def _new_user(provider, name="mei.chen", **more):
    body = {
        "schemas": [USER],
        "userName": name,
        "name": {"givenName": "Mei", "familyName": "Chen"},
        "emails": [{"value": f"{name}@example.org", "type": "work", "primary": True}],
        "active": True,
        **more,
    }
    return provider.post("/Users", body)


def test_the_identity_provider_creates_finds_and_switches_off_a_person(provider, people):
    response, created = _new_user(provider)
    assert response.status_code == 201
    assert response["Content-Type"].startswith("application/scim+json")
    assert created["userName"] == "mei.chen" and created["active"] is True
    assert response["Location"].endswith(f"/scim/v2/Users/{created['id']}")
    mei = get_user_model().objects.get(username="mei.chen")
    assert mei.email == "mei.chen@example.org" and not mei.has_usable_password()

    # Looked up by user name, as providers do before creating.
    _r, found = provider.get("/Users", filter=_quoted('userName eq "mei.chen"'))
    assert found["totalResults"] == 1 and found["Resources"][0]["id"] == created["id"]
    _r, none = provider.get("/Users", filter=_quoted('userName eq "nobody"'))
    assert none["totalResults"] == 0 and none["Resources"] == []

    # Into a role through the group, and out again.
    response, _ = provider.patch(
        f"/Groups/{Role.TECH_LEAD}",
        {"op": "add", "path": "members", "value": [{"value": created["id"]}]},
    )
    assert response.status_code == 204
    assert set(mei.groups.values_list("name", flat=True)) == {Role.TECH_LEAD}
    _r, group = provider.get(f"/Groups/{Role.TECH_LEAD}")
    assert created["id"] in {m["value"] for m in group["members"]}
    _r, one = provider.get(f"/Users/{created['id']}")
    assert [g["value"] for g in one["groups"]] == [Role.TECH_LEAD]
    provider.patch(
        f"/Groups/{Role.TECH_LEAD}",
        {"op": "remove", "path": f'members[value eq "{created["id"]}"]'},
    )
    assert not mei.groups.exists()

    # Switched off: active false, as the People page's deactivation.
    browser = Client()
    browser.force_login(mei)
    Token.objects.create(user=mei)
    response, patched = provider.patch(
        f"/Users/{created['id']}", {"op": "replace", "path": "active", "value": False}
    )
    assert response.status_code == 200 and patched["active"] is False
    mei.refresh_from_db()
    assert not mei.is_active
    assert not Token.objects.filter(user=mei).exists()
    assert browser.get(reverse("approvals:dashboard")).status_code == 302
    event = mei.account_events.get(kind=AccountEvent.Kind.DEACTIVATED)
    assert event.actor is None and event.via == "Entra ID"

    # Back on, with the value as some providers send it: a word.
    response, patched = provider.patch(
        f"/Users/{created['id']}", {"op": "replace", "value": {"active": "True"}}
    )
    assert patched["active"] is True


def test_roles_are_set_on_the_user_too(provider, people):
    _r, created = _new_user(provider, roles=[{"value": Role.AUDITOR}])
    assert [r["value"] for r in created["roles"]] == [Role.AUDITOR]
    path = f"/Users/{created['id']}"
    _r, patched = provider.patch(
        path, {"op": "add", "path": "roles", "value": [{"value": Role.LEGAL}]}
    )
    assert {r["value"] for r in patched["roles"]} == {Role.AUDITOR, Role.LEGAL}
    _r, patched = provider.patch(
        path, {"op": "remove", "path": f'roles[value eq "{Role.AUDITOR}"]'}
    )
    assert [r["value"] for r in patched["roles"]] == [Role.LEGAL]
    response, error = provider.patch(path, {"op": "add", "path": "roles", "value": ["boss"]})
    assert response.status_code == 400 and error["scimType"] == "invalidValue"


def test_put_replaces_the_person(provider, people):
    _r, created = _new_user(provider)
    response, replaced = provider.put(
        f"/Users/{created['id']}",
        {
            "schemas": [USER],
            "userName": "mei.wang",
            "name": {"givenName": "Mei", "familyName": "Wang"},
            "emails": [{"value": "mei.wang@example.org", "primary": True}],
            "active": True,
        },
    )
    assert response.status_code == 200
    assert replaced["userName"] == "mei.wang" and replaced["name"]["familyName"] == "Wang"


def test_delete_deactivates_and_revokes_harness_tokens(provider, people):
    tariq = people["tariq"]
    harness = make_token(tariq, make_case(people["priya"])).record
    response, _ = provider.delete(f"/Users/{tariq.pk}")
    assert response.status_code == 204
    tariq.refresh_from_db()
    assert not tariq.is_active
    assert HarnessToken.objects.get(pk=harness.pk).revoked_at is not None
    assert get_user_model().objects.filter(pk=tariq.pk).exists()  # nothing is deleted


def test_the_last_administrator_cannot_be_switched_off_or_removed(provider, people):
    ada = people["ada"]
    response, error = provider.delete(f"/Users/{ada.pk}")
    assert response.status_code == 409
    assert error["schemas"] == [ERROR] and error["status"] == "409"
    assert "last active administrator" in error["detail"]
    response, error = provider.patch(
        f"/Groups/{Role.ADMIN}", {"op": "remove", "path": f'members[value eq "{ada.pk}"]'}
    )
    assert response.status_code == 409
    ada.refresh_from_db()
    assert ada.is_active and ada.groups.filter(name=Role.ADMIN).exists()


def test_refusals_are_scim_errors(provider, people):
    response, error = provider.get("/Users/999999")
    assert response.status_code == 404 and error["status"] == "404" and error["detail"]
    _new_user(provider)
    response, error = _new_user(provider)
    assert response.status_code == 409 and error["scimType"] == "uniqueness"
    response, error = provider.get("/Users", filter=_quoted("title co x"))
    assert response.status_code == 400 and error["scimType"] == "invalidFilter"
    response, error = provider.call("POST", "/Users", None)
    assert response.status_code == 400 and error["scimType"] == "invalidSyntax"
    response, error = provider.get("/Groups/boss")
    assert response.status_code == 404
    response, error = provider.call("DELETE", f"/Groups/{Role.ADMIN}")
    assert response.status_code == 405 and error["schemas"] == [ERROR]


def test_a_request_without_a_valid_token_is_refused(people, provider):
    anonymous = ScimClient("dlp_wrong")
    response, error = anonymous.get("/Users")
    assert response.status_code == 401
    assert error["schemas"] == [ERROR] and error["status"] == "401"
    assert response["WWW-Authenticate"].startswith("Bearer")
    # A signed-in administrator's session is not a provisioning token.
    browser = Client()
    browser.force_login(people["ada"])
    assert browser.get("/scim/v2/Users").status_code == 401


def test_a_revoked_token_stops_working(people, provider):
    admin = Client()
    admin.force_login(people["ada"])
    from apps.accounts.models import ProvisioningToken

    token = ProvisioningToken.objects.get()
    admin.post(reverse("accounts:provisioning_revoke", args=[token.pk]))
    response, _ = provider.get("/Users")
    assert response.status_code == 401


def test_discovery_endpoints(provider):
    response, config = provider.get("/ServiceProviderConfig")
    assert response.status_code == 200
    assert config["patch"]["supported"] is True and config["bulk"]["supported"] is False
    _r, types = provider.get("/ResourceTypes")
    assert {t["endpoint"] for t in types["Resources"]} == {"/Users", "/Groups"}
    _r, schemas = provider.get("/Schemas")
    assert {s["id"] for s in schemas["Resources"]} == {
        USER,
        "urn:ietf:params:scim:schemas:core:2.0:Group",
    }
    _r, groups = provider.get("/Groups", excludedAttributes="members")
    assert {g["id"] for g in groups["Resources"]} == set(Role.values)
    assert all("members" not in g for g in groups["Resources"])
    _r, one = provider.get("/Groups", filter=_quoted('displayName eq "Tech lead"'))
    assert [g["id"] for g in one["Resources"]] == [Role.TECH_LEAD]


def test_patch_as_entra_id_sends_it(provider, people):
    """Microsoft Entra ID names the work address by a filter, and sends attributes that
    Diligence does not keep (accepted, left out)."""
    _r, created = _new_user(provider)
    response, patched = provider.patch(
        f"/Users/{created['id']}",
        {"op": "replace", "path": 'emails[type eq "work"].value', "value": "mei@example.com"},
        {"op": "add", "path": "externalId", "value": "0f1e2d"},
        {"op": "replace", "value": {"name.familyName": "Lin"}},
    )
    assert response.status_code == 200, patched
    assert patched["emails"][0]["value"] == "mei@example.com"
    assert patched["name"]["familyName"] == "Lin"
