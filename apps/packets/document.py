"""Gather a case's packet: its sections, change history and manifest, as HTML.

Queries are fixed per record type, whatever the size of the history: each
section gathers in a fixed number of queries, the timeline reads each history
table once, and the manifest reads each history table's newest rows once.
"""

import hashlib
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from apps.audit.sources import case_history_querysets
from apps.core.history import timeline
from apps.packets.chapters import case_sections
from apps.packets.manifest import (
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
class PacketDocument:
    html: str
    manifest: dict
    manifest_json: bytes
    manifest_sha256: str
    sections: list[PacketSection]


def display_name(user) -> str:
    full = user.get_full_name()
    return f"{full} ({user.get_username()})" if full else user.get_username()


def packet_document(
    case, *, number: str, requested_by, packet_signer, generated_at: datetime
) -> PacketDocument:
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
    entries = timeline(history_querysets)
    entries.reverse()  # oldest first: a packet reads as a chronicle
    records = record_digests(history_querysets)
    files = file_digests([item for section in sections for item in section.manifest_files])
    organisation = settings.ORGANISATION_NAME
    manifest = manifest_document(
        number=number,
        organisation=organisation,
        case=case,
        generated_at=generated_at,
        generated_by=requested_by.get_username(),
        records=records,
        files=files,
    )
    manifest_json = manifest_bytes(manifest)
    manifest_sha256 = hashlib.sha256(manifest_json).hexdigest()
    sections.append(
        PacketSection(
            title=_("Change history"),
            template="packets/sections/history.html",
            context={"entries": entries},
            order=HISTORY_ORDER,
        )
    )
    sections.append(
        PacketSection(
            title=_("Manifest"),
            template="packets/sections/manifest.html",
            context={
                "records": records,
                "files": files,
                "file_problems": [f for f in files if f.status != FileStatus.OK],
                "manifest_sha256": manifest_sha256,
            },
            order=MANIFEST_ORDER,
        )
    )
    for index, section in enumerate(sections, start=1):
        section.anchor = f"section-{index}"
        section.html = mark_safe(  # noqa: S308 - produced by an autoescaping template
            render_to_string(section.template, {**section.context, "section": section})
        )
    html = render_to_string(
        "packets/packet.html",
        {
            "case": case,
            "number": number,
            "organisation": organisation,
            "generated_at": generated_at,
            "generated_by": display_name(requested_by),
            "signer": packet_signer,
            "sections": sections,
            "manifest_sha256": manifest_sha256,
            "record_count": len(records),
            "file_count": len(files),
            "file_problems": [f for f in files if f.status != FileStatus.OK],
            "html_lang": "zh-CN" if (get_language() or "").startswith("zh") else "en",
        },
    )
    return PacketDocument(html, manifest, manifest_json, manifest_sha256, sections)
