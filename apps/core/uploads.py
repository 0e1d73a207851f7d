"""The one upload policy: bodies refused from their declared length before anything reads them.

Every page and endpoint that takes a file states its limit as an ``UploadPolicy``
and refuses through it, with one wording and one status (413 too large, 400 no
valid length), as a page or in the API's ``{"detail": ...}`` shape.

Django's CSRF check reads ``request.POST`` (for a multipart body: all of it, spooled
to disk) before a page's view runs, so a size limit checked in the view comes too late
for a browser upload. A view names its pre-read check with ``@refused_unread(check)``;
``UploadLimitMiddleware``, placed before CsrfViewMiddleware, runs that check first.

API endpoints use the same middleware (``refused_unread(api_declared_over(...))`` on the
view ``as_view()`` returns): DRF parses a session client's body during its CSRF check, and
multipart parsing spools the whole body to disk, both before the endpoint's code runs.
"""

from collections.abc import Callable
from dataclasses import dataclass

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


def api_refused(request, message: str, *, status: int) -> HttpResponse:
    """The API's error shape, ``{"detail": ...}``."""
    return JsonResponse({"detail": message}, status=status)


Respond = Callable[..., HttpResponse]


@dataclass(frozen=True)
class UploadPolicy:
    """How large a body a page or endpoint takes, judged before anything reads it.

    ``limit()`` is the largest file (or files) taken, read at request time so a
    setting can change it; ``envelope_bytes`` is room for the multipart framing
    and the form's other fields (0 where the body is the file itself). With
    ``length_required``, a body that states no valid length is refused too:
    Django would read it as empty and show a blank form.
    """

    limit: Callable[[], int]
    envelope_bytes: int = MULTIPART_SLACK_BYTES
    length_required: bool = False
    # The refusal's wording from the limit in bytes, where the page has its own.
    too_large: Callable[[int], str] | None = None

    def refusal(self, request) -> tuple[str, int] | None:
        """``(message, status)`` of the refusal, or None when the body may be read."""
        declared = declared_length(request)
        if declared is None:
            return (_("The upload states no valid length."), 400) if self.length_required else None
        limit = self.limit()
        if declared > limit + self.envelope_bytes:
            if self.too_large is not None:
                return self.too_large(limit), 413
            message = _("The upload is larger than the %(limit)s this page takes.")
            return message % {"limit": filesizeformat(limit)}, 413
        return None

    def refuse(self, request, respond: Respond = upload_refused) -> HttpResponse | None:
        """The refusal, answered by ``respond(request, message, status=...)``; None to read on."""
        refused = self.refusal(request)
        return None if refused is None else respond(request, refused[0], status=refused[1])

    def check(self, respond: Respond = upload_refused) -> "UploadCheck":
        """The pre-read check a view names with ``@refused_unread``."""
        return lambda request: self.refuse(request, respond)


def declared_over(limit: Callable[[], int]) -> UploadCheck:
    """The pre-read check of a page taking one file of at most ``limit()`` bytes."""
    return UploadPolicy(limit).check()


def api_declared_over(
    limit: Callable[[], int], *, slack_bytes: int = MULTIPART_SLACK_BYTES
) -> UploadCheck:
    """The pre-read check of an API endpoint taking a body of at most ``limit()`` bytes.

    ``slack_bytes`` is room for the multipart envelope; 0 where the body is the file itself.
    The refusal is the API's error shape, ``{"detail": ...}``, with status 413.
    """

    def too_large(limit_bytes: int) -> str:
        return _("The body is larger than the %(limit)s this endpoint takes.") % {
            "limit": filesizeformat(limit_bytes)
        }

    return UploadPolicy(limit, envelope_bytes=slack_bytes, too_large=too_large).check(api_refused)


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
