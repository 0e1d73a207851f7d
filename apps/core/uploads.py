"""The one upload policy: bodies refused from their declared length before anything reads them.

Every page and endpoint that takes a file states its limit as an ``UploadPolicy``
and refuses through it, with one wording and one status (413 too large, 400 no
valid length), as a page or in the API's ``{"detail": ...}`` shape. A policy that
takes files of named kinds lists them (``FILE_KINDS`` by extension) and checks each
file's name and first bytes with ``file_kind``: one wording for a refused type.

Django's CSRF check reads ``request.POST`` (for a multipart body: all of it, spooled
to disk) before a page's view runs, so a size limit checked in the view comes too late
for a browser upload. A view names its pre-read check with ``@refused_unread(check)``;
``UploadLimitMiddleware``, placed before CsrfViewMiddleware, runs that check first.

API endpoints use the same middleware (``refused_unread(api_declared_over(...))`` on the
view ``as_view()`` returns): DRF parses a session client's body during its CSRF check, and
multipart parsing spools the whole body to disk, both before the endpoint's code runs.
"""

import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
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
class FileKind:
    """A kind of file taken by extension, with the bytes such a file starts with (if fixed)."""

    content_type: str
    starts: tuple[bytes, ...] = ()


ZIP_STARTS = (b"PK\x03\x04", b"PK\x05\x06")
FILE_KINDS: dict[str, FileKind] = {
    ".pdf": FileKind("application/pdf", (b"%PDF-",)),
    ".png": FileKind("image/png", (b"\x89PNG",)),
    ".jpg": FileKind("image/jpeg", (b"\xff\xd8\xff",)),
    ".jpeg": FileKind("image/jpeg", (b"\xff\xd8\xff",)),
    ".gz": FileKind("application/gzip", (b"\x1f\x8b",)),
    ".zip": FileKind("application/zip", ZIP_STARTS),
    ".docx": FileKind(
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document", ZIP_STARTS
    ),
    ".xlsx": FileKind(
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", ZIP_STARTS
    ),
    ".txt": FileKind("text/plain"),
    ".log": FileKind("text/plain"),
    ".csv": FileKind("text/csv"),
    ".json": FileKind("application/json"),
}


def kinds(*extensions: str) -> dict[str, FileKind]:
    """The named kinds out of ``FILE_KINDS`` (an unknown extension is a programming error)."""
    return {extension: FILE_KINDS[extension] for extension in extensions}


# The sets the pages share: a log or screenshot of a test; evidence behind an answer.
LOGS_AND_SCREENSHOTS = kinds(
    ".log", ".txt", ".json", ".csv", ".png", ".jpg", ".jpeg", ".pdf", ".gz"
)
EVIDENCE_DOCUMENTS = kinds(
    ".pdf", ".png", ".jpg", ".jpeg", ".txt", ".log", ".csv", ".json", ".docx", ".xlsx", ".zip"
)


def file_kind(upload, allowed: Mapping[str, FileKind]) -> tuple[str, str, FileKind]:
    """``(name, extension, kind)`` of an uploaded file whose name and first bytes fit ``allowed``.

    Raises ``ValidationError`` with the one wording of a refused type. The file is
    left at its start.
    """
    name = os.path.basename(getattr(upload, "name", "") or "").strip()[:200]
    extension = os.path.splitext(name)[1].lower()
    kind = allowed.get(extension)
    if kind is None:
        raise ValidationError(
            _("Files of this type are not taken here; the types taken are %(types)s.")
            % {"types": ", ".join(sorted(allowed))},
            code="file_type",
        )
    if kind.starts:
        upload.seek(0)
        # A PDF reader takes blank lines before the header; so does this check.
        head = upload.read(1024).lstrip()
        upload.seek(0)
        if not any(head.startswith(start) for start in kind.starts):
            raise ValidationError(
                _("This file's content is not a %(type)s file, whatever its name says.")
                % {"type": extension.lstrip(".").upper()},
                code="file_content",
            )
    return name, extension, kind


@dataclass(frozen=True)
class ReadFile:
    """An uploaded file as read and checked, before it is stored."""

    name: str  # printable, never a path
    extension: str
    content_type: str
    raw: bytes
    sha256: str


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
    # The kinds of file taken, by extension; empty where the body is checked otherwise.
    types: Mapping[str, FileKind] = field(default_factory=dict)

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

    def file_kind(self, upload) -> tuple[str, str, FileKind]:
        """``(name, extension, kind)`` of a file this policy takes; ``ValidationError`` if not."""
        return file_kind(upload, self.types)

    def read(self, upload, *, default_name: str) -> "ReadFile":
        """The file's bytes with its shown name, type, size and SHA-256, or a
        ``ValidationError`` saying why it is refused: over the limit (judged before a byte
        is read, and again on what was read), empty, or not a kind this policy takes."""
        limit = self.limit()
        too_large = _("The file is larger than %(limit)s.") % {"limit": filesizeformat(limit)}
        if upload.size is not None and upload.size > limit:
            raise ValidationError(too_large)
        if upload.size == 0:
            raise ValidationError(_("The file is empty."))
        name, extension, kind = self.file_kind(upload)
        raw = upload.read(limit + 1)
        if len(raw) > limit:
            raise ValidationError(too_large)
        if not raw:
            raise ValidationError(_("The file is empty."))
        # Shown and offered back as the download's name: printable, and never a path.
        name = "".join(ch for ch in name if ch.isprintable()).strip() or default_name + extension
        return ReadFile(
            name=name[:200],
            extension=extension,
            content_type=kind.content_type,
            raw=raw,
            sha256=hashlib.sha256(raw).hexdigest(),
        )

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
