"""Checking a whole access-matrix edit before anything is written.

Errors are keyed by the field at fault (``grants[2].role``,
``controls[0].status``) so the API and the grid editor can show each one in
place; one bad cell refuses the whole edit.
"""

import re
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.text import slugify
from django.utils.translation import gettext as _

from apps.access.models import ControlStatus, PermissionKind
from apps.access.rules import period_errors

KEY_PATTERN = re.compile(r"^[-a-zA-Z0-9_]{1,50}$")
WRITE_KINDS = {PermissionKind.CLUSTER_ADMIN, PermissionKind.JOB_SUBMIT, PermissionKind.DATA_WRITE}
MAX_NAME = 200
MAX_TEXT = 2000


@dataclass
class MatrixPayload:
    roles: list[dict[str, Any]]
    permissions: list[dict[str, Any]]
    grants: list[dict[str, Any]]
    controls: list[dict[str, Any]]
    periods: dict[str, int | None]

    def content(self) -> tuple:
        return (
            tuple((r["key"], r["name"], r["is_audit_role"]) for r in self.roles),
            tuple((p["key"], p["name"], p["kind"], p["is_write"]) for p in self.permissions),
            frozenset((g["role"], g["permission"], g["justification"]) for g in self.grants),
        )


def key_from_name(name: str) -> str:
    return slugify(name).replace("-", "_")[:50]


def clean_matrix_payload(
    *,
    roles: list[dict[str, Any]],
    permissions: list[dict[str, Any]],
    grants: list[dict[str, Any]],
    controls: list[dict[str, Any]],
    control_keys: list[str],
    periods: dict[str, Any] | None = None,
) -> MatrixPayload:
    errors: dict[str, list[str]] = {}

    def fail(field: str, message: str) -> None:
        errors.setdefault(field, []).append(message)

    clean_roles = _rows("roles", roles, fail, _role)
    clean_permissions = _rows("permissions", permissions, fail, _permission)
    if not roles:
        fail("roles", _("A matrix needs at least one role."))
    if not permissions:
        fail("permissions", _("A matrix needs at least one permission."))
    role_keys = {r["key"] for r in clean_roles}
    permission_keys = {p["key"] for p in clean_permissions}
    clean_grants = []
    seen_cells = set()
    for i, grant in enumerate(grants):
        where = f"grants[{i}]"
        role, permission = str(grant.get("role", "")), str(grant.get("permission", ""))
        if role not in role_keys:
            fail(f"{where}.role", _("There is no role “%(key)s” in this matrix.") % {"key": role})
        if permission not in permission_keys:
            fail(
                f"{where}.permission",
                _("There is no permission “%(key)s” in this matrix.") % {"key": permission},
            )
        if (role, permission) in seen_cells:
            fail(
                where,
                _("The cell %(role)s × %(permission)s is granted twice.")
                % {"role": role, "permission": permission},
            )
        seen_cells.add((role, permission))
        justification = str(grant.get("justification") or "").strip()
        if len(justification) > MAX_TEXT:
            fail(f"{where}.justification", _("At most %(n)s characters.") % {"n": MAX_TEXT})
        clean_grants.append(
            {"role": role, "permission": permission, "justification": justification}
        )
    clean_controls = []
    for i, control in enumerate(controls):
        where = f"controls[{i}]"
        key, status = str(control.get("key", "")), str(control.get("status", ""))
        if key not in control_keys:
            fail(f"{where}.key", _("There is no control “%(key)s” in this matrix.") % {"key": key})
        if status not in ControlStatus.values:
            fail(
                f"{where}.status",
                _("“%(value)s” is not a control status; use one of %(choices)s.")
                % {"value": status, "choices": ", ".join(ControlStatus.values)},
            )
        evidence = str(control.get("evidence") or "").strip()
        if len(evidence) > MAX_TEXT:
            fail(f"{where}.evidence", _("At most %(n)s characters.") % {"n": MAX_TEXT})
        clean_controls.append({"key": key, "status": status, "evidence": evidence})
    for name, message in period_errors(periods or {}).items():
        fail(f"periods.{name}", message)
    if errors:
        raise ValidationError(errors)
    return MatrixPayload(
        clean_roles, clean_permissions, clean_grants, clean_controls, dict(periods or {})
    )


def _rows(name: str, rows: list[dict[str, Any]], fail, clean_one) -> list[dict[str, Any]]:
    cleaned, seen = [], set()
    for i, row in enumerate(rows):
        where = f"{name}[{i}]"
        label = str(row.get("name") or "").strip()
        key = str(row.get("key") or "").strip() or key_from_name(label)
        if not label:
            fail(f"{where}.name", _("Give it a name."))
        elif len(label) > MAX_NAME:
            fail(f"{where}.name", _("At most %(n)s characters.") % {"n": MAX_NAME})
        if label and not KEY_PATTERN.match(key):
            fail(f"{where}.key", _("Use letters, digits, hyphens and underscores (at most 50)."))
        elif key in seen:
            fail(
                f"{where}.key",
                _("“%(key)s” is used twice; each key must be unique.") % {"key": key},
            )
        seen.add(key)
        cleaned.append({"key": key, "name": label, "position": i, **clean_one(where, row, fail)})
    return cleaned


def _role(where: str, row: dict[str, Any], fail) -> dict[str, Any]:
    return {"is_audit_role": bool(row.get("is_audit_role", False))}


def _permission(where: str, row: dict[str, Any], fail) -> dict[str, Any]:
    kind = str(row.get("kind") or PermissionKind.OTHER)
    if kind not in PermissionKind.values:
        fail(
            f"{where}.kind",
            _("“%(value)s” is not a permission kind; use one of %(choices)s.")
            % {"value": kind, "choices": ", ".join(PermissionKind.values)},
        )
    is_write = row.get("is_write")
    return {"kind": kind, "is_write": kind in WRITE_KINDS if is_write is None else bool(is_write)}
