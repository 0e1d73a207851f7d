"""Writes to access matrices and network plans.

A matrix is saved whole: roles, permissions, grants and control statuses in one
transaction under one change reason and one version check, so a reviewer never
sees half an edit. Input is validated completely before the first write.
"""

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.access.defaults import DEFAULT_CONTROLS, DEFAULT_WORKLOAD_LINKS
from apps.access.models import (
    AccessControl,
    AccessGrant,
    AccessMatrix,
    AccessPermission,
    AccessRole,
    DataSent,
    LinkChoice,
    NetworkPlan,
    WorkloadLink,
    WorkloadType,
)
from apps.access.payload import MatrixPayload, clean_matrix_payload
from apps.access.rules import matrix_state, review_by_after, risk_acceptance_errors
from apps.cases.models import ProcurementCase
from apps.core.services import tracked_create, tracked_delete, tracked_update

REVIEW_CLEARED = " (matrix changed: the last review no longer covers it)"


def access_matrix_save(
    *,
    actor,
    case: ProcurementCase,
    roles: list[dict[str, Any]],
    permissions: list[dict[str, Any]],
    grants: list[dict[str, Any]],
    controls: list[dict[str, Any]] | None = None,
    periods: dict[str, Any] | None = None,
    reason: str = "",
    expected_version: int | None = None,
) -> AccessMatrix:
    """Replace the case's matrix with the given roles, permissions and grants.

    Roles and permissions absent from the lists are removed with their grants;
    controls not listed keep their status, and periods not named keep their
    value (``None`` clears one). Creates the matrix on first save.
    """
    if not actor.has_perm("access.change_accessmatrix"):
        raise PermissionDenied(_("Only a tech lead may edit the access matrix."))
    with transaction.atomic():
        # Serialises the first save of a case's matrix (OneToOne) between editors.
        ProcurementCase.objects.select_for_update().filter(pk=case.pk).first()
        matrix = (
            AccessMatrix.objects.filter(case=case)
            .prefetch_related("roles__grants", "permissions", "controls")
            .first()
        )
        control_keys = (
            [c.key for c in matrix.controls.all()] if matrix else [k for k, _t in DEFAULT_CONTROLS]
        )
        payload = clean_matrix_payload(
            roles=roles,
            permissions=permissions,
            grants=grants,
            controls=controls or [],
            control_keys=control_keys,
            periods=periods,
        )
        if matrix is None:
            matrix = _matrix_create(actor=actor, case=case, reason=reason, periods=payload.periods)
            changed_reason = reason.strip() or "Access matrix started"
        else:
            changed = payload.content() != _content(matrix)
            clear_review = changed and matrix.reviewed_at is not None
            fields: dict[str, Any] = {
                name: value
                for name, value in payload.periods.items()
                if getattr(matrix, name) != value
            }
            if clear_review:
                fields.update(reviewed_by=None, reviewed_at=None, review_by=None)
            matrix = tracked_update(
                matrix,
                actor=actor,
                reason=reason + (REVIEW_CLEARED if clear_review and reason.strip() else ""),
                fields=fields,
                expected_version=expected_version,
            )
            changed_reason = reason.strip()
        _children_sync(actor=actor, matrix=matrix, payload=payload, reason=changed_reason)
    return matrix


def _matrix_create(*, actor, case, reason: str, periods: dict[str, Any]) -> AccessMatrix:
    why = reason.strip() or "Access matrix started"
    matrix = tracked_create(AccessMatrix, actor=actor, reason=why, case=case, **periods)
    for position, (key, title) in enumerate(DEFAULT_CONTROLS):
        tracked_create(
            AccessControl,
            actor=actor,
            reason=why,
            matrix=matrix,
            key=key,
            title=str(title),
            position=position,
        )
    return matrix


def _content(matrix: AccessMatrix) -> tuple:
    data = matrix.as_data()
    return (
        tuple((r.key, r.name, r.is_audit_role) for r in data.roles),
        tuple((p.key, p.name, p.kind, p.is_write) for p in data.permissions),
        frozenset((g.role, g.permission, g.justification) for g in data.grants),
    )


def _children_sync(*, actor, matrix: AccessMatrix, payload: MatrixPayload, reason: str) -> None:
    roles = {r.key: r for r in AccessRole.objects.filter(matrix=matrix)}
    permissions = {p.key: p for p in AccessPermission.objects.filter(matrix=matrix)}
    existing_grants = {
        (g.role.key, g.permission.key): g
        for g in AccessGrant.objects.filter(role__matrix=matrix).select_related(
            "role", "permission"
        )
    }
    wanted_cells = {(g["role"], g["permission"]): g for g in payload.grants}
    # Grants go first: a removed role or permission takes its cells with it.
    for cell, existing in existing_grants.items():
        if cell not in wanted_cells:
            tracked_delete(existing, actor=actor, reason=reason or "Grant removed")
    for key, role in roles.items():
        if key not in {r["key"] for r in payload.roles}:
            tracked_delete(role, actor=actor, reason=reason or "Role removed")
    for key, permission in permissions.items():
        if key not in {p["key"] for p in payload.permissions}:
            tracked_delete(permission, actor=actor, reason=reason or "Permission removed")
    roles = {
        r["key"]: _upsert(AccessRole, roles.get(r["key"]), actor, reason, matrix=matrix, **r)
        for r in payload.roles
    }
    permissions = {
        p["key"]: _upsert(
            AccessPermission, permissions.get(p["key"]), actor, reason, matrix=matrix, **p
        )
        for p in payload.permissions
    }
    for cell, grant in wanted_cells.items():
        current = existing_grants.get(cell)
        fields = {"justification": grant["justification"]}
        if current is None:
            tracked_create(
                AccessGrant,
                actor=actor,
                reason=reason or "Granted",
                role=roles[cell[0]],
                permission=permissions[cell[1]],
                **fields,
            )
        elif current.justification != fields["justification"]:
            tracked_update(current, actor=actor, reason=reason, fields=fields)
    current_controls = {c.key: c for c in AccessControl.objects.filter(matrix=matrix)}
    for control in payload.controls:
        row = current_controls[control["key"]]
        fields = {"status": control["status"], "evidence": control["evidence"]}
        if (row.status, row.evidence) != (fields["status"], fields["evidence"]):
            tracked_update(row, actor=actor, reason=reason or "Control assessed", fields=fields)


def _upsert(model, current, actor, reason: str, **fields):
    if current is None:
        return tracked_create(model, actor=actor, reason=reason or "Added", **fields)
    changes = {
        name: value
        for name, value in fields.items()
        if name not in ("matrix", "key") and getattr(current, name) != value
    }
    if not changes:
        return current
    return tracked_update(current, actor=actor, reason=reason, fields=changes)


def access_matrix_review(
    *, actor, matrix: AccessMatrix, note: str = "", expected_version: int | None = None
) -> AccessMatrix:
    """Record the quarterly review: reviewer, time, and the next review-by date."""
    if not actor.has_perm("access.review_accessmatrix"):
        raise PermissionDenied(_("Only a tech lead may mark the access matrix reviewed."))
    now = timezone.now()
    violations = matrix_state(matrix, timezone.localdate(now)).violations
    if violations:
        raise ValidationError(
            {
                "review": _(
                    "Resolve the %(n)s segregation-of-duties violation(s) before marking the "
                    "matrix reviewed."
                )
                % {"n": len(violations)}
            }
        )
    return tracked_update(
        matrix,
        actor=actor,
        reason="Quarterly access review" + (f": {note.strip()}" if note.strip() else ""),
        fields={
            "reviewed_by": actor,
            "reviewed_at": now,
            "review_by": review_by_after(timezone.localdate(now)),
        },
        expected_version=expected_version,
    )


def control_risk_accept(
    *,
    actor,
    control: AccessControl,
    reason: str,
    expires_on,
    expected_version: int | None = None,
) -> AccessControl:
    """Record the tech lead's acceptance of a control not in place: who, why, until when.

    Accepting again replaces the acceptance in force; the earlier one stays in
    the history.
    """
    if not actor.has_perm("access.accept_control_risk"):
        raise PermissionDenied(_("Only a tech lead may accept the risk of an access control."))
    with transaction.atomic():
        current = (
            AccessControl.objects.select_for_update().select_related("matrix").get(pk=control.pk)
        )
        errors = risk_acceptance_errors(
            control=current.as_data(),
            periods=current.matrix.periods(),
            reason=reason,
            expires_on=expires_on,
            today=timezone.localdate(),
        )
        if errors:
            raise ValidationError(errors)
        return tracked_update(
            current,
            actor=actor,
            reason=f"Risk accepted until {expires_on.isoformat()}: {reason.strip()}",
            fields={
                "risk_reason": reason.strip(),
                "risk_expires_on": expires_on,
                "risk_accepted_by": actor,
                "risk_accepted_at": timezone.now(),
            },
            expected_version=expected_version,
        )


PLAN_FIELDS = (
    "target_latency_ms",
    "user_to_gateway_ms",
    "estimated_rtt_ms",
    "rtt_source",
    "queueing_and_first_token_ms",
    "multi_node_training_in_one_cluster",
    "notes",
)


def network_plan_save(
    *,
    actor,
    case: ProcurementCase,
    fields: dict[str, Any],
    links: list[dict[str, Any]],
    reason: str = "",
    expected_version: int | None = None,
) -> NetworkPlan:
    """Save the plan and its workload links (the full list) in one transaction."""
    if not actor.has_perm("access.change_networkplan"):
        raise PermissionDenied(_("Only a tech lead may edit the network plan."))
    unknown = set(fields) - set(PLAN_FIELDS)
    if unknown:
        raise ValidationError({name: _("This field cannot be set here.") for name in unknown})
    wanted = clean_links(links)
    with transaction.atomic():
        ProcurementCase.objects.select_for_update().filter(pk=case.pk).first()
        plan = NetworkPlan.objects.filter(case=case).first()
        if plan is None:
            why = reason.strip() or "Network plan started"
            plan = tracked_create(NetworkPlan, actor=actor, reason=why, case=case, **fields)
        else:
            why = reason
            plan = tracked_update(
                plan, actor=actor, reason=reason, fields=fields, expected_version=expected_version
            )
        current = {link.workload: link for link in WorkloadLink.objects.filter(plan=plan)}
        for workload, saved in current.items():
            if workload not in wanted:
                tracked_delete(saved, actor=actor, reason=why)
        for workload, link_fields in wanted.items():
            link = current.get(workload)
            if link is None:
                tracked_create(WorkloadLink, actor=actor, reason=why, plan=plan, **link_fields)
            elif any(getattr(link, k) != v for k, v in link_fields.items()):
                tracked_update(link, actor=actor, reason=why, fields=link_fields)
    return plan


def clean_links(links: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Workload links by workload type; errors keyed ``links[i].field``."""
    errors: dict[str, list[str]] = {}
    wanted: dict[str, dict[str, Any]] = {}
    for i, row in enumerate(links):
        where = f"links[{i}]"
        workload, link = str(row.get("workload", "")), str(row.get("link", ""))
        if workload not in WorkloadType.values:
            errors[f"{where}.workload"] = [
                _("“%(value)s” is not a workload type; use one of %(choices)s.")
                % {"value": workload, "choices": ", ".join(WorkloadType.values)}
            ]
        elif workload in wanted:
            errors[f"{where}.workload"] = [_("“%(value)s” is listed twice.") % {"value": workload}]
        if link not in LinkChoice.values:
            errors[f"{where}.link"] = [
                _("“%(value)s” is not a link choice; use one of %(choices)s.")
                % {"value": link, "choices": ", ".join(LinkChoice.values)}
            ]
        # docs/rules/access.md#data-paths: blank or absent = not stated.
        data_sent = str(row.get("data_sent") or "").strip() or None
        if data_sent is not None and data_sent not in DataSent.values:
            errors[f"{where}.data_sent"] = [
                _("“%(value)s” is not a choice of what the link sends; use one of %(choices)s.")
                % {"value": data_sent, "choices": ", ".join(DataSent.values)}
            ]
        default_metric = DEFAULT_WORKLOAD_LINKS.get(workload, ("", ""))[0]
        metric = str(row.get("key_metric") or "").strip() or str(default_metric)
        if not metric:
            errors[f"{where}.key_metric"] = [_("Name the metric that matters for this workload.")]
        wanted[workload] = {
            "workload": workload,
            "key_metric": metric[:200],
            "link": link,
            "data_sent": data_sent,
            "notes": str(row.get("notes") or "").strip(),
        }
    if errors:
        raise ValidationError(errors)
    return wanted
