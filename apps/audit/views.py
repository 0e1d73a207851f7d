"""Browser pages of the audit trail: timelines, history exports, chain status, case exports."""

import json
import tempfile
from collections.abc import Iterator

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.audit.export_check import verify_export
from apps.audit.exports import build_case_export
from apps.audit.forms import ExportUploadForm, TimelineFilterForm, max_export_upload_bytes
from apps.audit.history_pages import filtered_timeline
from apps.audit.models import ChainVerification
from apps.audit.selectors import chain_status
from apps.audit.sources import case_sources_for, may_read, source_by_key
from apps.audit.tasks import verify_audit_chain_task
from apps.audit.timeline import BadCursor, CaseTimeline, Cursor, events
from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_get_for
from apps.core import csv_safe
from apps.core.access import role_required
from apps.core.background import dispatch
from apps.core.uploads import UploadPolicy, refused_unread

PAGE_SIZE = 50
CSV_COLUMNS = [
    "when",
    "record_type",
    "record_id",
    "record",
    "history_id",
    "action",
    "user",
    "reason",
]


def _case_timeline(
    request: HttpRequest, case: ProcurementCase
) -> tuple[TimelineFilterForm, CaseTimeline]:
    sources = case_sources_for(request.user)
    form = TimelineFilterForm(request.GET or None, sources=sources)
    return form, CaseTimeline(case.pk, sources, form.timeline_filter())


@role_required("cases.view_procurementcase")
def case_timeline(request: HttpRequest, pk: int) -> HttpResponse:
    """Read newest first, a page after the last row of the one before (``cursor``): a
    page costs the same however long the history. A link whose cursor does not read
    (cut short, edited) shows the newest page and says so."""
    case = case_get_for(request.user, pk)
    form, timeline = _case_timeline(request, case)
    cursor, cursor_refused = None, False
    if text := request.GET.get("cursor"):
        try:
            cursor = Cursor.read(text)
        except BadCursor:
            cursor_refused = True
    page = timeline.page_after(cursor, PAGE_SIZE)
    query = request.GET.copy()
    query.pop("page", None)
    query.pop("cursor", None)
    older = None
    if page.next_cursor is not None:
        following = query.copy()
        following["cursor"] = page.next_cursor.text()
        older = following.urlencode()
    return render(
        request,
        "audit/case_timeline.html",
        {
            "case": case,
            "form": form,
            "page": page,
            "events": events(page.entries),
            "query": query.urlencode(),
            "older": older,
            "paged": cursor is not None,
            "cursor_refused": cursor_refused,
        },
    )


@role_required("cases.view_procurementcase")
def record_timeline(request: HttpRequest, content_type: str, object_id: int) -> HttpResponse:
    source = source_by_key(content_type)
    if source is None:
        raise Http404(_("No such record type."))
    if not may_read(request.user, source):
        raise PermissionDenied
    form, timeline = filtered_timeline(request, [(source, source.for_record(object_id))])
    page = Paginator(timeline, PAGE_SIZE).get_page(request.GET.get("page"))
    if page.paginator.count == 0 and not (form.is_bound and form.has_changed()):
        raise Http404(_("This record has no history."))
    return render(
        request,
        "audit/record_timeline.html",
        {
            "source": source,
            "object_id": object_id,
            "form": form,
            "page": page,
            "events": events(page.object_list),
        },
    )


class _Echo:
    def write(self, value: str) -> str:
        return value


@role_required("audit.export_case")
def case_timeline_export(request: HttpRequest, pk: int, fmt: str) -> StreamingHttpResponse:
    case = case_get_for(request.user, pk)
    form, timeline = _case_timeline(request, case)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    if fmt == "csv":
        writer = csv_safe.writer(_Echo())

        def rows() -> Iterator[str]:
            yield writer.writerow([*CSV_COLUMNS, "changes"])
            for entry in timeline.iterate():
                data = entry.as_dict()
                yield writer.writerow(
                    [data[c] for c in CSV_COLUMNS]
                    + [json.dumps(data["changes"], ensure_ascii=False)]
                )

        response = StreamingHttpResponse(rows(), content_type="text/csv; charset=utf-8")
    else:

        def rows() -> Iterator[str]:
            case_json = json.dumps({"id": case.pk, "name": case.name})
            yield f'{{"case": {case_json}, "entries": ['
            for index, entry in enumerate(timeline.iterate()):
                yield (
                    ("," if index else "") + "\n" + json.dumps(entry.as_dict(), ensure_ascii=False)
                )
            yield "\n]}\n"

        response = StreamingHttpResponse(rows(), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="case-{case.pk}-history-{stamp}.{fmt}"'
    return response


@role_required("audit.view_chainverification")
def chain_page(request: HttpRequest) -> HttpResponse:
    recent = ChainVerification.objects.select_related("requested_by").order_by("-pk")[:20]
    return render(request, "audit/chain.html", {"status": chain_status(), "recent": recent})


@require_POST
@role_required("audit.verify_chain")
def chain_verify(request: HttpRequest) -> HttpResponse:
    dispatch(verify_audit_chain_task, requested_by_pk=request.user.pk)
    messages.success(request, _("Chain verification started; the result appears when it ends."))
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = ""
    return redirect(target or "audit:chain")


@role_required("audit.export_case")
def case_export(request: HttpRequest, pk: int) -> FileResponse:
    case = case_get_for(request.user, pk)
    spool = tempfile.TemporaryFile()  # noqa: SIM115 - handed to FileResponse, which closes it
    build_case_export(case, spool, actor=request.user)
    spool.seek(0)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    return FileResponse(
        spool,
        as_attachment=True,
        filename=f"case-{case.pk}-export-{stamp}.zip",
        content_type="application/zip",
    )


EXPORT_UPLOAD_POLICY = UploadPolicy(
    max_export_upload_bytes,
    length_required=True,
    too_large=lambda _limit: _("The upload is larger than exports that can be checked here."),
)


def _export_upload_refused(request: HttpRequest, message: str, *, status: int) -> HttpResponse:
    form = ExportUploadForm.refused(message)
    return render(request, "audit/verify_export.html", {"form": form, "check": None}, status=status)


def _export_upload_refusal(request: HttpRequest) -> HttpResponse | None:
    """Refusals from the request's declared length, before the body is read."""
    return EXPORT_UPLOAD_POLICY.refuse(request, _export_upload_refused)


@refused_unread(_export_upload_refusal)  # before the CSRF check reads the body
@role_required("audit.export_case")
def export_verify(request: HttpRequest) -> HttpResponse:
    check = None
    if request.method == "POST" and (refusal := _export_upload_refusal(request)):
        return refusal
    form = ExportUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        check = verify_export(form.cleaned_data["file"])
    return render(request, "audit/verify_export.html", {"form": form, "check": check})
