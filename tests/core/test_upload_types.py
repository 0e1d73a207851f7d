"""One allow-list mechanism for uploaded files: by extension, and by first bytes where fixed."""

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.core.uploads import EVIDENCE_DOCUMENTS, LOGS_AND_SCREENSHOTS, file_kind, kinds


@pytest.mark.parametrize(
    "name,content,allowed,result",
    [
        ("letter.pdf", b"%PDF-1.7\n...", EVIDENCE_DOCUMENTS, "application/pdf"),
        ("Letter.PDF", b"\n\n%PDF-1.4", EVIDENCE_DOCUMENTS, "application/pdf"),
        ("shot.png", b"\x89PNG\r\n\x1a\n", LOGS_AND_SCREENSHOTS, "image/png"),
        ("run.log", b"anything at all", LOGS_AND_SCREENSHOTS, "text/plain"),
        ("terms.docx", b"PK\x03\x04rest", EVIDENCE_DOCUMENTS, "wordprocessingml"),
        ("tool.exe", b"MZ", EVIDENCE_DOCUMENTS, "not taken here"),
        ("no-extension", b"%PDF-1.4", EVIDENCE_DOCUMENTS, "not taken here"),
        ("terms.docx", b"PK\x03\x04", LOGS_AND_SCREENSHOTS, "not taken here"),
        ("renamed.pdf", b"MZ\x90\x00", EVIDENCE_DOCUMENTS, "not a PDF file"),
        ("renamed.png", b"GIF89a", LOGS_AND_SCREENSHOTS, "not a PNG file"),
        ("renamed.zip", b"%PDF-1.4", kinds(".zip"), "not a ZIP file"),
    ],
)
def test_file_kind(name, content, allowed, result):
    upload = SimpleUploadedFile(name, content)
    if "not " in result:
        with pytest.raises(ValidationError) as refused:
            file_kind(upload, allowed)
        assert result in " ".join(refused.value.messages)
        return
    _name, _extension, kind = file_kind(upload, allowed)
    assert result in kind.content_type
    assert upload.read() == content  # left at its start for whoever stores it


def test_the_refusal_lists_the_types_taken():
    with pytest.raises(ValidationError) as refused:
        file_kind(SimpleUploadedFile("x.exe", b"MZ"), kinds(".pdf", ".png"))
    assert ".pdf, .png" in refused.value.messages[0]
