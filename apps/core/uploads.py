"""Uploads refused from their declared length before anything reads the body.

Django's CSRF check reads ``request.POST`` (for a multipart body: all of it, spooled
to disk) before a page's view runs, so a size limit checked in the view comes too late
for a browser upload. A view names its pre-read check with ``@refused_unread(check)``;
``UploadLimitMiddleware``, placed before CsrfViewMiddleware, runs that check first.

API endpoints use the same middleware (``refused_unread(api_declared_over(...))`` on the
view ``as_view()`` returns): DRF parses a session client's body during its CSRF check, and
multipart parsing spools the whole body to disk, both before the endpoint's code runs.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _

UploadCheck = Callable[[HttpRequest], HttpResponse | None]

# Room for the multipart envelope and the form's other fields around the file itself.
MULTIPART_SLACK_BYTES = 64 * 1024


def declared_length(request) -> int | None:
    """The Content-Length as a byte count; None when it is absent, negative or not a number."""
    try:
        length = int(request.META.get("CONTENT_LENGTH", ""))
    except ValueError:
        return None
    return length if length >= 0 else None


def upload_refused(request, message: str, *, status: int) -> HttpResponse:
    """A page saying why an upload was refused, for views with no page of their own to show."""
    return render(request, "core/upload_refused.html", {"message": message}, status=status)


def _declared_over(request, limit_bytes: int) -> bool:
    declared = declared_length(request)
    return declared is not None and declared > limit_bytes


def declared_over(limit: Callable[[], int]) -> UploadCheck:
    """The pre-read check of a page taking one file of at most ``limit()`` bytes."""

    def check(request) -> HttpResponse | None:
        if _declared_over(request, limit() + MULTIPART_SLACK_BYTES):
            message = _("The upload is larger than the %(limit)s this page takes.") % {
                "limit": filesizeformat(limit())
            }
            return upload_refused(request, message, status=413)
        return None

    return check


def api_declared_over(
    limit: Callable[[], int], *, slack_bytes: int = MULTIPART_SLACK_BYTES
) -> UploadCheck:
    """The pre-read check of an API endpoint taking a body of at most ``limit()`` bytes.

    ``slack_bytes`` is room for the multipart envelope; 0 where the body is the file itself.
    The refusal is the API's error shape, ``{"detail": ...}``, with status 413.
    """

    def check(request) -> HttpResponse | None:
        if _declared_over(request, limit() + slack_bytes):
            message = _("The body is larger than the %(limit)s this endpoint takes.") % {
                "limit": filesizeformat(limit())
            }
            return JsonResponse({"detail": message}, status=413)
        return None

    return check


def refused_unread(check: UploadCheck):
    """``check(request)`` returns the refusal of a POST, or None to let it be read."""

    def decorate(view):
        view.upload_check = check
        return view

    return decorate


class UploadLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        check = getattr(view_func, "upload_check", None)
        if check is None or request.method != "POST":
            return None
        return check(request)
