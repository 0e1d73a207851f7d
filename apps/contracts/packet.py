"""The clause-checklist chapter of the signed packet (docs/rules/contracts.md): every item, red flag
and waiver.

The checklists' change history already joins the packet through the case
timeline (``apps.audit.sources.case_history_querysets``), so this
section names none of its own. Each waiver's evidence file, and every version of
every signed contract document, is a file of the manifest, re-hashed from storage.
"""

from django.utils.translation import gettext as _

from apps.contracts.selectors import (
    TermsTable,
    case_contract_terms,
    case_documents,
    case_red_flags,
)
from apps.core.contributions import PacketSection


def packet_section(case):
    offers = case_red_flags(case)
    if not offers:
        return None
    files = [
        (
            f"waiver-{line.waiver.pk}-{line.waiver.evidence_name}",
            line.waiver.evidence_storage_name,
            line.waiver.evidence_sha256 or "",
        )
        for entry in offers
        for row in entry.rows
        for line in row.lines
        if line.waiver.evidence_storage_name
    ]
    documents = case_documents(case)
    files += [
        (f"contract-{document.offer_id}-{document.kind}-v{document.number}-{document.name}",)
        + (document.storage_name, document.sha256)
        for versions in documents.values()
        for document in versions
    ]
    return PacketSection(
        title=_("Contract clause checklists"),
        template="contracts/packet_section.html",
        context={
            "offers": [
                (
                    entry,
                    [(row.item, line) for row in entry.rows for line in row.lines],
                    documents.get(entry.offer.pk, []),
                )
                for entry in offers
            ],
            "terms_table": TermsTable(case_contract_terms(case)),
        },
        manifest_files=files,
    )
