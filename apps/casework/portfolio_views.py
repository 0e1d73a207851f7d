"""The portfolio page across cases, and its tables as CSV and XLSX."""

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
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
    # Read across every case the reader may see: kept until the next tracked write.
    overview = kept.kept(
        kept.state_key(request.user, "portfolio"), lambda: portfolio_for(request.user)
    )
    fmt = request.GET.get("format")
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
    if fmt == "xlsx":
        response = HttpResponse(portfolio_xlsx(overview), content_type=XLSX_CONTENT_TYPE)
        response["Content-Disposition"] = f'attachment; filename="portfolio-{stamp}.xlsx"'
        return response
    return render(request, "cases/portfolio.html", {"p": overview})
