"""Browser pages for procurement cases."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _

from apps.cases import services
from apps.cases.filters import CaseListFilter
from apps.cases.forms import CaseEditForm, CaseForm, OfferMinimumWaiverForm
from apps.cases.selectors import case_get_for, case_list_for
from apps.core.access import role_required
from apps.core.forms import apply_service_errors
from apps.core.lists import filtered_page
from apps.core.services import ConcurrentEditError


@role_required("cases.view_procurementcase")
def case_list(request: HttpRequest) -> HttpResponse:
    """Cases the person may see, filtered and sorted as the URL says, newest first by default."""
    filters = CaseListFilter(request.GET or None, queryset=case_list_for(request.user))
    page = filtered_page(request, filters, default=("-created_at",), tiebreak="-pk")
    return render(request, "cases/case_list.html", {"page": page, "filters": filters})


@role_required("cases.add_procurementcase")
def case_create(request: HttpRequest) -> HttpResponse:
    form = CaseForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            case = services.case_create(actor=request.user, **form.cleaned_data)
        except ValidationError as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Case opened."))
            return redirect("cases:detail", pk=case.pk)
    return render(request, "cases/case_form.html", {"form": form, "title": _("New case")})


@role_required("cases.change_procurementcase")
def case_edit(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    form = CaseEditForm(request.POST or None, instance=case, initial={"version": case.version})
    if request.method == "POST" and form.is_valid():
        data, reason, version = form.edit_parts()
        try:
            services.case_update(
                actor=request.user, case=case, fields=data, reason=reason, expected_version=version
            )
        except (ValidationError, ConcurrentEditError) as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Case saved."))
            return redirect("cases:detail", pk=case.pk)
    return render(
        request, "cases/case_form.html", {"form": form, "case": case, "title": _("Edit case")}
    )


@role_required("cases.waive_offer_minimum")
def case_offer_minimum_waive(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    form = OfferMinimumWaiverForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.case_offer_minimum_waive(
                actor=request.user, case=case, reason=form.cleaned_data["reason"]
            )
        except ValidationError as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Waiver recorded."))
            return redirect("cases:detail", pk=case.pk)
    return render(
        request,
        "cases/case_form.html",
        {"form": form, "case": case, "title": _("Waive the three-offer minimum")},
    )


@role_required("cases.view_procurementcase")
def case_history(request: HttpRequest, pk: int) -> HttpResponse:
    """The case's history is its audit timeline: one page, kept at its old address too."""
    case = case_get_for(request.user, pk)
    target = reverse("audit:case-timeline", args=[case.pk])
    query = request.GET.urlencode()
    return redirect(f"{target}?{query}" if query else target, permanent=True)
