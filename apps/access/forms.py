"""The access-matrix grid editor and the network-plan form.

The grid is one form: a row per role, a column per permission, a checkbox and
a justification per cell, blank rows/columns for new roles and permissions,
and the controls below. It is turned into the payload ``access_matrix_save``
takes, and the service's errors (keyed ``grants[2].role``…) are mapped back to
the input they concern.
"""

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from apps.access.models import (
    ControlStatus,
    DataSent,
    LinkChoice,
    NetworkPlan,
    PermissionKind,
    WorkloadType,
)
from apps.access.payload import WRITE_KINDS
from apps.access.rules import PERIOD_BOUNDS, period_label
from apps.core.forms import EditReasonMixin, apply_service_errors

MAX_NEW = 10


class MatrixGridForm(EditReasonMixin, forms.Form):
    new_roles = forms.IntegerField(widget=forms.HiddenInput, min_value=0, max_value=MAX_NEW)
    new_permissions = forms.IntegerField(widget=forms.HiddenInput, min_value=0, max_value=MAX_NEW)

    def __init__(
        self,
        *args,
        roles: list[dict],
        permissions: list[dict],
        grants: dict[tuple[str, str], str],
        controls: list[dict],
        creating: bool,
        periods: dict[str, int | None] | None = None,
        new_roles: int = 1,
        new_permissions: int = 1,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.fields["change_reason"].required = not creating
        self.fields["new_roles"].initial = new_roles
        self.fields["new_permissions"].initial = new_permissions
        self.row_ids = [(f"r-{r['key']}", r) for r in roles] + [
            (f"nr-{i}", None) for i in range(new_roles)
        ]
        self.col_ids = [(f"p-{p['key']}", p) for p in permissions] + [
            (f"np-{i}", None) for i in range(new_permissions)
        ]
        self.control_rows = controls
        for row_id, role in self.row_ids:
            self._role_fields(row_id, role)
        for col_id, permission in self.col_ids:
            self._permission_fields(col_id, permission)
        for row_id, role in self.row_ids:
            for col_id, permission in self.col_ids:
                cell = (role["key"], permission["key"]) if role and permission else None
                self.fields[f"cell.{row_id}.{col_id}"] = forms.BooleanField(
                    required=False, initial=cell in grants
                )
                self.fields[f"just.{row_id}.{col_id}"] = forms.CharField(
                    required=False,
                    max_length=2000,
                    initial=grants.get(cell, "") if cell else "",
                    widget=forms.Textarea(attrs={"rows": 2, "cols": 18}),
                )
        for control in controls:
            key = control["key"]
            self.fields[f"control.{key}.status"] = forms.ChoiceField(
                label=control["title"], choices=ControlStatus.choices, initial=control["status"]
            )
            self.fields[f"control.{key}.evidence"] = forms.CharField(
                label=_("Evidence note"),
                required=False,
                max_length=2000,
                initial=control["evidence"],
                widget=forms.Textarea(attrs={"rows": 2}),
            )
        for name, (low, high) in PERIOD_BOUNDS.items():
            self.fields[f"period.{name}"] = forms.IntegerField(
                label=period_label(name),
                required=False,
                min_value=low,
                max_value=high,
                initial=(periods or {}).get(name),
            )
        self.error_targets: dict[str, str] = {
            f"periods.{name}": f"period.{name}" for name in PERIOD_BOUNDS
        }

    def _role_fields(self, row_id: str, role: dict | None) -> None:
        self.fields[f"{row_id}.name"] = forms.CharField(
            label=_("Role"),
            required=role is not None,
            max_length=200,
            initial=role["name"] if role else "",
        )
        self.fields[f"{row_id}.audit"] = forms.BooleanField(
            label=_("audit role"), required=False, initial=bool(role and role["is_audit_role"])
        )
        if role is not None:
            self.fields[f"{row_id}.remove"] = forms.BooleanField(label=_("remove"), required=False)

    def _permission_fields(self, col_id: str, permission: dict | None) -> None:
        self.fields[f"{col_id}.name"] = forms.CharField(
            label=_("Permission"),
            required=permission is not None,
            max_length=200,
            initial=permission["name"] if permission else "",
        )
        self.fields[f"{col_id}.kind"] = forms.ChoiceField(
            label=_("kind"),
            choices=PermissionKind.choices,
            initial=permission["kind"] if permission else PermissionKind.OTHER,
        )
        self.fields[f"{col_id}.write"] = forms.BooleanField(
            label=_("write"), required=False, initial=bool(permission and permission["is_write"])
        )
        if permission is not None:
            self.fields[f"{col_id}.remove"] = forms.BooleanField(label=_("remove"), required=False)

    # Layout for the template.
    def header(self) -> list[dict]:
        return [
            {
                "id": col_id,
                "existing": permission is not None,
                "name": self[f"{col_id}.name"],
                "kind": self[f"{col_id}.kind"],
                "write": self[f"{col_id}.write"],
                "remove": self[f"{col_id}.remove"] if permission else None,
            }
            for col_id, permission in self.col_ids
        ]

    def grid(self, faults: dict[tuple[str, str], list[str]] | None = None) -> list[dict]:
        faults = faults or {}
        rows = []
        for row_id, role in self.row_ids:
            cells = []
            for col_id, permission in self.col_ids:
                cell = (role["key"], permission["key"]) if role and permission else None
                cells.append(
                    {
                        "checkbox": self[f"cell.{row_id}.{col_id}"],
                        "justification": self[f"just.{row_id}.{col_id}"],
                        "faults": faults.get(cell, []) if cell else [],
                    }
                )
            rows.append(
                {
                    "id": row_id,
                    "existing": role is not None,
                    "name": self[f"{row_id}.name"],
                    "audit": self[f"{row_id}.audit"],
                    "remove": self[f"{row_id}.remove"] if role else None,
                    "cells": cells,
                }
            )
        return rows

    def control_fields(self) -> list[tuple]:
        """(control, status, evidence, period or None) for each control row."""
        from apps.access.rules import CONTROL_PERIOD

        return [
            (
                c,
                self[f"control.{c['key']}.status"],
                self[f"control.{c['key']}.evidence"],
                self[f"period.{CONTROL_PERIOD[c['key']]}"] if c["key"] in CONTROL_PERIOD else None,
            )
            for c in self.control_rows
        ]

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        for row_id, role in self.row_ids:
            ticked = any(cleaned.get(f"cell.{row_id}.{col}") for col, _p in self.col_ids)
            if role is None and ticked and not cleaned.get(f"{row_id}.name", "").strip():
                self.add_error(f"{row_id}.name", _("Name the new role, or untick its cells."))
        for col_id, permission in self.col_ids:
            ticked = any(cleaned.get(f"cell.{row}.{col_id}") for row, _r in self.row_ids)
            if permission is None and ticked and not cleaned.get(f"{col_id}.name", "").strip():
                self.add_error(f"{col_id}.name", _("Name the new permission, or untick its cells."))
        return cleaned

    def payload(self) -> dict:
        """The edit as ``access_matrix_save`` takes it; remembers which input each entry is."""
        data = self.cleaned_data
        roles: list[dict[str, Any]] = []
        permissions: list[dict[str, Any]] = []
        grants: list[dict[str, Any]] = []
        controls: list[dict[str, Any]] = []
        kept_rows, kept_cols = {}, {}
        for row_id, role in self.row_ids:
            name = data.get(f"{row_id}.name", "").strip()
            if data.get(f"{row_id}.remove") or (role is None and not name):
                continue
            self._target(f"roles[{len(roles)}]", f"{row_id}.name")
            entry = {"name": name, "is_audit_role": data.get(f"{row_id}.audit", False)}
            if role is not None:
                entry["key"] = role["key"]
            roles.append(entry)
            kept_rows[row_id] = len(roles) - 1
        for col_id, permission in self.col_ids:
            name = data.get(f"{col_id}.name", "").strip()
            if data.get(f"{col_id}.remove") or (permission is None and not name):
                continue
            self._target(f"permissions[{len(permissions)}]", f"{col_id}.name")
            self.error_targets[f"permissions[{len(permissions)}].kind"] = f"{col_id}.kind"
            kind = data.get(f"{col_id}.kind") or PermissionKind.OTHER
            entry = {
                "name": name,
                "kind": kind,
                "is_write": data.get(f"{col_id}.write", False) or kind in WRITE_KINDS,
            }
            if permission is not None:
                entry["key"] = permission["key"]
            permissions.append(entry)
            kept_cols[col_id] = len(permissions) - 1
        for row_id, row in kept_rows.items():
            for col_id, col in kept_cols.items():
                if data.get(f"cell.{row_id}.{col_id}"):
                    self._target(f"grants[{len(grants)}]", f"just.{row_id}.{col_id}")
                    grants.append(
                        {
                            "role": _key(roles[row]),
                            "permission": _key(permissions[col]),
                            "justification": data.get(f"just.{row_id}.{col_id}", ""),
                        }
                    )
        for i, control in enumerate(self.control_rows):
            key = control["key"]
            self.error_targets[f"controls[{i}].status"] = f"control.{key}.status"
            self.error_targets[f"controls[{i}].evidence"] = f"control.{key}.evidence"
            controls.append(
                {
                    "key": key,
                    "status": data[f"control.{key}.status"],
                    "evidence": data.get(f"control.{key}.evidence", ""),
                }
            )
        periods = {name: data.get(f"period.{name}") for name in PERIOD_BOUNDS}
        return {
            "roles": roles,
            "permissions": permissions,
            "grants": grants,
            "controls": controls,
            "periods": periods,
        }

    def _target(self, prefix: str, field: str) -> None:
        for suffix in ("", ".key", ".name", ".role", ".permission", ".justification"):
            self.error_targets.setdefault(prefix + suffix, field)

    def show_service_errors(self, error: Exception) -> None:
        if isinstance(error, ValidationError) and hasattr(error, "error_dict"):
            for key, messages in error.message_dict.items():
                target = self.error_targets.get(key, key if key in self.fields else None)
                for message in messages:
                    self.add_error(target, message)
            return
        apply_service_errors(self, error)

    def values_as_initial(self) -> dict:
        """What was typed, to redraw the grid with one more blank row or column."""
        return {name: self[name].data for name in self.fields}


def _key(entry: dict) -> str:
    from apps.access.payload import key_from_name

    return entry.get("key") or key_from_name(entry["name"])


class MatrixReviewForm(forms.Form):
    note = forms.CharField(
        label=_("Review note"),
        required=False,
        max_length=500,
        help_text=_("What you checked; kept in the history with your name."),
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)


class RiskAcceptanceForm(forms.Form):
    reason = forms.CharField(
        label=_("Why the risk is accepted"),
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("What stands in for the control meanwhile, and who watches it."),
    )
    expires_on = forms.DateField(
        label=_("Accepted until"),
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text=_(
            "The acceptance holds through this day; the day after, the control blocks approval "
            "again. At most a year ahead."
        ),
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)


class NetworkPlanForm(EditReasonMixin, forms.ModelForm):
    class Meta:
        model = NetworkPlan
        fields = [
            "target_latency_ms",
            "user_to_gateway_ms",
            "estimated_rtt_ms",
            "rtt_source",
            "queueing_and_first_token_ms",
            "multi_node_training_in_one_cluster",
            "notes",
        ]
        widgets = {"notes": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args, creating: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["change_reason"].required = not creating


class WorkloadLinkForm(forms.Form):
    workload = forms.ChoiceField(choices=WorkloadType.choices, widget=forms.HiddenInput)
    in_use = forms.BooleanField(label=_("in use"), required=False)
    key_metric = forms.CharField(label=_("Key metric"), max_length=200, required=False)
    link = forms.ChoiceField(label=_("Link"), choices=LinkChoice.choices)
    # docs/rules/access.md#data-paths: held against the data-export assessment.
    data_sent = forms.ChoiceField(
        label=_("Data sent to the vendor over this link"),
        choices=[("", _("Not stated")), *DataSent.choices],
        required=False,
    )
    notes = forms.CharField(label=_("Notes"), max_length=2000, required=False)


WorkloadLinkFormSet = forms.formset_factory(WorkloadLinkForm, extra=0, max_num=4, absolute_max=4)
