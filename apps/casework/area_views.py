"""Pages of one area that show what other apps record beside it: an area's history from
the audit trail (the access matrix and network plan, a data-export assessment, the
approval with its gates), and the declared spec beside what the vendor claimed through
the portal and what the evidence measured."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _

from apps.acceptance.conditions import condition_states
from apps.access.selectors import access_history_querysets
from apps.approvals import policies
from apps.approvals.forms import ChainStepForm, DecisionForm
from apps.approvals.overview import approval_overview
from apps.approvals.selectors import approval_history_querysets
from apps.assessments.models import AssessmentAnswer
from apps.assessments.questions import QUESTIONS_BY_KEY
from apps.assessments.selectors import assessment_get_for, assessment_history_querysets
from apps.audit.history_pages import history_page
from apps.cases.selectors import case_get_for
from apps.casework.stored_gates import stored_gates
from apps.core.access import role_required
from apps.core.forms import apply_service_errors
from apps.core.reads import shared_reads
from apps.core.services import ConcurrentEditError
from apps.evidence.selectors import latest_verification
from apps.offers import services as offer_services
from apps.offers.forms import DeclaredSpecForm
from apps.offers.selectors import offer_get_for, spec_status_for
from apps.portal.selectors import spec_provenance


@role_required("access.view_accessmatrix")
def access_history(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    form, page = history_page(request, access_history_querysets(case))
    return render(request, "access/history.html", {"case": case, "page": page, "form": form})


@role_required("assessments.view_dataexportassessment")
def assessment_history(request: HttpRequest, pk: int) -> HttpResponse:
    assessment = assessment_get_for(request.user, pk)
    form, page = history_page(request, assessment_history_querysets(assessment))
    for entry in page:
        # The shared timeline labels answer rows by their question key; show the question.
        is_answer = entry.record_type == str(AssessmentAnswer._meta.verbose_name)
        if is_answer and entry.record in QUESTIONS_BY_KEY:
            entry.record = str(QUESTIONS_BY_KEY[entry.record].label)
    return render(
        request,
        "assessments/assessment_history.html",
        {"assessment": assessment, "case": assessment.case, "page": page, "form": form},
    )


@role_required("approvals.view_approval")
def case_approval(request: HttpRequest, pk: int) -> HttpResponse:
    """The decision first: the offers that may be approved with their gates and, for those
    who decide, the form; the other offers' gates folded below, each saying why not."""
    case = case_get_for(request.user, pk)
    # The gates kept since the last write to the case; the rest read once for the page.
    with stored_gates(), shared_reads():
        overview = approval_overview(case)
    form, history = history_page(request, approval_history_querysets(case))
    may_decide = request.user.has_perm("approvals.decide_approval")
    chains = policies.case_chains(case)
    chain = policies.chain_state(chains[0]) if chains else None
    running = chain is not None and chain.running
    # The next step's form, to whoever it waits for (a role, a named person, a delegate).
    chain_steps = chain.steps_for(request.user) if running and chain is not None else []
    chain_form = ChainStepForm(initial={"step": chain_steps[0].position}) if chain_steps else None
    decide_form = None
    if may_decide and not running and (overview.pending or overview.stale):
        ready = overview.ready_offers
        initial = {"offer": ready[0].offer.pk} if len(ready) == 1 else {}
        decide_form = DecisionForm.for_gates(overview.offers, initial=initial)
    return render(
        request,
        "approvals/case_approval.html",
        {
            "case": case,
            "overview": overview,
            "history": history,
            "page": history,
            "form": form,
            "decide_form": decide_form,
            "own_request": case.owner_id == request.user.pk,
            "chain": chain,
            "chain_steps": chain_steps,
            "chain_form": chain_form,
            "policy": policies.policy_view(),
            # Where each condition of an approval subject to acceptance stands (waiting,
            # or lapsed: what did not pass, read now in the reader's language).
            "condition_states": (
                condition_states(overview.current)
                if overview.current is not None
                and overview.current.conditional
                and overview.current.condition_met_at is None
                else []
            ),
        },
    )


@role_required("offers.change_declaredspec")
def declared_spec_edit(request: HttpRequest, pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, pk)
    spec = offer.declared_spec
    form = DeclaredSpecForm(request.POST or None, instance=spec, initial={"version": spec.version})
    if request.method == "POST" and form.is_valid():
        data, reason, version = form.edit_parts()
        try:
            offer_services.declared_spec_update(
                actor=request.user,
                spec=spec,
                fields=data,
                reason=reason,
                expected_version=version,
            )
        except (ValidationError, ConcurrentEditError) as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Declared spec saved."))
            target = request.GET.get("next", "")
            if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
                return redirect(target)
            return redirect("offers:detail", pk=offer.pk)
    return render(
        request,
        "offers/declared_spec_form.html",
        {
            "form": form,
            "offer": offer,
            "case": offer.case,
            "spec_status": spec_status_for(offer),
            "provenance": spec_provenance(offer, spec, latest_verification(offer)),
            "title": _("Declared spec"),
        },
    )
