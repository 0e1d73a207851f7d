"""Browser pages: the access matrix (read, grid editor, review) and the network plan."""

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.access import services
from apps.access.defaults import DEFAULT_CONTROLS, DEFAULT_WORKLOAD_LINKS, default_matrix_payload
from apps.access.forms import (
    MAX_NEW,
    MatrixGridForm,
    MatrixReviewForm,
    NetworkPlanForm,
    RiskAcceptanceForm,
    WorkloadLinkFormSet,
)
from apps.access.models import AccessMatrix, NetworkPlan, WorkloadType
from apps.access.rules import PERIOD_BOUNDS, control_gap
from apps.access.selectors import (
    access_control_of,
    access_matrix_of,
    matrix_view,
    network_plan_of,
    plan_view,
)
from apps.access.spreadsheet import access_workbook
from apps.cases.selectors import case_get_for
from apps.core.access import role_required
from apps.core.forms import apply_service_errors
from apps.core.services import SERVICE_ERRORS
from apps.core.spreadsheets import xlsx_response


@role_required("access.view_accessmatrix")
def matrix_detail(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    matrix = access_matrix_of(case)
    view = matrix_view(matrix) if matrix else None
    review_form = MatrixReviewForm(initial={"version": matrix.version}) if matrix else None
    return render(
        request,
        "access/matrix_detail.html",
        {"case": case, "view": view, "review_form": review_form, "matrix": matrix},
    )


@role_required("access.view_accessmatrix")
def matrix_workbook_download(request: HttpRequest, pk: int) -> HttpResponse:
    """The matrix's grid and controls as XLSX, to print or read offline."""
    case = case_get_for(request.user, pk)
    matrix = access_matrix_of(case)
    if matrix is None:
        raise Http404(_("This case has no access matrix yet."))
    content, filename = access_workbook(case, matrix)
    return xlsx_response(content, filename)


@role_required("access.change_accessmatrix")
def matrix_edit(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    matrix = access_matrix_of(case)
    spec = _grid_spec(matrix)
    new_roles, new_permissions = _count(request, "new_roles"), _count(request, "new_permissions")
    form = MatrixGridForm(
        request.POST or None,
        initial={"version": matrix.version if matrix else None},
        new_roles=new_roles,
        new_permissions=new_permissions,
        **spec,
    )
    if request.method == "POST" and {"add_role", "add_permission"} & set(request.POST):
        # Redraw with one more blank row or column, keeping what was typed; save nothing.
        new_roles = min(MAX_NEW, new_roles + ("add_role" in request.POST))
        new_permissions = min(MAX_NEW, new_permissions + ("add_permission" in request.POST))
        initial = form.values_as_initial()
        initial.update(new_roles=new_roles, new_permissions=new_permissions)
        form = MatrixGridForm(
            initial=initial, new_roles=new_roles, new_permissions=new_permissions, **spec
        )
    elif request.method == "POST" and form.is_valid():
        try:
            services.access_matrix_save(
                actor=request.user,
                case=case,
                reason=form.cleaned_data["change_reason"],
                expected_version=form.cleaned_data["version"] if matrix else None,
                **form.payload(),
            )
        except SERVICE_ERRORS as error:
            form.show_service_errors(error)
        else:
            messages.success(request, _("Access matrix saved."))
            return redirect("access:matrix", pk=case.pk)
    view = matrix_view(matrix) if matrix else None
    faults: dict[tuple[str, str], list[str]] = {}
    if view:
        for violation in view.state.violations:
            for cell in violation.cells:
                faults.setdefault(cell, []).append(violation.message)
    return render(
        request,
        "access/matrix_edit.html",
        {"case": case, "form": form, "grid": form.grid(faults), "view": view, "matrix": matrix},
    )


def _grid_spec(matrix: AccessMatrix | None) -> dict:
    if matrix is None:
        payload = default_matrix_payload()
        titles = dict(DEFAULT_CONTROLS)
        return {
            "roles": payload["roles"],
            "permissions": payload["permissions"],
            "grants": {(g["role"], g["permission"]): g["justification"] for g in payload["grants"]},
            "controls": [
                {"key": key, "title": str(titles[key]), "status": "missing", "evidence": ""}
                for key in titles
            ],
            "periods": {},
            "creating": True,
        }
    data = matrix.as_data()
    return {
        "roles": [vars(r) for r in data.roles],
        "permissions": [vars(p) for p in data.permissions],
        "grants": {(g.role, g.permission): g.justification for g in data.grants},
        "controls": [
            {"key": c.key, "title": c.title, "status": c.status, "evidence": c.evidence}
            for c in sorted(matrix.controls.all(), key=lambda c: (c.position, c.pk))
        ],
        "periods": {name: getattr(matrix, name) for name in PERIOD_BOUNDS},
        "creating": False,
    }


def _count(request: HttpRequest, name: str) -> int:
    try:
        return max(0, min(MAX_NEW, int(request.POST.get(name, 1))))
    except ValueError:
        return 1


@role_required("access.review_accessmatrix")
@require_POST
def matrix_review(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    matrix = access_matrix_of(case)
    if matrix is None:
        messages.error(request, _("There is no access matrix to review yet."))
        return redirect("access:matrix", pk=case.pk)
    form = MatrixReviewForm(request.POST)
    if form.is_valid():
        try:
            services.access_matrix_review(
                actor=request.user,
                matrix=matrix,
                note=form.cleaned_data["note"],
                expected_version=form.cleaned_data["version"],
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Access matrix marked reviewed."))
            return redirect("access:matrix", pk=case.pk)
    return render(
        request,
        "access/matrix_detail.html",
        {"case": case, "view": matrix_view(matrix), "review_form": form},
        status=400,
    )


@role_required("access.accept_control_risk")
def control_accept_risk(request: HttpRequest, pk: int, control_key: str) -> HttpResponse:
    """The tech lead accepts, for a stated time, the risk of one control not in place."""
    case = case_get_for(request.user, pk)
    control = access_control_of(case, control_key)
    form = RiskAcceptanceForm(request.POST or None, initial={"version": control.version})
    if request.method == "POST" and form.is_valid():
        try:
            services.control_risk_accept(
                actor=request.user,
                control=control,
                reason=form.cleaned_data["reason"],
                expires_on=form.cleaned_data["expires_on"],
                expected_version=form.cleaned_data["version"],
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(
                request, _("Risk accepted for “%(title)s”.") % {"title": control.title}
            )
            return redirect(reverse("access:matrix", kwargs={"pk": case.pk}) + "#controls")
    gap = control_gap(control.as_data(), control.matrix.periods(), timezone.localdate())
    return render(
        request,
        "access/control_accept_risk.html",
        {"case": case, "control": control, "form": form, "gap": gap},
        status=400 if request.method == "POST" else 200,
    )


@role_required("access.view_networkplan")
def plan_detail(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    plan = network_plan_of(case)
    return render(
        request,
        "access/plan_detail.html",
        {"case": case, "view": plan_view(plan) if plan else None},
    )


@role_required("access.change_networkplan")
def plan_edit(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    plan = network_plan_of(case)
    form = NetworkPlanForm(
        request.POST or None,
        instance=plan,
        creating=plan is None,
        initial={"version": plan.version if plan else None},
    )
    links = WorkloadLinkFormSet(request.POST or None, initial=_link_rows(plan), prefix="links")
    if request.method == "POST" and form.is_valid() and links.is_valid():
        fields = {name: form.cleaned_data[name] for name in NetworkPlanForm.Meta.fields}
        rows = [row for row in links.cleaned_data if row.get("in_use")]
        try:
            services.network_plan_save(
                actor=request.user,
                case=case,
                fields=fields,
                links=rows,
                reason=form.cleaned_data["change_reason"],
                expected_version=form.cleaned_data["version"] if plan else None,
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Network plan saved."))
            return redirect("access:plan", pk=case.pk)
    return render(
        request,
        "access/plan_edit.html",
        {"case": case, "form": form, "links": links, "plan": plan},
    )


def _link_rows(plan: NetworkPlan | None) -> list[dict]:
    current = {link.workload: link for link in plan.links.all()} if plan else {}
    rows = []
    for workload in WorkloadType.values:
        link = current.get(workload)
        metric, choice = DEFAULT_WORKLOAD_LINKS[workload]
        rows.append(
            {
                "workload": workload,
                "in_use": link is not None,
                "key_metric": link.key_metric if link else str(metric),
                "link": link.link if link else choice,
                "data_sent": (link.data_sent or "") if link else "",
                "notes": link.notes if link else "",
            }
        )
    return rows
