"""A vendor's portfolio: its offers across the cases the viewer may see, with the red
flags their contracts carry and what the evidence verified."""

from dataclasses import dataclass

from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext

from apps.approvals.findings import Status
from apps.cases.selectors import case_list_for
from apps.casework.registers import area_registers
from apps.contracts.models import ChecklistItem, ContractDocument
from apps.contracts.selectors import OfferRedFlags, WaiverLine, offers_checklists
from apps.evidence.models import SpecVerification
from apps.offers.models import Offer
from apps.offers.selectors import spec_status_for
from apps.portal.models import VendorDocument
from apps.vendors.models import Vendor


@dataclass
class VendorOffer:
    """One of the vendor's offers with what was found about it."""

    offer: Offer
    checklist: OfferRedFlags
    verification: SpecVerification | None

    @property
    def spec_status(self):
        return spec_status_for(self.offer)

    @property
    def waivers(self) -> list:
        return [(row.item, waiver) for row in self.checklist.rows for waiver in row.waivers]


def vendor_offers(actor, vendor: Vendor) -> list[VendorOffer]:
    """The vendor's offers in cases the viewer may see, newest first (queries do not grow)."""
    offers = list(
        Offer.objects.filter(vendor=vendor, case__in=case_list_for(actor).values("pk"))
        .select_related("case", "declared_spec", "vendor")
        .order_by("-created_at", "-pk")
    )
    newest: dict[int | None, SpecVerification] = {}
    verifications = (
        SpecVerification.objects.filter(offer__in=[offer.pk for offer in offers])
        .select_related("bundle")
        .defer("checks")
        .order_by("-pk")  # the newest recorded is the offer's (composed) verification
    )
    for verification in verifications:
        newest.setdefault(verification.offer_id, verification)
    return [
        VendorOffer(offer=offer, checklist=checklist, verification=newest.get(offer.pk))
        for offer, checklist in zip(offers, offers_checklists(offers), strict=True)
    ]


def vendor_waivers(
    offers: list[VendorOffer],
) -> list[tuple[Offer, ChecklistItem, WaiverLine]]:
    """Every red-flag waiver on the vendor's offers, ``(offer, item, line)``, newest first;
    ``line.waiver`` is the waiver, judged today (expired, awaiting confirmation)."""
    rows = [
        (entry.offer, row.item, line)
        for entry in offers
        for row in entry.checklist.rows
        for line in row.lines
    ]
    return sorted(rows, key=lambda row: row[2].waiver.waived_at, reverse=True)


# --- the vendor's page across cases: its open findings and its documents ------------------


@dataclass(frozen=True)
class VendorFinding:
    """One open finding about one of the vendor's offers, in a case the viewer may see."""

    case: object
    offer: Offer
    entry: object  # apps.approvals.findings.Entry


def vendor_open_findings(actor, offers: list[VendorOffer]) -> list[VendorFinding] | None:
    """Every finding still open (or informing) about the vendor's offers, case by case;
    None for a viewer who may not read the findings register."""
    if not actor.has_perm("approvals.view_findingacceptance"):
        return None
    by_pk = {row.offer.pk: row.offer for row in offers}
    cases = list({row.offer.case_id: row.offer.case for row in offers}.values())
    if not cases:
        return []
    found = []
    for register in area_registers(cases, today=timezone.localdate()):
        for entry in register.entries:
            offer = by_pk.get(entry.finding.offer_id or 0)
            if offer is not None and entry.status is not Status.ACCEPTED:
                found.append(VendorFinding(register.case, offer, entry))
    return found


@dataclass(frozen=True)
class VendorFile:
    """A document of the vendor: a signed contract document or one it uploaded."""

    kind: str  # what it is, in words
    name: str
    offer: Offer
    url: str
    sha256: str
    at: object


def vendor_documents(actor, offers: list[VendorOffer]) -> list[VendorFile]:
    """The contract documents and the vendor's own uploads of its offers, for a viewer
    who may read each kind (two queries)."""
    by_pk = {row.offer.pk: row.offer for row in offers}
    files: list[VendorFile] = []
    if actor.has_perm("contracts.view_contractdocument"):
        for doc in ContractDocument.objects.filter(offer_id__in=list(by_pk)).order_by("-pk"):
            files.append(
                VendorFile(
                    kind=f"{gettext('Contract')}: {doc.get_kind_display()} v{doc.number}",
                    name=doc.name,
                    offer=by_pk[doc.offer_id],
                    url=reverse("contracts:document-download", args=[doc.pk]),
                    sha256=doc.sha256,
                    at=doc.created_at,
                )
            )
    if actor.has_perm("portal.view_vendordocument"):
        uploads = VendorDocument.objects.filter(invitation__offer_id__in=list(by_pk))
        for upload in uploads.select_related("invitation").order_by("-pk"):
            offer_pk = upload.invitation.offer_id
            files.append(
                VendorFile(
                    kind=f"{gettext('From the vendor')}: {upload.get_kind_display()}",
                    name=upload.name,
                    offer=by_pk[offer_pk],
                    url=reverse("portal:document-download", args=[offer_pk, upload.pk]),
                    sha256=upload.sha256,
                    at=upload.created_at,
                )
            )
    return files
