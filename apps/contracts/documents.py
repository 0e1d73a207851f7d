"""Signed contract documents: what a file is, judged by its bytes (docs/rules/contracts.md).

A contract document is a PDF or a DOCX, whatever its name says: a PDF starts with
``%PDF-`` and reads as a PDF (its pages counted, for clause links); a DOCX is a zip
holding ``word/document.xml``. Anything else, or a file that starts right but does
not read, is refused whole with the reason. The size limit and the digest are the
project's one upload policy (``apps.core.uploads``).
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _
from pyhanko.pdf_utils.misc import PdfError
from pyhanko.pdf_utils.reader import PdfFileReader

from apps.core.uploads import FILE_KINDS, UploadPolicy

PDF, DOCX = ".pdf", ".docx"


def document_max_bytes() -> int:
    return settings.CONTRACT_DOCUMENT_MAX_BYTES


# The size is judged before anything reads the body; the type by content, below.
DOCUMENT_POLICY = UploadPolicy(document_max_bytes)


@dataclass(frozen=True)
class ContractFile:
    """A checked contract document, before it is stored."""

    name: str  # printable, never a path
    extension: str  # ".pdf" or ".docx", from the content
    content_type: str
    raw: bytes
    sha256: str
    page_count: int | None  # PDF only


def _refused() -> ValidationError:
    return ValidationError(
        _("A contract document must be a PDF or a Word (DOCX) file; this file is neither."),
        code="file_type",
    )


def pdf_page_count(raw: bytes) -> int:
    """The pages of a PDF, or a ValidationError when it does not read as one."""
    try:
        count = PdfFileReader(io.BytesIO(raw), strict=False).root["/Pages"]["/Count"]
    except (PdfError, KeyError, TypeError, ValueError, IndexError, AttributeError):
        raise ValidationError(
            _("This PDF is damaged or unreadable; nothing was stored."), code="file_content"
        ) from None
    if not isinstance(count, int) or count < 1:
        raise ValidationError(_("This PDF has no pages; nothing was stored."), code="file_content")
    return count


def _docx_ok(raw: bytes) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, ValueError, OSError):
        raise _refused() from None
    if "word/document.xml" not in names:
        raise _refused()


def read_contract_file(upload) -> ContractFile:
    """The upload as a contract document, or a ValidationError saying why it is refused:
    empty, over the size limit, not a PDF or DOCX by its content, or damaged."""
    limit = document_max_bytes()
    too_large = _("The file is larger than %(limit)s.") % {"limit": filesizeformat(limit)}
    if upload.size is not None and upload.size > limit:
        raise ValidationError(too_large, code="file_size")
    upload.seek(0)
    raw = upload.read(limit + 1)
    if len(raw) > limit:
        raise ValidationError(too_large, code="file_size")
    if not raw:
        raise ValidationError(_("The file is empty."), code="file_empty")
    # A PDF reader takes blank lines before the header; so does this check.
    head = raw[:1024].lstrip()
    page_count: int | None = None
    if head.startswith(b"%PDF-"):
        extension = PDF
        page_count = pdf_page_count(raw)
    elif head.startswith(b"PK\x03\x04"):
        extension = DOCX
        _docx_ok(raw)
    else:
        raise _refused()
    name = os.path.basename(getattr(upload, "name", "") or "").strip()[:200]
    name = "".join(ch for ch in name if ch.isprintable()).strip()
    stem = os.path.splitext(name)[0] or "contract"
    # Offered back under the type its content is, whatever the name said.
    shown = (stem[: 200 - len(extension)] + extension) if stem else "contract" + extension
    return ContractFile(
        name=shown,
        extension=extension,
        content_type=FILE_KINDS[extension].content_type,
        raw=raw,
        sha256=hashlib.sha256(raw).hexdigest(),
        page_count=page_count,
    )
