"""Files carried inside the signed packet: written once, streamed, embedded before signing.

An attachment is written through a sink that hashes it as it goes (SHA-256 for
the manifest, MD5 for the PDF's own ``/CheckSum``) and compresses it with zlib
(the PDF's ``FlateDecode``) into a work file. When the packet is signed, each
work file is embedded (``embed_attachments``) as an embedded-file stream that
is copied from disk in blocks while pyHanko writes the PDF, so neither a file
nor its compressed form is ever held in memory whole, however long the
history. The files join the document's ``/EmbeddedFiles`` name tree, sorted
by name, and its associated files (``/AF``, relationship ``Data``), in the
revision the signature covers.

Names are flat (``history-offers.offer.csv``), so a reader saves each file as
it is named.
"""

import hashlib
import shutil
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pyhanko.pdf_utils import generic
from pyhanko.pdf_utils.embed import EmbeddedFileObject, FileSpec
from pyhanko.pdf_utils.misc import PdfWriteError
from pyhanko.pdf_utils.writer import BasePdfFileWriter

COPY_BLOCK = 1024 * 1024
COMPRESSION_LEVEL = 6


@dataclass(frozen=True)
class PacketAttachment:
    """One file inside the packet, as listed in its manifest and printed in its history chapter."""

    name: str
    description: str
    media_type: str
    size: int
    sha256: str
    md5: bytes
    rows: int | None = None
    record_type: str = ""
    record_label: str = ""
    # The file compressed for the PDF, ready to embed; None when only its digest
    # was wanted (a preview of the packet, not an issue).
    deflated: Path | None = None
    deflated_size: int = 0

    def manifest_entry(self) -> dict:
        entry = {
            "name": self.name,
            "media_type": self.media_type,
            "size": self.size,
            "sha256": self.sha256,
            "description": self.description,
        }
        if self.record_type:
            entry["record_type"] = self.record_type
        if self.rows is not None:
            entry["rows"] = self.rows
        return entry


class _Sink:
    """What an attachment is written to: hashed, measured and compressed on the way."""

    def __init__(self, deflated: Path | None) -> None:
        self.path = deflated
        self.sha256 = hashlib.sha256()
        self.md5 = hashlib.md5(usedforsecurity=False)
        self.size = 0
        self.deflated_size = 0
        self._compressor = zlib.compressobj(COMPRESSION_LEVEL) if deflated else None
        self._handle = open(deflated, "wb") if deflated else None  # noqa: SIM115 - closed in close()

    def write(self, data: bytes | str) -> int:
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.sha256.update(data)
        self.md5.update(data)
        self.size += len(data)
        if self._compressor is not None and self._handle is not None:
            self._put(self._compressor.compress(data))
        return len(data)

    def _put(self, data: bytes) -> None:
        if data and self._handle is not None:
            self._handle.write(data)
            self.deflated_size += len(data)

    def close(self) -> None:
        if self._compressor is not None:
            self._put(self._compressor.flush())
        if self._handle is not None:
            self._handle.close()


@dataclass(frozen=True)
class AttachmentSpec:
    """What an attachment will be, before it is written."""

    name: str
    description: str
    media_type: str
    record_type: str = ""
    record_label: str = ""


def write_attachments(
    workdir: Path | None, specs: Sequence[AttachmentSpec], write: Callable[..., int | None]
) -> list[PacketAttachment]:
    """Write attachments together with ``write(*sinks)`` (a sink per spec, in order).

    Returns what the manifest lists of each; ``write`` returns their row count,
    if any. With ``workdir`` None the files are only hashed (nothing is kept).
    """
    sinks = [_Sink(workdir / f"{spec.name}.deflate" if workdir else None) for spec in specs]
    try:
        rows = write(*sinks)
    finally:
        for sink in sinks:
            sink.close()
    return [
        PacketAttachment(
            name=spec.name,
            description=spec.description,
            media_type=spec.media_type,
            size=sink.size,
            sha256=sink.sha256.hexdigest(),
            md5=sink.md5.digest(),
            rows=rows,
            record_type=spec.record_type,
            record_label=spec.record_label,
            deflated=sink.path,
            deflated_size=sink.deflated_size,
        )
        for spec, sink in zip(specs, sinks, strict=True)
    ]


def attachment_from_bytes(
    workdir: Path | None, name: str, content: bytes, *, description: str, media_type: str
) -> PacketAttachment:
    def write(sink: _Sink) -> None:
        sink.write(content)

    spec = AttachmentSpec(name=name, description=description, media_type=media_type)
    return write_attachments(workdir, [spec], write)[0]


class _StreamedFile(EmbeddedFileObject):
    """An embedded file whose compressed bytes are copied from its work file as it is written."""

    def __init__(self, writer: BasePdfFileWriter, attachment: PacketAttachment, when: datetime):
        super().__init__(writer, mime_type=attachment.media_type)
        self.attachment = attachment
        self.when = when

    def write_to_stream(self, stream, handler=None, container_ref=None):
        if handler is not None:
            raise PdfWriteError("Packets are not encrypted; an attachment cannot be written so.")
        attachment = self.attachment
        assert attachment.deflated is not None
        self["/Filter"] = generic.NameObject("/FlateDecode")
        self["/Length"] = generic.NumberObject(attachment.deflated_size)
        self["/Params"] = generic.DictionaryObject(
            {
                generic.NameObject("/Size"): generic.NumberObject(attachment.size),
                generic.NameObject("/CheckSum"): generic.ByteStringObject(attachment.md5),
                generic.NameObject("/ModDate"): generic.pdf_date(self.when),
            }
        )
        generic.DictionaryObject.write_to_stream(self, stream, handler, container_ref)
        stream.write(b"\nstream\n")
        with open(attachment.deflated, "rb") as handle:
            shutil.copyfileobj(handle, stream, COPY_BLOCK)
        stream.write(b"\nendstream")


def embed_attachments(
    writer: BasePdfFileWriter, attachments: Sequence[PacketAttachment], *, when: datetime
) -> None:
    """Add ``attachments`` to the document ``writer`` is about to write (before it is signed)."""
    if not attachments:
        return
    specs = []
    for attachment in sorted(attachments, key=lambda a: a.name):
        if attachment.deflated is None:
            raise ValueError(f"{attachment.name} was hashed only; it cannot be embedded.")
        stream = _StreamedFile(writer, attachment, when)
        spec = FileSpec(
            file_spec_string=attachment.name,
            file_name=attachment.name,
            embedded_data=stream,
            description=attachment.description,
            af_relationship=generic.NameObject("/Data"),
        )
        specs.append((attachment.name, writer.add_object(spec.as_pdf_object())))
    root = writer.root
    try:
        names = root["/Names"]  # WeasyPrint's named destinations may be there already
        writer.update_container(names)
    except KeyError:
        names = generic.DictionaryObject()
        root["/Names"] = writer.add_object(names)
    tree = generic.ArrayObject()
    for name, ref in specs:
        tree.append(generic.pdf_string(name))
        tree.append(ref)
    names["/EmbeddedFiles"] = writer.add_object(generic.DictionaryObject({"/Names": tree}))
    root["/AF"] = writer.add_object(generic.ArrayObject(ref for _name, ref in specs))
    writer.update_root()
    writer.ensure_output_version(version=(2, 0))
