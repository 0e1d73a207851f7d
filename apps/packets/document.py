"""Gather a case's packet: its chapters as HTML, the full history as files, and the manifest.

Queries are fixed per record type, whatever the size of the history: each
section gathers in a fixed number of queries, the change-history summary reads
each history table once or twice (``apps.audit.history_summary``), each
attached history file is one streamed query (``apps.audit.history_files``),
and the manifest reads each history table's newest rows once.

The packet is laid out in parts (``apps.packets.rendering``): the front
matter (cover and contents) and each chapter as a document of its own, so the
chapters can be laid out side by side; ``html`` is the same packet as one
document, for previews and for comparing with WeasyPrint on its own.
"""

import functools
import hashlib
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from apps.audit import packet as audit_packet
from apps.audit.history_files import FORMATS, WRITERS, attachment_name
from apps.audit.history_summary import person_name
from apps.audit.sources import case_history_querysets, sources_of
from apps.packets.attachments import PacketAttachment, attachment_from_bytes, write_attachment
from apps.packets.chapters import case_sections
from apps.packets.manifest import (
    MANIFEST_NAME,
    FileStatus,
    file_digests,
    manifest_bytes,
    manifest_document,
    record_digests,
)
from apps.packets.sections import PacketSection

HISTORY_ORDER = 900
MANIFEST_ORDER = 1000


@dataclass
class PacketChapter:
    """One chapter laid out as a document of its own."""

    number: int
    title: str
    anchor: str
    html: str

    @property
    def weight(self) -> int:
        # Longer chapters take longer to lay out; they are handed out first.
        return len(self.html)


@dataclass
class PacketDocument:
    manifest: dict
    manifest_json: bytes
    manifest_sha256: str
    sections: list[PacketSection]
    chapters: list[PacketChapter]
    attachments: list[PacketAttachment]
    context: dict

    def front_html(self, first_pages: list[int], pages: int) -> str:
        """The cover and the contents, each chapter's first page printed beside it; then
        a page for each of the packet's ``pages`` page numbers, to print over them."""
        toc = [
            {"anchor": c.anchor, "title": c.title, "page": first_pages[i]}
            for i, c in enumerate(self.chapters)
        ]
        return render_to_string(
            "packets/packet_front.html",
            {**self.context, "toc": toc, "page_numbers": range(1, pages + 1)},
        )

    @property
    def html(self) -> str:
        """The whole packet as one HTML document."""
        toc = [{"anchor": c.anchor, "title": c.title, "page": None} for c in self.chapters]
        return render_to_string(
            "packets/packet.html", {**self.context, "toc": toc, "sections": self.sections}
        )


def display_name(user) -> str:
    return person_name(user)


def packet_document(
    case,
    *,
    number: str,
    requested_by,
    packet_signer,
    generated_at: datetime,
    workdir: Path | None = None,
) -> PacketDocument:
    """Gather the packet of ``case``.

    With ``workdir``, the attached files are written there, ready to embed;
    without, they are only hashed (for a preview or a test of the content).
    """
    sections = case_sections(case)
    history_querysets = case_history_querysets(case)
    # The case timeline already covers most apps' records; a section adds only
    # record types it does not, so no change appears twice.
    covered = {queryset.model for queryset in history_querysets}
    for section in sections:
        for queryset in section.history_querysets:
            if queryset.model not in covered:
                history_querysets.append(queryset)
                covered.add(queryset.model)
    history = sources_of(history_querysets)
    records = record_digests(history_querysets)
    files = file_digests([item for section in sections for item in section.manifest_files])
    summary = audit_packet.history_summary(
        history, record_counts=Counter(r.record_type for r in records)
    )
    attachments = _history_attachments(history, summary, workdir)
    organisation = settings.ORGANISATION_NAME
    manifest = manifest_document(
        number=number,
        organisation=organisation,
        case=case,
        generated_at=generated_at,
        generated_by=requested_by.get_username(),
        records=records,
        files=files,
        attachments=[a.manifest_entry() for a in attachments],
    )
    manifest_json = manifest_bytes(manifest)
    manifest_sha256 = hashlib.sha256(manifest_json).hexdigest()
    sections.append(audit_packet.history_section(summary, list(attachments), order=HISTORY_ORDER))
    sections.append(
        PacketSection(
            title=_("Manifest"),
            template="packets/sections/manifest.html",
            context={
                "records": records,
                "files": files,
                "attachments": list(attachments),
                "file_problems": [f for f in files if f.status != FileStatus.OK],
                "manifest_sha256": manifest_sha256,
            },
            order=MANIFEST_ORDER,
        )
    )
    # The manifest travels last, so it can list every other attachment.
    attachments.append(
        attachment_from_bytes(
            workdir,
            MANIFEST_NAME,
            manifest_json,
            description=_("Digests of every record, evidence file and attachment in this packet"),
            media_type="application/json",
        )
    )
    context = {
        "case": case,
        "number": number,
        "organisation": organisation,
        "generated_at": generated_at,
        "generated_by": display_name(requested_by),
        "signer": packet_signer,
        "manifest_sha256": manifest_sha256,
        "record_count": len(records),
        "file_count": len(files),
        "history_file_count": len(attachments) - 1,
        "file_problems": [f for f in files if f.status != FileStatus.OK],
        "html_lang": "zh-CN" if (get_language() or "").startswith("zh") else "en",
    }
    chapters = []
    for index, section in enumerate(sections, start=1):
        section.number = index
        section.anchor = f"section-{index}"
        section.html = mark_safe(  # noqa: S308 - produced by an autoescaping template
            render_to_string(section.template, {**section.context, "section": section})
        )
        chapters.append(
            PacketChapter(
                number=index,
                title=section.title,
                anchor=section.anchor,
                html=render_to_string(
                    "packets/packet_chapter.html", {**context, "section": section}
                ),
            )
        )
    return PacketDocument(
        manifest=manifest,
        manifest_json=manifest_json,
        manifest_sha256=manifest_sha256,
        sections=sections,
        chapters=chapters,
        attachments=attachments,
        context=context,
    )


def _history_attachments(history, summary, workdir: Path | None) -> list[PacketAttachment]:
    """The full history, a CSV and a JSON file per record type that has any."""
    changed = {item.key for item in summary.by_type}
    attachments = []
    for source, queryset in history:
        if source.key not in changed:
            continue
        label = str(source.model._meta.verbose_name)
        for extension, media_type in FORMATS.items():
            write = WRITERS[extension]
            attachments.append(
                write_attachment(
                    workdir,
                    attachment_name(source.key, extension),
                    functools.partial(_write_history, write, queryset),
                    description=_("Full change history: %(records)s (%(format)s)")
                    % {"records": source.label_plural, "format": extension.upper()},
                    media_type=media_type,
                    record_type=source.key,
                    record_label=label,
                )
            )
    return attachments


def _write_history(write, queryset, sink) -> int:
    return write(sink, queryset)
