"""SCIM 2.0 provisioning (RFC 7643, RFC 7644) at ``/scim/v2/``: the organisation's identity
provider creates people, finds them by user name, updates and deactivates them, and puts
them in and out of the roles.

- **Users** are Django's users: ``id`` is the account's number, ``userName`` its user name,
  ``active`` whether it may sign in, ``roles`` the roles it holds (and ``groups``, read only).
  DELETE deactivates, as the People page does (sessions ended, tokens revoked): nothing is
  ever deleted.
- **Groups** are the app's roles, fixed: ``id`` is the role's key (``tech_lead``),
  ``displayName`` its name. Their ``members`` are added and removed with PATCH (or set
  whole with PUT); a group is never created or deleted.
- A request carries ``Authorization: Bearer dlp_…``, a token an administrator made on the
  Provisioning page (stored hashed). Every change is in the person's account history, as
  made through that token.
- Errors are SCIM errors: ``schemas``, ``status`` (a string), ``detail`` and, where one
  fits, ``scimType``.
"""

import json
import re
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import RequestDataTooBig, ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import Max, QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt

from apps.accounts import people as service
from apps.accounts.models import AccountEvent, ProvisioningToken
from apps.core.roles import Role
from apps.core.services import StateConflict

CONTENT_TYPE = "application/scim+json"
USER = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"
ERROR = "urn:ietf:params:scim:api:messages:2.0:Error"
LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
SERVICE_PROVIDER = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
RESOURCE_TYPE = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema"
MAX_RESULTS = 200

_FILTER = re.compile(r'^\s*([A-Za-z][\w.]*)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$', re.IGNORECASE)
_MEMBER_PATH = re.compile(r'^\s*members\s*\[\s*value\s+eq\s+"([^"]*)"\s*\]\s*$', re.IGNORECASE)
_EMAIL_VALUE_PATH = re.compile(r"^\s*emails(\[[^\]]*\])?\.value\s*$", re.IGNORECASE)
# Attributes providers send that Diligence does not keep: accepted and left out.
NOT_KEPT = frozenset({"externalId", "displayName", "title", "preferredLanguage", "locale"})
_ROLE_PATH = re.compile(r'^\s*roles\s*\[\s*value\s+eq\s+"([^"]*)"\s*\]\s*$', re.IGNORECASE)


class ScimError(Exception):
    def __init__(self, status: int, detail: str, scim_type: str = ""):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.scim_type = scim_type


def _json(data: dict, status: int = 200) -> JsonResponse:
    return JsonResponse(data, status=status, content_type=CONTENT_TYPE)


def error_response(status: int, detail: str, scim_type: str = "") -> JsonResponse:
    body: dict[str, Any] = {"schemas": [ERROR], "status": str(status), "detail": detail}
    if scim_type:
        body["scimType"] = scim_type
    response = _json(body, status=status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="scim"'
    return response


def _base() -> str:
    return settings.SITE_URL + "/scim/v2"


def _token(request: HttpRequest) -> ProvisioningToken | None:
    header = request.headers.get("Authorization", "")
    scheme, _space, raw = header.partition(" ")
    if scheme.lower() != "bearer" or not raw.strip():
        return None
    return service.provisioning_token_of(raw.strip())


def scim_endpoint(*methods: str) -> Callable:
    """Bearer-token authentication, the methods the endpoint takes, and every refusal in
    SCIM's error format. The view receives the token's label (who acts) as ``via``."""

    def decorator(view: Callable) -> Callable:
        @csrf_exempt
        @wraps(view)
        def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            token = _token(request)
            if token is None:
                return error_response(
                    401, _("A valid provisioning token is required (Authorization: Bearer …).")
                )
            if request.method not in methods:
                response = error_response(
                    405, _("%(method)s is not supported here.") % {"method": request.method}
                )
                response["Allow"] = ", ".join(methods)
                return response
            try:
                return view(request, *args, via=token.label, **kwargs)
            except ScimError as error:
                return error_response(error.status, error.detail, error.scim_type)
            except StateConflict as error:
                return error_response(409, " ".join(error.messages))
            except ValidationError as error:
                return error_response(400, " ".join(error.messages), "invalidValue")

        return wrapped

    return decorator


def _body(request: HttpRequest) -> dict:
    try:
        data = json.loads(request.body or b"")
    except RequestDataTooBig:
        raise ScimError(413, _("The request is too large.")) from None
    except (ValueError, UnicodeDecodeError):
        raise ScimError(400, _("The body is not JSON."), "invalidSyntax") from None
    if not isinstance(data, dict):
        raise ScimError(400, _("The body must be a JSON object."), "invalidSyntax")
    return data


def _paging(request: HttpRequest) -> tuple[int, int]:
    try:
        start = max(int(request.GET.get("startIndex", 1)), 1)
        count = min(max(int(request.GET.get("count", MAX_RESULTS)), 0), MAX_RESULTS)
    except ValueError:
        raise ScimError(
            400, _("startIndex and count must be whole numbers."), "invalidValue"
        ) from None
    return start, count


def _filter(request: HttpRequest) -> tuple[str, str] | None:
    text = request.GET.get("filter", "")
    if not text:
        return None
    match = _FILTER.match(text)
    if match is None:
        raise ScimError(
            400,
            _('Only filters of the form attribute eq "value" are supported.'),
            "invalidFilter",
        )
    return match.group(1).lower(), match.group(2).replace('\\"', '"').replace("\\\\", "\\")


def _list(resources: list[dict], total: int, start: int) -> JsonResponse:
    return _json(
        {
            "schemas": [LIST],
            "totalResults": total,
            "startIndex": start,
            "itemsPerPage": len(resources),
            "Resources": resources,
        }
    )


def _as_bool(value: Any) -> bool:
    """SCIM's boolean; some providers send it as the text "True" or "False"."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ScimError(400, _("active must be true or false."), "invalidValue")


# --- Users ----------------------------------------------------------------------------


def _role_values(value: Any) -> set[str]:
    """Role keys from SCIM's ``roles`` (a list of ``{"value": key}``, or of keys)."""
    items = value if isinstance(value, list) else [value]
    keys = set()
    for item in items:
        key = item.get("value") if isinstance(item, dict) else item
        if key not in Role.values:
            raise ScimError(
                400,
                _("No such role: %(role)s. The roles are: %(roles)s.")
                % {"role": key, "roles": ", ".join(Role.values)},
                "invalidValue",
            )
        keys.add(key)
    return keys


def user_resource(user: User) -> dict:
    held = service.roles_held(user)
    location = f"{_base()}/Users/{user.pk}"
    if hasattr(user, "last_change"):  # read with the list
        last = user.last_change
    else:
        last = user.account_events.order_by("-at").values_list("at", flat=True).first()
    return {
        "schemas": [USER],
        "id": str(user.pk),
        "userName": user.username,
        "name": {
            "givenName": user.first_name,
            "familyName": user.last_name,
            "formatted": user.get_full_name(),
        },
        "displayName": user.get_full_name() or user.username,
        "emails": [{"value": user.email, "type": "work", "primary": True}] if user.email else [],
        "active": user.is_active,
        "roles": [{"value": role, "display": str(Role(role).label)} for role in held],
        "groups": [
            {
                "value": role,
                "display": str(Role(role).label),
                "$ref": f"{_base()}/Groups/{role}",
            }
            for role in held
        ],
        "meta": {
            "resourceType": "User",
            "created": user.date_joined.isoformat(),
            "lastModified": (last or user.date_joined).isoformat(),
            "location": location,
        },
    }


def _user(scim_user_id: str) -> User:
    if not scim_user_id.isdigit() or len(scim_user_id) > 18:
        raise ScimError(404, _("No such user."))
    user = get_user_model().objects.filter(pk=int(scim_user_id)).first()
    if user is None:
        raise ScimError(404, _("No such user."))
    return user


def _primary_email(emails: Any) -> str:
    if not emails:
        return ""
    if not isinstance(emails, list):
        raise ScimError(400, _("emails must be a list."), "invalidValue")
    chosen = next((e for e in emails if isinstance(e, dict) and e.get("primary")), None)
    chosen = chosen or next((e for e in emails if isinstance(e, dict)), None)
    return str((chosen or {}).get("value", "")).strip().lower()


def _checked_email(email: str) -> str:
    if email:
        try:
            validate_email(email)
        except ValidationError:
            raise ScimError(400, _("The e-mail address is not valid."), "invalidValue") from None
    return email[:254]


def _set_user_name(user: User, name: Any) -> None:
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > 150:
        raise ScimError(400, _("userName must be 1 to 150 characters."), "invalidValue")
    name = name.strip()
    taken = get_user_model().objects.filter(username__iexact=name).exclude(pk=user.pk).exists()
    if taken:
        raise ScimError(409, _("Another account has this userName."), "uniqueness")
    user.username = name


def _apply(user: User, attributes: dict, *, via: str, replace: bool) -> None:
    """Apply SCIM user ``attributes`` to ``user`` (saved); ``replace``: what PUT omits of
    the name and e-mail is cleared. ``active`` and ``roles`` go through the services."""
    before = (user.username, user.first_name, user.last_name, user.email)
    if "userName" in attributes or "username" in attributes:
        _set_user_name(user, attributes.get("userName", attributes.get("username")))
    name = attributes.get("name")
    if isinstance(name, dict) or replace:
        name = name if isinstance(name, dict) else {}
        if "givenName" in name or replace:
            user.first_name = str(name.get("givenName") or "")[:150]
        if "familyName" in name or replace:
            user.last_name = str(name.get("familyName") or "")[:150]
    for key in ("name.givenName", "name.familyName"):
        if key in attributes:
            setattr(
                user,
                "first_name" if key.endswith("givenName") else "last_name",
                str(attributes[key] or "")[:150],
            )
    if "emails" in attributes or replace:
        email = _checked_email(_primary_email(attributes.get("emails")))
        if email and service.email_taken(email, exclude_pk=user.pk):
            raise ScimError(409, _("Another account has this e-mail address."), "uniqueness")
        user.email = email
    after = (user.username, user.first_name, user.last_name, user.email)
    if after != before:
        user.save(update_fields=["username", "first_name", "last_name", "email"])
        AccountEvent.objects.create(
            user=user, kind=AccountEvent.Kind.DETAILS, via=via[:200], detail=user.username
        )
    if "roles" in attributes:
        service.roles_set(actor=None, user=user, roles=_role_values(attributes["roles"]), via=via)
    if "active" in attributes:
        _set_active(user, _as_bool(attributes["active"]), via=via)


def _set_active(user: User, active: bool, *, via: str) -> None:
    user.refresh_from_db(fields=["is_active"])
    if active and not user.is_active:
        service.reactivate(actor=None, user=user, via=via)
    elif not active and user.is_active:
        service.deactivate(actor=None, user=user, via=via)


@scim_endpoint("GET", "POST")
def users(request: HttpRequest, *, via: str) -> HttpResponse:
    if request.method == "POST":
        return _user_create(request, via=via)
    start, count = _paging(request)
    found: QuerySet[User] = get_user_model().objects.order_by("pk")
    wanted = _filter(request)
    if wanted is not None:
        attribute, value = wanted
        if attribute == "username":
            found = found.filter(username__iexact=value)
        elif attribute in ("emails.value", "emails"):
            found = found.filter(email__iexact=value)
        elif attribute == "id":
            found = found.filter(pk=int(value)) if value.isdigit() else found.none()
        else:
            raise ScimError(
                400, _("Users are filtered by userName, emails or id only."), "invalidFilter"
            )
    total = found.count()
    found = found.prefetch_related("groups").annotate(last_change=Max("account_events__at"))
    page = list(found[start - 1 : start - 1 + count])
    return _list([user_resource(user) for user in page], total, start)


def _user_create(request: HttpRequest, *, via: str) -> HttpResponse:
    data = _body(request)
    name = data.get("userName")
    if not isinstance(name, str) or not name.strip():
        raise ScimError(400, _("userName is required."), "invalidValue")
    with transaction.atomic():
        user = get_user_model()(username="")
        _set_user_name(user, name)
        user.set_unusable_password()  # they sign in through the provider
        user.save()
        AccountEvent.objects.create(
            user=user, kind=AccountEvent.Kind.CREATED, via=via[:200], detail=user.username
        )
        _apply(
            user,
            {k: v for k, v in data.items() if k not in ("userName", "active")},
            via=via,
            replace=True,
        )
        if "active" in data and not _as_bool(data["active"]):
            _set_active(user, False, via=via)
    user.refresh_from_db()
    response = _json(user_resource(user), status=201)
    response["Location"] = f"{_base()}/Users/{user.pk}"
    return response


@scim_endpoint("GET", "PUT", "PATCH", "DELETE")
def user(request: HttpRequest, scim_user_id: str, *, via: str) -> HttpResponse:
    someone = _user(scim_user_id)
    if request.method == "GET":
        return _json(user_resource(someone))
    if request.method == "DELETE":
        if someone.is_active:
            service.deactivate(actor=None, user=someone, via=via)
        return HttpResponse(status=204)
    data = _body(request)
    with transaction.atomic():
        if request.method == "PUT":
            _apply(someone, data, via=via, replace=True)
        else:
            _patch_user(someone, data, via=via)
    someone.refresh_from_db()
    return _json(user_resource(someone))


def _operations(data: dict) -> list[dict]:
    operations = data.get("Operations")
    if not isinstance(operations, list) or not all(isinstance(op, dict) for op in operations):
        raise ScimError(400, _("A PATCH carries a list of Operations."), "invalidSyntax")
    return operations


def _patch_user(user: User, data: dict, *, via: str) -> None:
    for operation in _operations(data):
        op = str(operation.get("op", "")).lower()
        path = operation.get("path")
        value = operation.get("value")
        if op not in ("add", "replace", "remove"):
            raise ScimError(400, _("op must be add, replace or remove."), "invalidSyntax")
        if not path:
            if op == "remove" or not isinstance(value, dict):
                raise ScimError(400, _("Without a path, value must be an object."), "noTarget")
            _apply(user, value, via=via, replace=False)
            continue
        path = str(path)
        role_match = _ROLE_PATH.match(path)
        if path.lower() == "roles" or role_match:
            current = set(service.roles_held(user)) - ({Role.ADMIN} if user.is_superuser else set())
            named = {role_match.group(1)} if role_match else set()
            given = _role_values(value) if value not in (None, []) else set()
            if op == "replace":
                wanted = given
            elif op == "add":
                wanted = current | given
            else:
                wanted = current - (named | given) if (named or given) else set()
            service.roles_set(actor=None, user=user, roles=_role_values(list(wanted)), via=via)
        elif path.lower() == "active":
            if op == "remove":
                raise ScimError(400, _("active cannot be removed."), "mutability")
            _set_active(user, _as_bool(value), via=via)
        elif path in ("userName", "name.givenName", "name.familyName", "emails", "name"):
            _apply(user, {path: value if op != "remove" else ""}, via=via, replace=False)
        elif _EMAIL_VALUE_PATH.match(path):
            email = [{"value": value, "primary": True}] if op != "remove" else []
            _apply(user, {"emails": email}, via=via, replace=False)
        elif path in NOT_KEPT:
            continue  # accepted, not kept (documented)
        else:
            raise ScimError(
                400, _("%(path)s cannot be changed here.") % {"path": path}, "invalidPath"
            )


# --- Groups (the roles) ----------------------------------------------------------------


def group_resource(role: str, *, members: bool = True) -> dict:
    resource: dict[str, Any] = {
        "schemas": [GROUP],
        "id": role,
        "displayName": str(Role(role).label),
        "meta": {"resourceType": "Group", "location": f"{_base()}/Groups/{role}"},
    }
    if members:
        holders = get_user_model().objects.filter(groups__name=role).order_by("pk")
        resource["members"] = [
            {"value": str(u.pk), "display": u.username, "$ref": f"{_base()}/Users/{u.pk}"}
            for u in holders
        ]
    return resource


def _role(scim_group_id: str) -> str:
    if scim_group_id not in Role.values:
        raise ScimError(
            404, _("No such group. The groups are the roles: %s.") % ", ".join(Role.values)
        )
    return scim_group_id


def _wants_members(request: HttpRequest) -> bool:
    excluded = request.GET.get("excludedAttributes", "")
    return "members" not in {name.strip().lower() for name in excluded.split(",")}


@scim_endpoint("GET")
def groups(request: HttpRequest, *, via: str) -> HttpResponse:
    start, count = _paging(request)
    roles = list(Role.values)
    wanted = _filter(request)
    if wanted is not None:
        attribute, value = wanted
        if attribute == "displayname":
            roles = [r for r in roles if value.lower() in (r, str(Role(r).label).lower())]
        elif attribute == "id":
            roles = [r for r in roles if r == value]
        else:
            raise ScimError(
                400, _("Groups are filtered by displayName or id only."), "invalidFilter"
            )
    page = roles[start - 1 : start - 1 + count]
    members = _wants_members(request)
    return _list([group_resource(r, members=members) for r in page], len(roles), start)


def _member(value: Any) -> User:
    key = value.get("value") if isinstance(value, dict) else value
    return _user(str(key or ""))


@scim_endpoint("GET", "PATCH", "PUT")
def group(request: HttpRequest, scim_group_id: str, *, via: str) -> HttpResponse:
    role = _role(scim_group_id)
    if request.method == "GET":
        return _json(group_resource(role, members=_wants_members(request)))
    data = _body(request)
    with transaction.atomic():
        if request.method == "PUT":
            _replace_members(role, data.get("members") or [], via=via)
        else:
            for operation in _operations(data):
                _patch_group(role, operation, via=via)
    if request.method == "PATCH" and request.GET.get("attributes") is None:
        return HttpResponse(status=204)
    return _json(group_resource(role))


def _replace_members(role: str, members: Any, *, via: str) -> None:
    if not isinstance(members, list):
        raise ScimError(400, _("members must be a list."), "invalidValue")
    wanted = {u.pk: u for u in (_member(m) for m in members)}
    current = {u.pk: u for u in get_user_model().objects.filter(groups__name=role)}
    for pk, person in wanted.items():
        if pk not in current:
            service.role_members_change(user=person, role=role, add=True, via=via)
    for pk, person in current.items():
        if pk not in wanted:
            service.role_members_change(user=person, role=role, add=False, via=via)


def _patch_group(role: str, operation: dict, *, via: str) -> None:
    op = str(operation.get("op", "")).lower()
    path = str(operation.get("path") or "")
    value = operation.get("value")
    member_match = _MEMBER_PATH.match(path)
    if op == "replace" and path.lower() == "members":
        _replace_members(role, value or [], via=via)
        return
    if op == "replace" and not path and isinstance(value, dict):
        if "members" in value:
            _replace_members(role, value["members"] or [], via=via)
        return  # a displayName sent back as it is changes nothing: roles keep their names
    if op == "add" and path.lower() == "members":
        for item in value if isinstance(value, list) else [value]:
            service.role_members_change(user=_member(item), role=role, add=True, via=via)
        return
    if op == "remove" and (member_match or path.lower() == "members"):
        items = [member_match.group(1)] if member_match else value
        if items is None:
            _replace_members(role, [], via=via)
            return
        for item in items if isinstance(items, list) else [items]:
            service.role_members_change(user=_member(item), role=role, add=False, via=via)
        return
    raise ScimError(
        400, _("Only the members of a group change: add, remove or replace them."), "invalidPath"
    )


# --- What the service offers -----------------------------------------------------------


@scim_endpoint("GET")
def service_provider_config(request: HttpRequest, *, via: str) -> HttpResponse:
    return _json(
        {
            "schemas": [SERVICE_PROVIDER],
            "documentationUri": settings.SITE_URL + "/api/docs/",
            "patch": {"supported": True},
            "bulk": {"supported": False, "maxOperations": 0, "maxPayloadSize": 0},
            "filter": {"supported": True, "maxResults": MAX_RESULTS},
            "changePassword": {"supported": False},
            "sort": {"supported": False},
            "etag": {"supported": False},
            "authenticationSchemes": [
                {
                    "type": "oauthbearertoken",
                    "name": "Bearer token",
                    "description": "A provisioning token an administrator makes in Diligence.",
                    "primary": True,
                }
            ],
            "meta": {
                "resourceType": "ServiceProviderConfig",
                "location": f"{_base()}/ServiceProviderConfig",
            },
        }
    )


RESOURCE_TYPES = [
    {"id": "User", "name": "User", "endpoint": "/Users", "schema": USER},
    {"id": "Group", "name": "Group", "endpoint": "/Groups", "schema": GROUP},
]


def _resource_type(item: dict) -> dict:
    return {
        "schemas": [RESOURCE_TYPE],
        **item,
        "meta": {
            "resourceType": "ResourceType",
            "location": f"{_base()}/ResourceTypes/{item['id']}",
        },
    }


@scim_endpoint("GET")
def resource_types(request: HttpRequest, *, via: str) -> HttpResponse:
    found = [_resource_type(item) for item in RESOURCE_TYPES]
    return _list(found, len(found), 1)


def _attribute(name: str, kind: str = "string", **more: Any) -> dict:
    return {
        "name": name,
        "type": kind,
        "multiValued": False,
        "required": False,
        "caseExact": False,
        "mutability": "readWrite",
        "returned": "default",
        "uniqueness": "none",
        **more,
    }


def _multi(name: str, mutability: str = "readWrite") -> dict:
    return _attribute(
        name,
        "complex",
        multiValued=True,
        mutability=mutability,
        subAttributes=[_attribute("value"), _attribute("display", mutability="readOnly")],
    )


SCHEMAS = [
    {
        "id": USER,
        "name": "User",
        "description": "A person's account",
        "attributes": [
            _attribute("userName", required=True, uniqueness="server"),
            _attribute(
                "name",
                "complex",
                subAttributes=[_attribute("givenName"), _attribute("familyName")],
            ),
            _attribute("displayName", mutability="readOnly"),
            _multi("emails"),
            _attribute("active", "boolean"),
            _multi("roles"),
            _multi("groups", mutability="readOnly"),
        ],
    },
    {
        "id": GROUP,
        "name": "Group",
        "description": "One of the app's roles",
        "attributes": [
            _attribute("displayName", mutability="readOnly", required=True),
            _multi("members"),
        ],
    },
]


def _schema(item: dict) -> dict:
    return {
        "schemas": [SCHEMA],
        **item,
        "meta": {"resourceType": "Schema", "location": f"{_base()}/Schemas/{item['id']}"},
    }


@scim_endpoint("GET")
def schemas(request: HttpRequest, *, via: str) -> HttpResponse:
    found = [_schema(item) for item in SCHEMAS]
    return _list(found, len(found), 1)
