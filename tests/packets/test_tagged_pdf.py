"""The signed packet is a tagged PDF: its structure tree, language and title survive
the chapters being laid out apart, joined, numbered and signed."""

import io
import shutil
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from pypdf import PdfReader
from pypdf.generic import ContentStream, DictionaryObject

from apps.packets.services import packet_request_create
from apps.packets.verification import verify_packet_bytes
from tests.packets.factories import make_packet_case
from tests.packets.pdftools import pdfsig

pytestmark = pytest.mark.whole_case


def _issued(priya, django_capture_on_commit_callbacks, settings, *, language: str, processes: int):
    settings.PACKET_RENDER_PROCESSES = processes
    case = make_packet_case(priya)
    with django_capture_on_commit_callbacks(execute=True):
        request = packet_request_create(actor=priya, case=case, language=language)
    request.refresh_from_db()
    assert request.status == "done", request.error
    packet = request.packet
    with default_storage.open(packet.file.name, "rb") as handle:
        return packet, handle.read()


def _walk(reader: PdfReader, root) -> tuple[list, set[int]]:
    """Every structure element under ``root``, and the pages they mark content on."""
    elements, pages, stack = [], set(), [root]
    page_index = {page.indirect_reference.idnum: n for n, page in enumerate(reader.pages)}
    while stack:
        element = stack.pop().get_object()
        elements.append(element)
        if "/Pg" in element:
            pages.add(page_index[element.raw_get("/Pg").idnum])
        kids = element.get("/K", [])
        for kid in kids if isinstance(kids, list) else [kids]:
            node = kid.get_object() if hasattr(kid, "get_object") else kid
            if isinstance(node, DictionaryObject) and "/S" in node:
                stack.append(kid)
    return elements, pages


def _mcids(page) -> list[int]:
    content = ContentStream(page.get_contents(), page.pdf)
    return [
        int(operands[1]["/MCID"])
        for operands, operator in content.operations
        if operator == b"BDC" and isinstance(operands[1], dict) and "/MCID" in operands[1]
    ]


@pytest.mark.parametrize(
    ("language", "lang", "processes"), [("en", "en", 2), ("zh-hans", "zh-Hans", 1)]
)
def test_the_signed_packet_is_tagged_with_its_language_and_title(
    priya, django_capture_on_commit_callbacks, settings, tmp_path, language, lang, processes
):
    packet, content = _issued(
        priya, django_capture_on_commit_callbacks, settings, language=language, processes=processes
    )
    reader = PdfReader(io.BytesIO(content))
    root = reader.root_object

    assert root["/MarkInfo"]["/Marked"] == True  # noqa: E712
    assert root["/Lang"].lower() == lang.lower()
    assert root["/ViewerPreferences"]["/DisplayDocTitle"] == True  # noqa: E712
    assert reader.metadata.title and packet.number in reader.metadata.title

    tree = root["/StructTreeRoot"].get_object()
    (document,) = tree["/K"]
    assert document.get_object()["/S"] == "/Document"
    elements, marked_pages = _walk(reader, document)
    # Every page carries content in the tree: the cover, the contents, every chapter.
    assert marked_pages == set(range(len(reader.pages))), sorted(
        set(range(len(reader.pages))) - marked_pages
    )
    kinds = {str(element["/S"]) for element in elements}
    assert {"/H1", "/P", "/Table", "/TD"} <= kinds, kinds

    # Each page's marks have their own key in the one parent tree, and each mark on a
    # page (its own, none from the page-number layer printed over it) has an element.
    nums = tree["/ParentTree"]["/Nums"]
    keys = {int(nums[i]): nums[i + 1] for i in range(0, len(nums), 2)}
    page_keys = [int(page["/StructParents"]) for page in reader.pages]
    assert len(set(page_keys)) == len(page_keys)
    for page, key in zip(reader.pages, page_keys, strict=True):
        marks = _mcids(page)
        assert marks, "a page with no tagged content"
        assert len(marks) == len(set(marks)), "two marks with one number on a page"
        assert max(marks) < len(keys[key])
        assert all(keys[key][mcid] is not None for mcid in marks)
    # The page numbers are printed over the pages as artifacts, not as text of the page.
    assert b"/Artifact" in reader.pages[-1].get_contents().get_data()

    result = verify_packet_bytes(content)
    assert result.valid, result.problems
    if shutil.which("pdfsig") is None:
        pytest.skip("pdfsig (poppler-utils) is not installed")
    path = Path(tmp_path) / "packet.pdf"
    path.write_bytes(content)
    assert pdfsig(path).valid
