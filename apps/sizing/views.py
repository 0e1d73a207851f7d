"""The sizing calculator page, saving its result as a case's compute demand, and the
case's requirement spec page."""

from collections.abc import Mapping
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_get_for, case_list_for
from apps.core.access import role_required
from apps.core.forms import apply_service_errors
from apps.core.services import ConcurrentEditError
from apps.offers.selectors import offers_of_case
from apps.sizing import selectors, services
from apps.sizing.calculator import InferenceSizing, SizingInputError
from apps.sizing.forms import (
    CalculatorCaseForm,
    RequirementSpecForm,
    SaveDemandForm,
    SizingForm,
)
from apps.sizing.inputs import demand_fields, size_from
from apps.sizing.models import ComputeDemand, RequirementSpec
from apps.sizing.presets import PRESETS
from apps.sizing.requirement import Derivation
from apps.sizing.training import TrainingSizing


def _calculate(form: SizingForm) -> InferenceSizing | TrainingSizing | None:
    if not form.is_valid():
        return None
    try:
        return size_from(form.cleaned_data)
    except SizingInputError as error:
        form.add_error(error.field if error.field in form.fields else None, error.message)
        return None


def _case_named(request: HttpRequest, query: QueryDict) -> ProcurementCase | None:
    """The case ``?case=`` names, or None without one; a value naming no case is a 404."""
    form = CalculatorCaseForm(query)
    if not form.is_valid():
        raise Http404("No such case.")
    pk = form.cleaned_data["case"]
    return case_get_for(request.user, pk) if pk else None


@role_required("sizing.view_computedemand")
def calculator(request: HttpRequest) -> HttpResponse:
    case = _case_named(request, request.GET)
    if request.method == "POST":
        return _save(request)
    data: Mapping[str, Any] | None = request.GET if "mode" in request.GET else None
    demand = getattr(case, "compute_demand", None) if case else None
    if data is None and demand is not None:
        data = {k: v for k, v in demand_fields(demand).items() if v not in (None, "")}
    form = SizingForm(data, initial={})
    result = _calculate(form) if data is not None else None
    preset = PRESETS.get(form.data.get("model_preset", "")) if data is not None else None
    return render(
        request,
        "sizing/calculator.html",
        {
            "form": form,
            "result": result,
            "preset": preset,
            "case": case,
            "demand": demand,
            "cases": case_list_for(request.user).order_by("-created_at")[:50]
            if case is None
            else None,
        },
    )


def _save(request: HttpRequest) -> HttpResponse:
    if not request.user.has_perm("sizing.add_computedemand"):
        raise PermissionDenied
    form = SizingForm(request.POST)
    target = SaveDemandForm(request.POST)
    if not target.is_valid() and "case" in target.errors:
        raise Http404("No such case.")
    case = case_get_for(request.user, target.cleaned_data["case"])
    for name, errors in target.errors.items():  # a reason too long, a version not a number
        for error in errors:
            form.add_error(None, f"{target[name].label}: {error}")
    status = 400
    if _calculate(form) is not None:
        demand = ComputeDemand.objects.filter(case=case).first()
        try:
            services.compute_demand_save(
                actor=request.user,
                case=case,
                fields=form.cleaned_data,
                reason=target.cleaned_data["change_reason"],
                expected_version=target.cleaned_data["version"] if demand else None,
            )
        except ConcurrentEditError as error:
            apply_service_errors(form, error)
            status = 409
        except ValidationError as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Saved as the case's compute demand."))
            return redirect("cases:detail", pk=case.pk)
    return render(
        request,
        "sizing/calculator.html",
        {"form": form, "result": None, "case": case, "demand": None, "cases": None},
        status=status,
    )


@role_required("sizing.view_requirementspec")
def requirement(request: HttpRequest, case_pk: int) -> HttpResponse:
    """The case's requirement spec, where each item came from, and every offer against it."""
    case = case_get_for(request.user, case_pk)
    saved = selectors.requirement_of(case)
    demand = selectors.demand_of(case)
    derivation = selectors.requirement_derivation(demand)
    status = 200
    form = None
    may_edit = request.user.has_perm(
        "sizing.change_requirementspec" if saved else "sizing.add_requirementspec"
    )
    if request.method == "POST":
        if not may_edit:
            raise PermissionDenied
        form = RequirementSpecForm(request.POST)
        if form.is_valid():
            fields, reason, version = form.edit_parts()
            try:
                services.requirement_spec_save(
                    actor=request.user,
                    case=case,
                    fields=fields,
                    reason=reason,
                    expected_version=version if saved else None,
                )
            except ConcurrentEditError as error:
                apply_service_errors(form, error)
                status = 409
            except ValidationError as error:
                apply_service_errors(form, error)
                status = 400
            else:
                messages.success(request, _("Requirement spec saved."))
                return redirect("sizing:requirement", case_pk=case.pk)
        else:
            status = 400
    elif may_edit:
        form = RequirementSpecForm(initial=_form_initial(request, saved, derivation))
    offers = offers_of_case(case)
    return render(
        request,
        "sizing/requirement.html",
        {
            "case": case,
            "requirement": saved,
            "demand": demand,
            "items": selectors.requirement_items(saved, derivation),
            "checks": selectors.requirement_checks(case, offers),
            "form": form,
            "from_sizing": request.GET.get("from_sizing") == "1",
        },
        status=status,
    )


def _form_initial(
    request: HttpRequest, saved: RequirementSpec | None, derivation: Derivation | None
) -> dict:
    """The saved spec; the sizing's values where asked for (``?from_sizing=1``) or none saved."""
    initial = selectors.requirement_values(saved) if saved else {}
    if derivation is not None and (saved is None or request.GET.get("from_sizing") == "1"):
        initial.update(derivation.values)
    if saved is not None:
        initial["version"] = saved.version
    return initial
