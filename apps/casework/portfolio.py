"""A vendor's portfolio: its offers across the cases the viewer may see, with the red
flags their contracts carry and what the evidence verified."""

from dataclasses import dataclass

from apps.cases.selectors import case_list_for
from apps.contracts.models import ChecklistItem
from apps.contracts.selectors import OfferRedFlags, WaiverLine, offers_checklists
from apps.evidence.models import SpecVerification
from apps.offers.models import Offer
from apps.offers.selectors import spec_status_for
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
