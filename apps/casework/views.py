"""The pages that show the whole case, or cut across cases: the case page (the cockpit),
one area in full, search, what waits for one person (my work), an offer in full, the
offer matrix, and a vendor's portfolio."""

import tempfile
from datetime import timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    JsonResponse,
    StreamingHttpResponse,
)
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from apps.approvals.assignments import (
    DEFAULT_DAYS,
    assignable_people,
    assignment_set,
    may_assign,
    people_by_role,
)
from apps.approvals.forms import AssignForm, DigestForm
from apps.cases.selectors import case_get_for
from apps.casework import worklist
from apps.casework.cockpit import tile
from apps.casework.dashboard import case_item
from apps.casework.inbox import board_of, digest_set, waiting_count, wants_digest, work_items
from apps.casework.matrix import COLUMNS, DESCENDING_FIRST, parse_sort, sort_rows
from apps.casework.matrix_files import XLSX_CONTENT_TYPE, matrix_csv, matrix_filename, matrix_xlsx
from apps.casework.offer_overview import offer_overview
from apps.casework.page import case_page_response, page_versions
from apps.casework.panels import AREAS, case_area_panel, case_nav
from apps.casework.portfolio import (
    vendor_documents,
    vendor_offers,
    vendor_open_findings,
    vendor_waivers,
)
from apps.casework.registers import approved_offer_id
from apps.casework.search import MAX_QUERY_LENGTH, search
from apps.casework.stored_gates import stored_gates, stored_offer_matrix
from apps.contracts.selectors import TermsTable
from apps.core.access import role_required
from apps.core.forms import option_tags
from apps.core.roles import roles_of
from apps.offers.selectors import offer_get_for
from apps.vendors.selectors import vendor_get_for, vendor_master_data


@role_required("cases.view_procurementcase")
def case_detail(request: HttpRequest, pk: int) -> HttpResponse:
    versions = page_versions()  # first: a cached part is never older than its key
    return case_page_response(
        request,
        pk,
        versions=versions,
        load_case=lambda: case_get_for(request.user, pk, offer_count=False),
    )


@role_required("cases.view_procurementcase")
def case_area(request: HttpRequest, pk: int, area: str) -> HttpResponse:
    """One area of the case in full: what it lacks, who can mend it, and its details."""
    case = case_get_for(request.user, pk, offer_count=False)
    if area not in AREAS:
        raise Http404(_("No such part of a case."))
    with stored_gates():  # the gates kept since the last write to the case
        panel = case_area_panel(case, area, actor=request.user)
    if panel is None:
        raise PermissionDenied(_("Your role does not show this part of the case."))
    return render(
        request,
        "cases/case_area.html",
        {
            "case": case,
            "panel": panel,
            "tile": tile(case, panel, winner=approved_offer_id(case)),
            "area": area,
            "nav": case_nav(case, request.user),
        },
    )


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


# My work shows this many items a page, overdue first (the order of the whole list).
WORK_PAGE_SIZE = 40


@role_required("approvals.view_approval")
def dashboard(request: HttpRequest) -> HttpResponse:
    """My work: what waits for the person, overdue first, then the dashboard's detail."""
    board = board_of(request.user)
    items = work_items(board)
    # A page of the items in their order, grouped by case: what is rendered (and given
    # assignment choices) stays the same size however much waits.
    page = Paginator(items, WORK_PAGE_SIZE).get_page(request.GET.get("page"))
    shown = list(page.object_list)
    options = _assign_options(shown, request.user)
    return render(
        request,
        "approvals/dashboard.html",
        {
            "board": board,
            "items": items,
            "page": page,
            "groups": [
                (group, [(item, options.get((item.case_id, item.key))) for item in group.items])
                for group in worklist.grouped(shown)
            ],
            "assign_due": timezone.localdate() + timedelta(days=DEFAULT_DAYS),
            "digest_form": DigestForm(initial={"daily_digest": wants_digest(request.user)}),
        },
    )


def _assign_options(items: list, user: Any) -> dict:
    """For each item the person may assign: the people who may take it, as the
    ``<option>`` elements of its form, the one it is assigned to selected. Made once per
    roles and person, not rendered again for each of the page's items."""
    people: dict[tuple, list] = {}
    made: dict[tuple, str] = {}
    options = {}
    held = roles_of(user)
    by_role = None
    for item in items:
        if not item.assignable or not may_assign(user, item.roles, held=held):
            continue
        if by_role is None:
            by_role = people_by_role()
        if item.roles not in people:
            people[item.roles] = assignable_people(item.roles, by_role)
        shown = (item.roles, item.assignee_id)
        if shown not in made:
            made[shown] = option_tags(
                ((person.pk, person.name) for person in people[item.roles]), item.assignee_id
            )
        options[(item.case_id, item.key)] = made[shown]
    return options


def _back(request: HttpRequest) -> HttpResponse:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(target)
    return redirect("approvals:dashboard")


@role_required("approvals.view_approval")
@require_POST
def assign(request: HttpRequest) -> HttpResponse:
    """Give one item of My work to a person until a date, or back to its role."""
    form = AssignForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest(
            _("The assignment was not recorded: %(errors)s")
            % {"errors": "; ".join(str(m) for ms in form.errors.values() for m in ms)}
        )
    data = form.cleaned_data
    case = case_get_for(request.user, data["case"], offer_count=False)
    item = case_item(case, data["key"])
    if item is None:
        return HttpResponseBadRequest(
            _("This item is no longer waiting on the case: nothing was assigned.")
        )
    assignee = None
    if data["assignee"] is not None:
        assignee = get_user_model().objects.filter(pk=data["assignee"]).first()
        if assignee is None:
            return HttpResponseBadRequest(_("No such person."))
    try:
        assignment_set(
            actor=request.user,
            case=case,
            item_key=item.key,
            roles=item.roles,
            label=item.detail,
            path=item.url,
            assignee=assignee,
            due_on=data["due_on"],
        )
    except ValidationError as error:
        return HttpResponseBadRequest(
            _("The assignment was not recorded: %(errors)s") % {"errors": "; ".join(error.messages)}
        )
    if assignee is None:
        messages.success(request, _("Given back to the role."))
    else:
        messages.success(
            request,
            _("Assigned to %(name)s.") % {"name": assignee.get_full_name() or assignee.username},
        )
    return _back(request)


@role_required("approvals.view_approval")
def waiting(request: HttpRequest) -> JsonResponse:
    """The count beside "My work" in the site header (fetched by the page's script)."""
    count = waiting_count(request.user)
    label = ngettext("%(n)s item waits for you", "%(n)s items wait for you", count) % {"n": count}
    return JsonResponse({"count": count, "label": label})


@role_required("approvals.view_approval")
@require_POST
def digest_preference(request: HttpRequest) -> HttpResponse:
    form = DigestForm(request.POST)
    form.is_valid()  # a missing or unreadable box means off
    on = bool(form.cleaned_data.get("daily_digest"))
    digest_set(request.user, daily_digest=on)
    messages.success(
        request,
        _("The daily digest is on.") if on else _("The daily digest is off."),
    )
    return redirect("approvals:dashboard")


@role_required("scorecards.view_scorecard")
def matrix(request: HttpRequest, pk: int) -> HttpResponseBase:
    """Every offer side by side; ``?sort=<column>`` (``-<column>``: the other way),
    ``?format=csv`` or ``xlsx`` for the same rows as a spreadsheet."""
    case = case_get_for(request.user, pk, offer_count=False)
    key, descending = parse_sort(request.GET.get("sort"))
    with stored_gates():  # kept since the last write to the case
        rows = sort_rows(stored_offer_matrix(case), key, descending=descending)
    fmt = request.GET.get("format")
    response: HttpResponseBase
    if fmt == "csv":
        response = StreamingHttpResponse(matrix_csv(rows), content_type="text/csv; charset=utf-8")
    elif fmt == "xlsx":
        spool = tempfile.TemporaryFile()  # noqa: SIM115 - handed to FileResponse, which closes it
        matrix_xlsx(rows, title=case.name, out=spool)
        spool.seek(0)
        response = FileResponse(spool, content_type=XLSX_CONTENT_TYPE)
    else:
        return render(
            request,
            "scorecards/matrix.html",
            {
                "case": case,
                "rows": rows,
                "terms_table": TermsTable([row.terms for row in rows if row.terms]),
                "headings": _matrix_headings(key, descending),
                "sort": request.GET.get("sort", "") if key else "",
            },
        )
    response["Content-Disposition"] = f'attachment; filename="{matrix_filename(case, fmt)}"'
    return response


def _matrix_headings(current: str, descending: bool) -> list[dict]:
    """Each column's heading: its label, the link that sorts by it, and its aria-sort."""
    headings = []
    for key, label in COLUMNS:
        first_descending = key in DESCENDING_FIRST
        if key == current:
            aria = "descending" if descending else "ascending"
            # A second click on the sorted column turns the order round.
            next_descending = not descending
        else:
            aria, next_descending = "none", first_descending
        headings.append(
            {
                "key": key,
                "label": label,
                "aria_sort": aria,
                "sort": f"-{key}" if next_descending else key,
            }
        )
    return headings


@role_required("offers.view_offer")
def offer_detail(request: HttpRequest, pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, pk)
    return render(request, "offers/offer_detail.html", offer_overview(offer, actor=request.user))


@role_required("vendors.view_vendor")
def vendor_detail(request: HttpRequest, pk: int) -> HttpResponse:
    vendor = vendor_get_for(request.user, pk)
    offers = vendor_offers(request.user, vendor)
    return render(
        request,
        "vendors/vendor_detail.html",
        {
            "vendor": vendor,
            "offers": offers,
            "waivers": vendor_waivers(offers),
            # Its master data, each part for those who may read it.
            **vendor_master_data(request.user, vendor),
            # Across the cases the viewer may see: each case once, the open findings about
            # its offers, and every document of them.
            "cases": list({row.offer.case_id: row.offer.case for row in offers}.values()),
            "findings": vendor_open_findings(request.user, offers),
            "documents": vendor_documents(request.user, offers),
        },
    )
