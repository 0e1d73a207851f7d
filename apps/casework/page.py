"""The case page (the cockpit), rendered on every view from the case's stored standing.

Where the case stands, area by area, is read from a ``CaseStanding`` kept
current by the tracked writes themselves (``apps.casework.standing``): the page
costs a handful of queries, right after an edit as at any other time, and is
never older than the last tracked write. The cockpit is stored rendered for
each kind of viewer (it holds no form); the site template around it (the
viewer's name, the forms' CSRF tokens, flash messages) is rendered on each view.
"""

from django.shortcuts import render
from django.utils.safestring import mark_safe

from apps.casework.standing import (
    ChainVersions,
    case_standing,
    chain_versions,
    permissions_fingerprint,
)

__all__ = ["case_page_response", "page_versions", "permissions_fingerprint"]

TEMPLATE = "cases/case_detail.html"


def page_versions() -> ChainVersions:
    """Read before anything the page shows (one small query)."""
    return chain_versions()


def case_page_response(request, pk: int, *, versions: ChainVersions, load_case):
    """The case page; ``versions`` read before ``load_case()`` fetches the case."""
    case = load_case()
    standing = case_standing(case, request.user, versions)
    # Rendered by ``render_cockpit`` from escaped values only.
    cockpit_html = mark_safe(standing.html)  # noqa: S308
    context = {"case": case, "cockpit_html": cockpit_html}
    if standing.tiles is not None:  # computed now: what it was rendered from
        context["tiles"] = standing.tiles
    return render(request, TEMPLATE, context)
