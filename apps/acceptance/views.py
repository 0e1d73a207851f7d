"""Browser pages: a case's acceptance, the plan with its four layers, results, attachments,
sign-off."""

from django.contrib import messages
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from apps.acceptance import services
from apps.acceptance.forms import (
    AttachmentForm,
    PlanCreateForm,
    PlanEditForm,
    ResultEditForm,
    ResultForm,
    SignOffForm,
    model_fields,
)
from apps.acceptance.selectors import (
    acceptance_state,
    active_plan,
    attachment_get_for,
    attachment_stored_file,
    case_plans,
    plan_get_for,
    result_get_for,
)
from apps.cases.selectors import case_get_for
from apps.core.access import role_required
from apps.core.downloads import stored_file_response
from apps.core.forms import apply_service_errors
from apps.core.services import SERVICE_ERRORS
from apps.core.uploads import declared_over, refused_unread
from apps.offers.selectors import offers_of_case


@role_required("acceptance.view_acceptanceplan")
def case_acceptance(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    plans = case_plans(case)
    active = active_plan(case, plans)
    state = acceptance_state(active) if active else None
    return render(
        request,
        "acceptance/case_acceptance.html",
        {"case": case, "plans": plans, "state": state},
    )


@role_required("acceptance.add_acceptanceplan")
def plan_create(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    planned = {p.offer_id for p in case_plans(case)}
    offers = [o for o in offers_of_case(case) if o.pk not in planned]
    form = PlanCreateForm(request.POST or None, offers=offers)
    if request.method == "POST" and form.is_valid():
        offer = next(o for o in offers if o.pk == form.cleaned_data["offer"])
        try:
            plan = services.acceptance_plan_create(
                actor=request.user, offer=offer, **model_fields(form)
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Acceptance plan saved."))
            return redirect("acceptance:plan", pk=plan.pk)
    return render(request, "acceptance/plan_form.html", {"case": case, "form": form, "plan": None})


@role_required("acceptance.view_acceptanceplan")
def plan_detail(request: HttpRequest, pk: int) -> HttpResponse:
    plan = plan_get_for(request.user, pk)
    state = acceptance_state(plan)
    return render(
        request,
        "acceptance/plan_detail.html",
        {"case": plan.case, "plan": plan, "state": state},
    )


@role_required("acceptance.change_acceptanceplan")
def plan_edit(request: HttpRequest, pk: int) -> HttpResponse:
    plan = plan_get_for(request.user, pk)
    form = PlanEditForm(request.POST or None, instance=plan, initial={"version": plan.version})
    if request.method == "POST" and form.is_valid():
        fields, reason, version = form.edit_parts()
        try:
            services.acceptance_plan_update(
                actor=request.user,
                plan=plan,
                fields=fields,
                reason=reason,
                expected_version=version,
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Acceptance plan saved."))
            return redirect("acceptance:plan", pk=plan.pk)
    return render(
        request, "acceptance/plan_form.html", {"case": plan.case, "form": form, "plan": plan}
    )


@role_required("acceptance.add_acceptanceresult")
def result_create(request: HttpRequest, pk: int) -> HttpResponse:
    plan = plan_get_for(request.user, pk)
    form = ResultForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.acceptance_result_record(actor=request.user, plan=plan, **model_fields(form))
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Result recorded."))
            return redirect("acceptance:plan", pk=plan.pk)
    return render(
        request,
        "acceptance/result_form.html",
        {"case": plan.case, "plan": plan, "form": form, "result": None},
    )


@role_required("acceptance.change_acceptanceresult")
def result_edit(request: HttpRequest, pk: int) -> HttpResponse:
    result = result_get_for(request.user, pk)
    plan = result.plan
    form = ResultEditForm(
        request.POST or None, instance=result, initial={"version": result.version}
    )
    if request.method == "POST" and form.is_valid():
        fields, reason, version = form.edit_parts()
        try:
            services.acceptance_result_update(
                actor=request.user,
                result=result,
                fields=fields,
                reason=reason,
                expected_version=version,
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Result saved."))
            return redirect("acceptance:plan", pk=plan.pk)
    return render(
        request,
        "acceptance/result_form.html",
        {"case": plan.case, "plan": plan, "form": form, "result": result},
    )


@refused_unread(declared_over(services.attachment_max_bytes))  # before the CSRF check reads it
@role_required("acceptance.add_acceptanceattachment")
def attachment_add(request: HttpRequest, pk: int) -> HttpResponse:
    result = result_get_for(request.user, pk)
    form = AttachmentForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.acceptance_attachment_add(
                actor=request.user, result=result, upload=form.cleaned_data["file"]
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Attachment stored."))
            return redirect("acceptance:plan", pk=result.plan_id)
    return render(
        request,
        "acceptance/attachment_form.html",
        {"case": result.plan.case, "plan": result.plan, "result": result, "form": form},
    )


@role_required("acceptance.view_acceptanceattachment")
def attachment_download(request: HttpRequest, pk: int) -> HttpResponse | FileResponse:
    attachment = attachment_get_for(request.user, pk)
    return stored_file_response(request, attachment_stored_file(attachment))


@role_required("acceptance.signoff_acceptanceplan")
def signoff(request: HttpRequest, pk: int) -> HttpResponse:
    plan = plan_get_for(request.user, pk)
    form = SignOffForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.acceptance_signoff(
                actor=request.user, plan=plan, comment=form.cleaned_data["comment"]
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Acceptance signed off."))
            return redirect("acceptance:plan", pk=plan.pk)
    state = acceptance_state(plan)
    return render(
        request,
        "acceptance/signoff_form.html",
        {"case": plan.case, "plan": plan, "state": state, "form": form},
    )
