"""List pages: a django-filter ``FilterSet`` read from the URL, sorted and paged."""

from django.core.paginator import Page, Paginator

PER_PAGE = 50


def filtered_page(
    request, filters, *, default: tuple[str, ...], tiebreak: str, per_page: int = PER_PAGE
) -> Page:
    """This request's page of ``filters.qs``: in the order the URL asks (its ``sort``), else
    ``default``; ``tiebreak`` (a unique column) keeps the pages from overlapping."""
    rows = filters.qs
    rows = rows.order_by(*(rows.query.order_by or default), tiebreak)
    return Paginator(rows, per_page).get_page(request.GET.get("page"))
