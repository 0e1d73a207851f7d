"""Browser pages for procurement cases."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _

from apps.cases import services
from apps.cases.cockpit import tile
from apps.cases.filters import CaseListFilter
from apps.cases.forms import CaseEditForm, CaseForm, OfferMinimumWaiverForm
from apps.cases.page import case_page_response, page_versions
from apps.cases.panels import AREAS, case_area_panel, case_nav
from apps.cases.search import MAX_QUERY_LENGTH, search
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


@role_required("cases.view_procurementcase")
def case_detail(request: HttpRequest, pk: int) -> HttpResponse:
    versions = page_versions()  # first: a cached part is never older than its key
    return case_page_response(
        request,
        pk,
        versions=versions,
        load_case=lambda: case_get_for(request.user, pk, offer_count=False),
    )


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
def case_area(request: HttpRequest, pk: int, area: str) -> HttpResponse:
    """One area of the case in full: what it lacks, who can mend it, and its details."""
    case = case_get_for(request.user, pk, offer_count=False)
    if area not in AREAS:
        raise Http404(_("No such part of a case."))
    panel = case_area_panel(case, area, actor=request.user)
    if panel is None:
        raise PermissionDenied(_("Your role does not show this part of the case."))
    return render(
        request,
        "cases/case_area.html",
        {
            "case": case,
            "panel": panel,
            "tile": tile(case, panel),
            "area": area,
            "nav": case_nav(case, request.user),
        },
    )


@role_required("cases.view_procurementcase")
def case_history(request: HttpRequest, pk: int) -> HttpResponse:
    """The case's history is its audit timeline: one page, kept at its old address too."""
    case = case_get_for(request.user, pk)
    target = reverse("audit:case-timeline", args=[case.pk])
    query = request.GET.urlencode()
    return redirect(f"{target}?{query}" if query else target, permanent=True)


@role_required("cases.view_procurementcase")
def search_page(request: HttpRequest) -> HttpResponse:
    """Cases, vendors, offers, clauses and evidence matching the words, as far as one may read."""
    words = request.GET.get("q", "")
    groups = search(request.user, words)
    return render(
        request,
        "cases/search.html",
        {"q": words[:MAX_QUERY_LENGTH], "groups": groups, "searched": bool(words.strip())},
    )
