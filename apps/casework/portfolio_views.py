"""The portfolio page across cases, and its tables as CSV and XLSX."""

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from apps.casework import kept
from apps.casework.portfolio_files import (
    TABLES,
    XLSX_CONTENT_TYPE,
    portfolio_csv,
    portfolio_xlsx,
)
from apps.casework.portfolio_overview import PORTFOLIO_ROLES, portfolio_for
from apps.core.access import roles_required


@roles_required(*PORTFOLIO_ROLES)
@require_safe
def portfolio(request: HttpRequest) -> HttpResponse:
    """The cases the reader may see, across cases; ``?format=csv&table=<key>`` for one
    table as CSV, ``?format=xlsx`` for every table as a workbook."""
    fmt = request.GET.get("format")
    if fmt not in ("csv", "xlsx"):
        # The page's tables as this reader sees them, rendered, kept as the numbers are;
        # the page around them (its forms' tokens) is rendered on every request.
        body = kept.kept(
            kept.state_key(request.user, "portfolio-page"),
            lambda: str(
                render_to_string("cases/_portfolio_body.html", {"p": _overview(request)}, request)
            ),
        )
        return render(request, "cases/portfolio.html", {"body": mark_safe(body)})  # noqa: S308
    overview = _overview(request)
    stamp = overview.today.isoformat()
    if fmt == "csv":
        table = request.GET.get("table", "")
        if table not in TABLES:
            raise Http404(_("No such table."))
        response = HttpResponse(
            portfolio_csv(overview, table), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="portfolio-{table}-{stamp}.csv"'
        return response
    response = HttpResponse(portfolio_xlsx(overview), content_type=XLSX_CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="portfolio-{stamp}.xlsx"'
    return response


def _overview(request: HttpRequest):
    """Read across every case the reader may see: kept until the next tracked write."""
    return kept.kept(kept.state_key(request.user, "portfolio"), lambda: portfolio_for(request.user))
