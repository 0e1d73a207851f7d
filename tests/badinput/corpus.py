"""Bad inputs for every upload, built in code from a valid example (nothing binary is committed).

Each family is a dict of named builders, ``name -> builder(valid) -> Payload``, so the
names are known when pytest collects (``pytest.mark.parametrize("name", JSON)``) while
the bytes are made from whatever valid upload the test has at hand: a real harness
bundle, a real case export, a signed packet, or later an attachment or a bill CSV.
"""

import io
import json
import struct
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass

# Far past any sane document and past Python's recursion limit (1,000 frames).
DEEP = 100_000
# Big enough to hurt if copied around, small enough to stay under the upload limits.
HUGE_STRING_CHARS = 2 * 1024 * 1024
# Inflated size of the bomb members: 64 MiB of zeros deflate to about 64 KiB.
BOMB_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Payload:
    """One upload as the client sends it: bytes, declared media type and file name."""

    name: str
    body: bytes
    content_type: str = "application/octet-stream"
    filename: str = "upload.bin"

    def __repr__(self) -> str:  # pytest ids and failure messages stay readable
        return f"Payload({self.name!r}, {len(self.body)} bytes, {self.content_type})"


Builder = Callable[[bytes], Payload]


def _json(name: str, make: Callable[[bytes], bytes], content_type="application/json") -> Builder:
    return lambda valid: Payload(name, make(valid), content_type, "bundle.json")


def duplicate_first_key(valid: bytes) -> bytes:
    """The first top-level key again, first with another value: parsers disagree on which wins."""
    document = json.loads(valid)
    key = sorted(document)[0]
    head = json.dumps({key: "the other value"})[1:-1]
    return b"{" + head.encode() + b"," + valid.lstrip()[1:]


def with_value(valid: bytes, literal: str | bytes) -> bytes:
    """The valid object with one more top-level member holding a raw JSON literal."""
    raw = literal if isinstance(literal, bytes) else literal.encode()
    return b'{"zz_injected":' + raw + b"," + valid.lstrip()[1:]


# Generic JSON documents: the body of an API upload.
JSON: dict[str, Builder] = {
    "empty": _json("empty", lambda v: b""),
    "whitespace_only": _json("whitespace_only", lambda v: b" \r\n\t "),
    "truncated_half": _json("truncated_half", lambda v: v[: len(v) // 2]),
    "truncated_last_byte": _json("truncated_last_byte", lambda v: v[:-1]),
    "trailing_garbage": _json("trailing_garbage", lambda v: v + b"}garbage"),
    "two_documents": _json("two_documents", lambda v: v + b"\n" + v),
    "json_null": _json("json_null", lambda v: b"null"),
    "json_array": _json("json_array", lambda v: b"[" + v + b"]"),
    "json_string": _json("json_string", lambda v: json.dumps(v.decode()).encode()),
    "json_number": _json("json_number", lambda v: b"42"),
    "deep_arrays": _json("deep_arrays", lambda v: b"[" * DEEP + b"]" * DEEP),
    "deep_objects": _json("deep_objects", lambda v: b'{"a":' * DEEP + b"1" + b"}" * DEEP),
    "deep_inside_valid": _json(
        "deep_inside_valid", lambda v: with_value(v, "[" * DEEP + "]" * DEEP)
    ),
    "moderately_deep_inside_valid": _json(
        "moderately_deep_inside_valid", lambda v: with_value(v, "[" * 900 + "]" * 900)
    ),
    "nan": _json("nan", lambda v: with_value(v, "NaN")),
    "infinity": _json("infinity", lambda v: with_value(v, "Infinity")),
    "minus_infinity": _json("minus_infinity", lambda v: with_value(v, "-Infinity")),
    "overflowing_float": _json("overflowing_float", lambda v: with_value(v, "1e400")),
    "huge_integer": _json("huge_integer", lambda v: with_value(v, "9" * 5000)),
    "duplicate_keys": _json("duplicate_keys", duplicate_first_key),
    "huge_string": _json("huge_string", lambda v: b'{"note":"' + b"x" * HUGE_STRING_CHARS + b'"}'),
    "huge_key": _json("huge_key", lambda v: b'{"' + b"k" * HUGE_STRING_CHARS + b'":1}'),
    "lone_surrogate_escape": _json("lone_surrogate_escape", lambda v: with_value(v, '"\\ud800"')),
    "nul_escape": _json("nul_escape", lambda v: with_value(v, '"\\u0000"')),
    "utf8_bom": _json("utf8_bom", lambda v: b"\xef\xbb\xbf" + v),
    "utf16_with_bom": _json("utf16_with_bom", lambda v: v.decode().encode("utf-16")),
    "utf16le_no_bom": _json("utf16le_no_bom", lambda v: v.decode().encode("utf-16-le")),
    "utf32": _json("utf32", lambda v: v.decode().encode("utf-32")),
    "latin1_text": _json("latin1_text", lambda v: with_value(v, '"caf\xe9"'.encode("latin-1"))),
    "invalid_utf8_byte": _json("invalid_utf8_byte", lambda v: with_value(v, b'"\xff"')),
    "overlong_utf8": _json("overlong_utf8", lambda v: with_value(v, b'"\xc0\xaf"')),
    "encoded_surrogate_utf8": _json(
        "encoded_surrogate_utf8", lambda v: with_value(v, b'"\xed\xa0\x80"')
    ),
    "wrong_type_xml": _json(
        "wrong_type_xml", lambda v: b'<?xml version="1.0"?><bundle/>', "application/xml"
    ),
    "wrong_type_pdf": _json("wrong_type_pdf", lambda v: minimal_pdf(), "application/pdf"),
    "wrong_type_zip": _json(
        "wrong_type_zip", lambda v: zip_of([("bundle.json", v)]), "application/zip"
    ),
    "gzip_of_valid": _json("gzip_of_valid", lambda v: _gzip(v), "application/gzip"),
    "random_binary": _json("random_binary", lambda v: bytes(range(256)) * 64),
}


def _gzip(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, mtime=0)


# ---- PDF -------------------------------------------------------------------------------------


def minimal_pdf(text: str = "not a packet") -> bytes:
    """A small well-formed one-page PDF with a correct cross-reference table."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>",
    ]
    stream = f"BT /F1 12 Tf 20 100 Td ({text}) Tj ET".encode()
    objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def appended_update(pdf: bytes, text: str = "added after signing") -> bytes:
    """An incremental update appended to ``pdf``: a new page content object and a new xref.

    Readers show the updated document; a signature made before it no longer covers the file.
    """
    start = pdf.rfind(b"startxref")
    previous = int(pdf[start + len(b"startxref") :].split()[0])
    size = _trailer_size(pdf)
    stream = f"BT /F1 12 Tf 20 50 Td ({text}) Tj ET".encode()
    body = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
    out = bytearray(pdf if pdf.endswith(b"\n") else pdf + b"\n")
    offset = len(out)
    out += b"%d 0 obj\n" % size + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n%d 1\n%010d 00000 n \n" % (size, offset)
    root = _trailer_root(pdf)
    out += b"trailer\n<< /Size %d /Root %s /Prev %d >>\nstartxref\n%d\n%%%%EOF\n" % (
        size + 1,
        root,
        previous,
        xref,
    )
    return bytes(out)


def _trailer_size(pdf: bytes) -> int:
    import re

    sizes = [int(m) for m in re.findall(rb"/Size\s+(\d+)", pdf)]
    return max(sizes) if sizes else 1


def _trailer_root(pdf: bytes) -> bytes:
    import re

    roots = re.findall(rb"/Root\s+(\d+\s+\d+\s+R)", pdf)
    return roots[-1] if roots else b"1 0 R"


def _pdf(name: str, make: Callable[[bytes], bytes], content_type="application/pdf") -> Builder:
    return lambda valid: Payload(name, make(valid), content_type, "packet.pdf")


# PDF uploads: ``valid`` is a real PDF (a packet, or minimal_pdf()).
PDF: dict[str, Builder] = {
    "empty": _pdf("empty", lambda v: b""),
    "html_named_pdf": _pdf("html_named_pdf", lambda v: b"<!doctype html><p>%PDF-1.7</p>"),
    "zip_named_pdf": _pdf("zip_named_pdf", lambda v: zip_of([("a.pdf", v)])),
    "magic_only": _pdf("magic_only", lambda v: b"%PDF-"),
    "magic_then_garbage": _pdf("magic_then_garbage", lambda v: b"%PDF-1.7\n" + bytes(range(256))),
    "truncated_half": _pdf("truncated_half", lambda v: v[: len(v) // 2]),
    "truncated_tail": _pdf("truncated_tail", lambda v: v[:-200]),
    "utf16_text": _pdf("utf16_text", lambda v: v.decode("latin-1").encode("utf-16")),
    "broken_xref_offsets": _pdf(
        "broken_xref_offsets", lambda v: v.replace(b" 00000 n ", b" 99999 n ")
    ),
    "huge_declared_stream_length": _pdf(
        "huge_declared_stream_length", lambda v: _replace_lengths(v, b"/Length 99999999999999")
    ),
    "deeply_nested_array": _pdf(
        "deeply_nested_array",
        lambda v: (
            v.replace(b"/MediaBox [0 0 200 200]", b"/X " + b"[" * DEEP + b"]" * DEEP)
            if b"/MediaBox [0 0 200 200]" in v
            else v + b"1 0 obj " + b"[" * DEEP + b"]" * DEEP + b" endobj\n"
        ),
    ),
    "appended_update": _pdf("appended_update", appended_update),
    "appended_garbage": _pdf("appended_garbage", lambda v: v + b"\x00" * 4096),
    "wrong_content_type": _pdf("wrong_content_type", lambda v: v, "application/x-msdownload"),
    "path_trick_file_name": lambda v: Payload(
        "path_trick_file_name", v, "application/pdf", "../../../etc/passwd.pdf"
    ),
}


def _replace_lengths(pdf: bytes, replacement: bytes) -> bytes:
    import re

    return re.sub(rb"/Length \d+", replacement, pdf)


# ---- ZIP -------------------------------------------------------------------------------------


def zip_of(members: list[tuple[str, bytes]], *, compression=zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are the point of some payloads
        with zipfile.ZipFile(out, "w", compression) as archive:
            for name, content in members:
                info = zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0))
                info.compress_type = compression
                archive.writestr(info, content)
    return out.getvalue()


def members_of(archive: bytes) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(archive)) as source:
        return [(info.filename, source.read(info)) for info in source.infolist()]


def rename_raw(archive: bytes, old: str, new: bytes) -> bytes:
    """Rename a member in both its headers, byte for byte; ``zipfile`` would clean NULs away."""
    assert len(old.encode()) == len(new), "raw renames keep the length (offsets stay right)"
    return archive.replace(old.encode(), new)


def _with_member(valid: bytes, name: str, content: bytes = b"x") -> bytes:
    return zip_of([*members_of(valid), (name, content)])


def _with_raw_name(valid: bytes, raw_name: bytes) -> bytes:
    placeholder = "Q" * len(raw_name)
    return rename_raw(_with_member(valid, placeholder), placeholder, raw_name)


def _first_member_flagged(valid: bytes, *, flag_bits=0, compression: int | None = None) -> bytes:
    """Set general-purpose flag bits or the compression method of the first member's headers."""
    data = bytearray(valid)
    local = data.find(b"PK\x03\x04")
    central = data.find(b"PK\x01\x02")
    if flag_bits:
        for at in (local + 6, central + 8):
            flags = struct.unpack_from("<H", data, at)[0]
            struct.pack_into("<H", data, at, flags | flag_bits)
    if compression is not None:
        struct.pack_into("<H", data, local + 8, compression)
        struct.pack_into("<H", data, central + 10, compression)
    return bytes(data)


def _declared_size(valid: bytes, size: int) -> bytes:
    """The first member's uncompressed size, in the central directory, set to ``size``."""
    data = bytearray(valid)
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, size)
    return bytes(data)


def _bomb(valid: bytes, name: str) -> bytes:
    """``name`` replaced by BOMB_BYTES of zeros, deflated to a few KiB."""
    members = [(n, c) for n, c in members_of(valid) if n != name]
    return zip_of([*members, (name, b"\0" * BOMB_BYTES)], compression=zipfile.ZIP_DEFLATED)


def _first_member_name(valid: bytes) -> str:
    return members_of(valid)[0][0]


def _manifest_replaced(valid: bytes, name: str, content: bytes) -> bytes:
    return zip_of([(n, content if n == name else c) for n, c in members_of(valid)])


def _zip(name: str, make: Callable[[bytes], bytes], content_type="application/zip") -> Builder:
    return lambda valid: Payload(name, make(valid), content_type, "export.zip")


# ZIP uploads: ``valid`` is a real archive (a case export).
ZIP: dict[str, Builder] = {
    "empty": _zip("empty", lambda v: b""),
    "not_a_zip": _zip("not_a_zip", lambda v: b"%PDF-1.7 this is not an archive"),
    "truncated_half": _zip("truncated_half", lambda v: v[: len(v) // 2]),
    "truncated_central_directory": _zip("truncated_central_directory", lambda v: v[:-30]),
    "only_end_record": _zip("only_end_record", lambda v: v[v.rfind(b"PK\x05\x06") :]),
    "corrupted_member_data": _zip(
        "corrupted_member_data",
        lambda v: v[:60] + bytes(b ^ 0xFF for b in v[60:200]) + v[200:],
    ),
    "parent_directory": _zip("parent_directory", lambda v: _with_member(v, "../outside.json")),
    "nested_parent": _zip("nested_parent", lambda v: _with_member(v, "records/../../x.json")),
    "absolute_path": _zip("absolute_path", lambda v: _with_member(v, "/etc/passwd")),
    "windows_drive": _zip("windows_drive", lambda v: _with_member(v, "C:/Windows/x.json")),
    "backslashes": _zip("backslashes", lambda v: _with_member(v, "..\\..\\x.json")),
    "nul_in_name": _zip("nul_in_name", lambda v: _with_raw_name(v, b"manifest.json\x00../../x")),
    "nul_after_member_name": _zip(
        "nul_after_member_name",
        lambda v: _with_raw_name(v, _first_member_name(v).encode() + b"\x00.exe"),
    ),
    "very_long_name": _zip("very_long_name", lambda v: _with_member(v, "a/" * 20_000 + "x")),
    "empty_path_segment": _zip("empty_path_segment", lambda v: _with_member(v, "records//x")),
    "directory_entry": _zip("directory_entry", lambda v: _with_member(v, "records/extra/")),
    "duplicate_member": _zip(
        "duplicate_member",
        lambda v: zip_of([*members_of(v), (_first_member_name(v), b"a second copy")]),
    ),
    "encrypted_member": _zip("encrypted_member", lambda v: _first_member_flagged(v, flag_bits=1)),
    "unsupported_compression": _zip(
        "unsupported_compression", lambda v: _first_member_flagged(v, compression=99)
    ),
    "huge_declared_size": _zip("huge_declared_size", lambda v: _declared_size(v, 0xFFFFFFF0)),
    "zero_declared_size": _zip("zero_declared_size", lambda v: _declared_size(v, 0)),
    "bomb_member": _zip("bomb_member", lambda v: _bomb(v, _first_member_name(v))),
    "bomb_extra_member": _zip("bomb_extra_member", lambda v: _bomb(v, "records/bomb.json")),
}


def manifest_payloads(manifest_name: str) -> dict[str, Builder]:
    """ZIP payloads whose manifest member is replaced by a bad JSON document."""

    def replaced(name: str, content: Callable[[bytes], bytes]) -> Builder:
        def build(valid: bytes) -> Payload:
            original = dict(members_of(valid))[manifest_name]
            return Payload(
                name,
                _manifest_replaced(valid, manifest_name, content(original)),
                "application/zip",
                "export.zip",
            )

        return build

    def sizes(original: bytes, literal: str) -> bytes:
        text = original.decode()
        document = json.loads(text)
        document["files"][0]["size"] = "__SIZE__"
        return json.dumps(document).replace('"__SIZE__"', literal).encode()

    return {
        "manifest_deep": replaced("manifest_deep", lambda m: b"[" * DEEP + b"]" * DEEP),
        "manifest_deep_object": replaced(
            "manifest_deep_object", lambda m: b'{"a":' * DEEP + b"1" + b"}" * DEEP
        ),
        "manifest_truncated": replaced("manifest_truncated", lambda m: m[: len(m) // 2]),
        "manifest_utf16": replaced("manifest_utf16", lambda m: m.decode().encode("utf-16")),
        "manifest_invalid_utf8": replaced("manifest_invalid_utf8", lambda m: b"\xff\xfe" + m),
        "manifest_nan_size": replaced("manifest_nan_size", lambda m: sizes(m, "NaN")),
        "manifest_infinite_size": replaced(
            "manifest_infinite_size", lambda m: sizes(m, "Infinity")
        ),
        "manifest_huge_size": replaced("manifest_huge_size", lambda m: sizes(m, "1" + "0" * 30)),
        "manifest_negative_size": replaced("manifest_negative_size", lambda m: sizes(m, "-1")),
        "manifest_huge_integer": replaced("manifest_huge_integer", lambda m: sizes(m, "9" * 5000)),
        "manifest_string_size": replaced("manifest_string_size", lambda m: sizes(m, '"big"')),
        "manifest_files_not_a_list": replaced(
            "manifest_files_not_a_list",
            lambda m: json.dumps({**json.loads(m), "files": 7}).encode(),
        ),
        "manifest_path_is_a_list": replaced(
            "manifest_path_is_a_list",
            lambda m: json.dumps({**json.loads(m), "files": [{"path": ["a"], "size": 1}]}).encode(),
        ),
        "manifest_duplicate_keys": replaced(
            "manifest_duplicate_keys", lambda m: b'{"files":[],' + m.lstrip()[1:]
        ),
        "manifest_not_json": replaced("manifest_not_json", lambda m: b"<manifest/>"),
    }


# ---- CSV -------------------------------------------------------------------------------------


def _csv(name: str, make: Callable[[bytes], bytes], content_type="text/csv") -> Builder:
    return lambda valid: Payload(name, make(valid), content_type, "bill.csv")


def _rows(valid: bytes) -> list[bytes]:
    return valid.replace(b"\r\n", b"\n").rstrip(b"\n").split(b"\n")


def _first_cell_of_row(valid: bytes, cell: bytes) -> bytes:
    """The first data row's first cell replaced by ``cell``."""
    header, first, *rest = _rows(valid)
    return b"\n".join([header, cell + first[first.find(b",") :], *rest]) + b"\n"


def _last_cell_of_row(valid: bytes, cell: bytes) -> bytes:
    """The first data row's last cell (an amount, in most bills) replaced by ``cell``."""
    header, first, *rest = _rows(valid)
    return b"\n".join([header, first[: first.rfind(b",") + 1] + cell, *rest]) + b"\n"


# CSV imports: ``valid`` is a good file with a header row and at least one data row,
# whose last column is a number (the cost bill import's amount).
CSV: dict[str, Builder] = {
    "empty": _csv("empty", lambda v: b""),
    "header_only": _csv("header_only", lambda v: _rows(v)[0] + b"\n"),
    "truncated_mid_row": _csv(
        "truncated_mid_row", lambda v: v[: len(v) - len(_rows(v)[-1]) // 2 - 1]
    ),
    "unterminated_quote": _csv(
        "unterminated_quote", lambda v: _first_cell_of_row(v, b'"never closed')
    ),
    "semicolons": _csv("semicolons", lambda v: v.replace(b",", b";")),
    "tabs": _csv("tabs", lambda v: v.replace(b",", b"\t")),
    "extra_column": _csv(
        "extra_column", lambda v: _last_cell_of_row(v, _rows(v)[1].rsplit(b",", 1)[1] + b",surplus")
    ),
    "missing_column": _csv(
        "missing_column",
        lambda v: b"\n".join([_rows(v)[0], _rows(v)[1].rsplit(b",", 1)[0], *_rows(v)[2:]]) + b"\n",
    ),
    "utf8_bom": _csv("utf8_bom", lambda v: b"\xef\xbb\xbf" + v),
    "utf16_with_bom": _csv("utf16_with_bom", lambda v: v.decode().encode("utf-16")),
    "gb18030_text": _csv(
        "gb18030_text", lambda v: _first_cell_of_row(v, "华东算力".encode("gb18030"))
    ),
    "invalid_utf8": _csv("invalid_utf8", lambda v: _first_cell_of_row(v, b"\xff\xfe\xfd")),
    "nul_bytes": _csv("nul_bytes", lambda v: _first_cell_of_row(v, b"a\x00b")),
    "formula_injection": _csv(
        "formula_injection", lambda v: _first_cell_of_row(v, b'=HYPERLINK("http://x")')
    ),
    "amount_nan": _csv("amount_nan", lambda v: _last_cell_of_row(v, b"NaN")),
    "amount_infinity": _csv("amount_infinity", lambda v: _last_cell_of_row(v, b"Infinity")),
    "amount_huge": _csv("amount_huge", lambda v: _last_cell_of_row(v, b"9" * 5000)),
    "amount_exponent": _csv("amount_exponent", lambda v: _last_cell_of_row(v, b"1e400")),
    "amount_negative": _csv("amount_negative", lambda v: _last_cell_of_row(v, b"-100.00")),
    "amount_text": _csv("amount_text", lambda v: _last_cell_of_row(v, b"a lot")),
    "amount_thousands_separator": _csv(
        "amount_thousands_separator", lambda v: _last_cell_of_row(v, b'"1,000.00"')
    ),
    "huge_cell": _csv("huge_cell", lambda v: _first_cell_of_row(v, b"x" * HUGE_STRING_CHARS)),
    "many_rows": _csv("many_rows", lambda v: _rows(v)[0] + b"\n" + (_rows(v)[1] + b"\n") * 200_000),
    "wrong_type_xlsx": _csv(
        "wrong_type_xlsx",
        lambda v: zip_of([("[Content_Types].xml", b"<Types/>"), ("xl/workbook.xml", v)]),
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    "wrong_type_pdf": _csv("wrong_type_pdf", lambda v: minimal_pdf(), "application/pdf"),
    "random_binary": _csv("random_binary", lambda v: bytes(range(256)) * 64),
}


# ---- Any attached file -------------------------------------------------------------------------

# File names a client may send with an attachment; none may choose where it is stored.
HOSTILE_FILE_NAMES = [
    "../../../../etc/passwd",
    "/etc/cron.d/evil.pdf",
    "..\\..\\windows\\evil.pdf",
    "C:\\evil.pdf",
    "nul\x00byte.pdf",
    "a" * 400 + ".pdf",
    "\u202egnp.exe.pdf",
    ".htaccess",
    "....//....//x.pdf",
    "CON.pdf",
    " ",
]


def attachment_payloads(limit_bytes: int) -> dict[str, Payload]:
    """Files any attachment upload must refuse, for an upload limited to ``limit_bytes``."""
    return {
        "empty": Payload("empty", b"", "application/pdf", "letter.pdf"),
        "one_byte_over": Payload(
            "one_byte_over", b"x" * (limit_bytes + 1), "application/pdf", "a.pdf"
        ),
    }


__all__ = [
    "CSV",
    "HOSTILE_FILE_NAMES",
    "JSON",
    "PDF",
    "ZIP",
    "Payload",
    "appended_update",
    "attachment_payloads",
    "manifest_payloads",
    "minimal_pdf",
    "zip_of",
]
