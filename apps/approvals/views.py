"""Browser pages: submitting a case for approval and deciding it (the approval page, with
its gates and history, is in the whole-case layer: apps/casework/area_views.py)."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _

from apps.approvals import policies, services
from apps.approvals.forms import ChainStepForm, DecisionForm, SubmitForm
from apps.approvals.overview import approval_overview
from apps.cases.selectors import case_get_for
from apps.core.access import role_required
from apps.core.forms import apply_service_errors
from apps.core.second_factor import second_factor_for_writes


@role_required("approvals.submit_approval")
def case_submit(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    form = SubmitForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.case_submit_for_approval(
                actor=request.user, case=case, note=form.cleaned_data["note"]
            )
        except (ValidationError, PermissionDenied) as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Submitted for approval."))
            return redirect("approvals:case", pk=case.pk)
    overview = approval_overview(case)
    return render(
        request,
        "approvals/submit_form.html",
        {"case": case, "form": form, "overview": overview},
    )


@role_required("approvals.decide_approval")
@second_factor_for_writes
def case_decide(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    if policies.running_chain(case) is not None:
        # The tech lead's step is decided: the chain's later steps are on the approval page.
        messages.info(
            request,
            _("The tech lead's step is decided; the case waits for the later steps of its chain."),
        )
        return redirect(reverse("approvals:case", args=[case.pk]) + "#approval-chain")
    overview = approval_overview(case)
    initial = {}
    if request.GET.get("offer", "").isdigit():
        initial["offer"] = int(request.GET["offer"])
    form = DecisionForm.for_gates(overview.offers, request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.approval_decide(
                actor=request.user,
                case=case,
                decision=form.cleaned_data["decision"],
                comment=form.cleaned_data["comment"],
                offer=form.cleaned_data["offer"],
                conditions=form.cleaned_data["conditions"],
                condition_deadline=form.cleaned_data["condition_deadline"],
            )
        except (ValidationError, PermissionDenied) as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Decision recorded."))
            return redirect("approvals:case", pk=case.pk)
    return render(
        request,
        "approvals/decide_form.html",
        {
            "case": case,
            "form": form,
            "overview": overview,
            "own_request": case.owner_id == request.user.pk,
        },
    )


@role_required("approvals.view_approval")
@second_factor_for_writes
def case_chain_decide(request: HttpRequest, pk: int) -> HttpResponse:
    """A decision at a later step of the case's approval chain, by a person it waits for
    (who may decide is the service's to say: a role, a named person, a delegate)."""
    case = case_get_for(request.user, pk)
    chain = policies.running_chain(case)
    state = policies.chain_state(chain) if chain is not None else None
    mine = state.steps_for(request.user) if state is not None else []
    initial = {"step": mine[0].position} if mine else {}
    form = ChainStepForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.chain_step_decide(
                actor=request.user,
                case=case,
                step=form.cleaned_data["step"],
                decision=form.cleaned_data["decision"],
                comment=form.cleaned_data["comment"],
            )
        except ValidationError as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Decision recorded."))
            return redirect("approvals:case", pk=case.pk)
    return render(
        request,
        "approvals/chain_step_form.html",
        {"case": case, "form": form, "chain": state, "mine": mine},
        status=400 if form.errors else 200,
    )
