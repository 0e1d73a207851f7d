"""Gather a case's packet: its chapters as HTML, the full history as files, and the manifest.

The chapters themselves are composed in the whole-case layer
(``apps.packets.composition``); this module puts the change history and the
manifest after them and lays the whole out for rendering.

Queries are fixed per record type, whatever the size of the history: each
section gathers in a fixed number of queries, the change-history summary reads
each history table once or twice (``apps.audit.history_summary``), each
attached history file is one streamed query (``apps.audit.history_files``),
and the manifest reads each history table's newest rows once.

The packet is laid out in parts (``apps.packets.rendering``): each chapter as
a document of its own, so the chapters can be laid out side by side, and the
front matter (cover, contents, attached files). No chapter prints a digest of
an attached file, so the files can be written while the chapters are laid
out; the front matter, which prints them and the manifest's, comes last.
``html`` is the same packet as one document, for previews and for comparing
with WeasyPrint on its own.
"""

import functools
import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from apps.audit import packet as audit_packet
from apps.audit.history_files import FORMATS, attachment_name, write_history
from apps.audit.history_summary import person_name
from apps.audit.sources import case_history_querysets, sources_of
from apps.core.contributions import PacketSection
from apps.packets.attachments import (
    AttachmentSpec,
    PacketAttachment,
    attachment_from_bytes,
    write_attachments,
)
from apps.packets.composition import packet_composer
from apps.packets.manifest import (
    MANIFEST_NAME,
    FileStatus,
    file_digests,
    manifest_bytes,
    manifest_document,
    record_digests,
)
from apps.packets.models import DocumentKind

HISTORY_ORDER = 900
MANIFEST_ORDER = 1000


class NothingToIssue(ValueError):
    """A deliverable whose own chapters have nothing recorded yet."""


def nothing_to_issue_message(kind: str) -> str:
    return _(
        "Nothing is recorded on this case yet for its %(document)s: record it first, "
        "then issue the document."
    ) % {"document": DocumentKind(kind).label.lower()}


# What each document is, printed on its cover under its title.
DOCUMENT_PURPOSES: dict[str, Callable[[], str]] = {
    DocumentKind.PACKET: lambda: _(
        "Everything recorded on this case, with its full change history and a manifest of digests."
    ),
    DocumentKind.SPEC_SHEET: lambda: _(
        "The compute this case needs and what each offer declares and was measured to "
        "deliver: the demand and its sizing, the declared specs, the comparison of offers "
        "and the verification of each spec."
    ),
    DocumentKind.COMPLIANCE_RECORD: lambda: _(
        "The compliance and risk self-check: each offer's contract clause checklist with "
        "its red flags and waivers, and the data-export self-assessment, question by "
        "question."
    ),
    DocumentKind.NETWORK_PLAN: lambda: _(
        "How the rented compute is reached and who may reach it: the network plan and its "
        "latency budget, the access matrix, and the controls around them."
    ),
    DocumentKind.ACCEPTANCE_REPORT: lambda: _(
        "Whether the rented compute delivers what was agreed: the acceptance plan, its "
        "results and sign-off, and the load-test evidence behind them."
    ),
}


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


@dataclass(frozen=True)
class HistoryFile:
    """One attached history file, as the change-history chapter names it before it is written."""

    name: str
    record_type: str
    record_label: str
    rows: int


@dataclass
class PacketDocument:
    """A gathered packet. Its chapters are ready to lay out; the attached files, the
    manifest that lists them and the front matter that prints their digests follow
    once ``write_attachments`` has run (``packet_document`` runs it unless deferred)."""

    sections: list[PacketSection]
    # The chapters laid out on their own, after the front matter.
    chapters: list[PacketChapter]
    context: dict
    manifest_fields: dict
    history: list
    history_files: list[HistoryFile]
    # The chapters printed right after the cover, in the front matter (the summary).
    opening: list[PacketChapter] = field(default_factory=list)
    attachments: list[PacketAttachment] = field(default_factory=list)
    manifest: dict = field(default_factory=dict)
    manifest_json: bytes = b""
    manifest_sha256: str = ""

    def write_attachments(
        self, workdir: Path | None, *, between: Callable[[], None] | None = None
    ) -> None:
        """Write the full history (a CSV and a JSON file per record type) and the manifest.

        With ``workdir`` None they are only hashed. ``between()`` is called
        between record types (the layout reports its progress meanwhile).
        """
        attachments = []
        planned = {f.record_type for f in self.history_files}
        for source, queryset in self.history:
            if source.key not in planned:
                continue
            label = str(source.model._meta.verbose_name)
            specs = [
                AttachmentSpec(
                    name=attachment_name(source.key, extension),
                    description=_("Full change history: %(records)s (%(format)s)")
                    % {"records": source.label_plural, "format": extension.upper()},
                    media_type=media_type,
                    record_type=source.key,
                    record_label=label,
                )
                for extension, media_type in FORMATS.items()
            ]
            attachments.extend(
                write_attachments(workdir, specs, functools.partial(_write_history, queryset))
            )
            if between is not None:
                between()
        self.manifest = manifest_document(
            **self.manifest_fields, attachments=[a.manifest_entry() for a in attachments]
        )
        self.manifest_json = manifest_bytes(self.manifest)
        self.manifest_sha256 = hashlib.sha256(self.manifest_json).hexdigest()
        # The manifest travels last, so it can list every other attachment.
        attachments.append(
            attachment_from_bytes(
                workdir,
                MANIFEST_NAME,
                self.manifest_json,
                description=_(
                    "Digests of every record, evidence file and attachment in this packet"
                ),
                media_type="application/json",
            )
        )
        self.attachments = attachments

    def _front_context(self) -> dict:
        if not self.manifest_json:
            raise RuntimeError("The attachments are not written yet.")
        return {
            **self.context,
            "manifest_sha256": self.manifest_sha256,
            "attachments": self.attachments,
        }

    @property
    def opening_sections(self) -> list[PacketSection]:
        return [section for section in self.sections if section.after_cover]

    def _opening_toc(self) -> list[dict]:
        # Laid out in the same document as the contents: its page is read from the layout.
        return [{"anchor": c.anchor, "title": c.title, "page": None} for c in self.opening]

    def front_html(self, first_pages: list[int], pages: int) -> str:
        """The cover, the executive summary, the contents with each chapter's first page,
        and the attached files; then a page for each of the packet's ``pages`` page
        numbers, to print over them."""
        toc = self._opening_toc() + [
            {"anchor": c.anchor, "title": c.title, "page": first_pages[i]}
            for i, c in enumerate(self.chapters)
        ]
        return render_to_string(
            "packets/packet_front.html",
            {
                **self._front_context(),
                "toc": toc,
                "opening": self.opening_sections,
                "page_numbers": range(1, pages + 1),
            },
        )

    @property
    def html(self) -> str:
        """The whole packet as one HTML document."""
        toc = self._opening_toc() + [
            {"anchor": c.anchor, "title": c.title, "page": None} for c in self.chapters
        ]
        return render_to_string(
            "packets/packet.html",
            {
                **self._front_context(),
                "toc": toc,
                "opening": self.opening_sections,
                "sections": [s for s in self.sections if not s.after_cover],
            },
        )


def packet_document(
    case,
    *,
    number: str,
    requested_by,
    packet_signer,
    generated_at: datetime,
    workdir: Path | None = None,
    defer_attachments: bool = False,
    kind: str = DocumentKind.PACKET,
) -> PacketDocument:
    """Gather the packet of ``case``, or the deliverable of ``kind``: the same front
    matter, change history and manifest around its own selection of chapters.

    The attached files are written to ``workdir``, ready to embed, or only
    hashed without one (for a preview, or a test of the content). With
    ``defer_attachments`` they are left to ``document.write_attachments``, so
    they can be written while the chapters, which do not print their digests,
    are laid out.
    """
    sections = packet_composer().document_sections(case, kind)
    if not sections:
        raise NothingToIssue(nothing_to_issue_message(kind))
    history_querysets = [_in_packet(queryset) for queryset in case_history_querysets(case)]
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
    history_files = [
        HistoryFile(attachment_name(t.key, extension), t.key, t.label, t.changes)
        for t in sorted(summary.by_type, key=lambda t: t.key)
        for extension in FORMATS
    ]
    organisation = settings.ORGANISATION_NAME
    sections.append(audit_packet.history_section(summary, history_files, order=HISTORY_ORDER))
    sections.append(
        PacketSection(
            title=_("Manifest"),
            template="packets/sections/manifest.html",
            context={
                "records": records,
                "files": files,
                "file_problems": [f for f in files if f.status != FileStatus.OK],
            },
            order=MANIFEST_ORDER,
        )
    )
    context = {
        "case": case,
        "number": number,
        "document_kind": DocumentKind(kind),
        "document_purpose": DOCUMENT_PURPOSES[kind](),
        "organisation": organisation,
        "generated_at": generated_at,
        "generated_by": person_name(requested_by),
        "signer": packet_signer,
        "record_count": len(records),
        "file_count": len(files),
        "history_file_count": len(history_files),
        "file_problems": [f for f in files if f.status != FileStatus.OK],
        "decision_line": packet_composer().decision_line(case),
        "html_lang": "zh-CN" if (get_language() or "").startswith("zh") else "en",
        # The PDF's document language, in BCP 47 as readers and screen readers expect.
        "pdf_lang": "zh-Hans" if (get_language() or "").startswith("zh") else "en",
    }
    chapters: list[PacketChapter] = []
    opening: list[PacketChapter] = []
    for index, section in enumerate(sections, start=1):
        section.number = index
        section.anchor = f"section-{index}"
        section.html = mark_safe(  # noqa: S308 - produced by an autoescaping template
            render_to_string(section.template, {**section.context, "section": section})
        )
        (opening if section.after_cover else chapters).append(
            PacketChapter(
                number=index,
                title=section.title,
                anchor=section.anchor,
                html=render_to_string(
                    "packets/packet_chapter.html", {**context, "section": section}
                ),
            )
        )
    document = PacketDocument(
        sections=sections,
        chapters=chapters,
        opening=opening,
        context=context,
        manifest_fields={
            "number": number,
            "kind": str(kind),
            "organisation": organisation,
            "case": case,
            "generated_at": generated_at,
            "generated_by": requested_by.get_username(),
            "records": records,
            "files": files,
        },
        history=history,
        history_files=history_files,
    )
    if not defer_attachments:
        document.write_attachments(workdir)
    return document


def _in_packet(history: QuerySet) -> QuerySet:
    """The rows of a history table the packet carries: all, unless the record type says
    otherwise (comments: only those put on the record)."""
    narrow = getattr(history.model.instance_type, "in_packet", None)
    return narrow(history) if narrow is not None else history


def _write_history(queryset, *sinks) -> int:
    # One sink per format, in the order of ``FORMATS``: both files from one read.
    by_format = dict(zip(FORMATS, sinks, strict=True))
    return write_history(queryset, csv_out=by_format["csv"], json_out=by_format["json"])
