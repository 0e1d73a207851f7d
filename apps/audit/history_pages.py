"""A record's history page: its timeline narrowed by the URL's filters (who, when, which
kind of record) and paged, the filters kept from page to page.

A timeline reads newest first only: it is merged and paged in that order by the database
(``Timeline``), and saves are gathered from it in that order, so it offers no other sort.
"""

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet

from apps.audit.forms import TimelineFilterForm
from apps.audit.sources import HistorySource, sources_of
from apps.audit.timeline import Timeline

PER_PAGE = 50


def filtered_timeline(
    request, parts: list[tuple[HistorySource, QuerySet]]
) -> tuple[TimelineFilterForm, Timeline]:
    """The filter form read from the URL and the timeline of ``parts`` it narrows."""
    form = TimelineFilterForm(request.GET or None, sources=[source for source, _qs in parts])
    if len(parts) < 2:
        del form.fields["record_type"]  # one kind of record: nothing to choose between
    return form, Timeline(parts, form.timeline_filter())


def history_page(request, querysets: list[QuerySet]) -> tuple[TimelineFilterForm, Page]:
    """This request's page of the history in ``querysets``, filtered as the URL says."""
    form, timeline = filtered_timeline(request, sources_of(querysets))
    return form, Paginator(timeline, PER_PAGE).get_page(request.GET.get("page"))
