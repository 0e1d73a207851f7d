"""Browser pages: a case's sets, an upload, one set's statistics and download, a plan's sets."""

from django.contrib import messages
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from apps.acceptance.selectors import case_plans, plan_get_for
from apps.cases.selectors import case_get_for
from apps.core.access import role_required
from apps.core.downloads import stored_file_response
from apps.core.forms import apply_service_errors
from apps.core.services import SERVICE_ERRORS
from apps.core.uploads import declared_over, refused_unread
from apps.workloads import rules, services
from apps.workloads.forms import PlanSetsForm, SetUploadForm
from apps.workloads.models import SetKind
from apps.workloads.selectors import case_sets, plan_workload, set_get_for, set_stored_file


@role_required("workloads.view_workloadset")
def case_workloads(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk, offer_count=False)
    plans = [(plan, plan_workload(plan)) for plan in case_plans(case)]
    return render(
        request,
        "workloads/case_sets.html",
        {"case": case, "sets": case_sets(case), "plans": plans},
    )


@refused_unread(declared_over(services.set_max_bytes))  # before the CSRF check reads it
@role_required("workloads.add_workloadset")
def set_upload(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk, offer_count=False)
    form = SetUploadForm(request.POST or None, request.FILES or None)
    refusals, refused_total = [], 0
    if request.method == "POST" and form.is_valid():
        try:
            workload_set = services.workload_set_upload(
                actor=request.user,
                case=case,
                kind=form.cleaned_data["kind"],
                name=form.cleaned_data["name"],
                upload=form.cleaned_data["file"],
            )
        except services.SetRefusedError as refused:
            apply_service_errors(form, refused)
            refusals, refused_total = refused.refusals, refused.total
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Set stored with its SHA-256."))
            return redirect("workloads:set", pk=workload_set.pk)
    return render(
        request,
        "workloads/set_form.html",
        {"case": case, "form": form, "refusals": refusals, "refused_total": refused_total},
    )


@role_required("workloads.view_workloadset")
def set_detail(request: HttpRequest, pk: int) -> HttpResponse:
    workload_set = set_get_for(request.user, pk)
    statistics = workload_set.statistics or {}
    if workload_set.kind == SetKind.PROMPTS:
        groups = list((statistics.get("tiers") or {}).items())
    else:
        groups = [(_("inputs"), statistics.get("inputs") or {})]
    labels = rules.histogram_labels()
    rows = [
        (name, group, list(zip(labels, group.get("histogram") or [], strict=False)))
        for name, group in groups
    ]
    return render(
        request,
        "workloads/set_detail.html",
        {"case": workload_set.case, "set": workload_set, "groups": rows, "stats": statistics},
    )


@role_required("workloads.view_workloadset")
def set_download(request: HttpRequest, pk: int) -> HttpResponse | FileResponse:
    workload_set = set_get_for(request.user, pk)
    return stored_file_response(request, set_stored_file(workload_set))


@role_required("workloads.change_planworkload")
def plan_sets(request: HttpRequest, pk: int) -> HttpResponse:
    plan = plan_get_for(request.user, pk)
    sets = case_sets(plan.case)
    current = plan_workload(plan)
    initial = {
        "prompt_set": current.prompt_set_id if current else None,
        "sample_set": current.sample_set_id if current else None,
    }
    form = PlanSetsForm(request.POST or None, sets=sets, initial=initial)
    if request.method == "POST" and form.is_valid():
        by_pk = {s.pk: s for s in sets}
        try:
            services.plan_workload_set(
                actor=request.user,
                plan=plan,
                prompt_set=by_pk.get(form.cleaned_data["prompt_set"]),
                sample_set=by_pk.get(form.cleaned_data["sample_set"]),
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Required sets saved."))
            return redirect("workloads:case", pk=plan.case_id)
    return render(
        request, "workloads/plan_sets.html", {"case": plan.case, "plan": plan, "form": form}
    )
