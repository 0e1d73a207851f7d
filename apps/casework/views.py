"""The case page (the cockpit), one area of a case in full, and search across the cases."""

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render
from django.utils.translation import gettext as _

from apps.cases.selectors import case_get_for
from apps.casework.cockpit import tile
from apps.casework.page import case_page_response, page_versions
from apps.casework.panels import AREAS, case_area_panel, case_nav
from apps.casework.search import MAX_QUERY_LENGTH, search
from apps.core.access import role_required


@role_required("cases.view_procurementcase")
def case_detail(request, pk: int):
    versions = page_versions()  # first: a cached part is never older than its key
    return case_page_response(
        request,
        pk,
        versions=versions,
        load_case=lambda: case_get_for(request.user, pk, offer_count=False),
    )


@role_required("cases.view_procurementcase")
def case_area(request, pk: int, area: str):
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
def search_page(request):
    """Cases, vendors, offers, clauses and evidence matching the words, as far as one may read."""
    words = request.GET.get("q", "")
    groups = search(request.user, words)
    return render(
        request,
        "cases/search.html",
        {"q": words[:MAX_QUERY_LENGTH], "groups": groups, "searched": bool(words.strip())},
    )
