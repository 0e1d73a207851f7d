"""Reads of vendors and their master data, with the access rule applied in one place."""

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from django.core.files.storage import default_storage
from django.db.models import Count, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.vendors.models import Certification, SubProcessor, Vendor, VendorContact
from apps.vendors.rules import certification_state


def vendor_list_for(actor) -> QuerySet[Vendor]:
    if not actor.has_perm("vendors.view_vendor"):
        return Vendor.objects.none()
    return Vendor.objects.all()


def vendor_get_for(actor, pk: int) -> Vendor:
    return get_object_or_404(vendor_list_for(actor).select_related("owner"), pk=pk)


def vendors_with_offer_counts(actor) -> QuerySet[Vendor]:
    return vendor_list_for(actor).annotate(offer_count=Count("offers")).order_by("name")


def contacts_of(vendor: Vendor, *, active_only: bool = False) -> list[VendorContact]:
    found = VendorContact.objects.filter(vendor=vendor)
    return list(found.filter(active=True) if active_only else found)


def sub_processors_of(vendor: Vendor) -> list[SubProcessor]:
    return list(SubProcessor.objects.filter(vendor=vendor))


def certifications_of(vendor: Vendor) -> list[Certification]:
    return list(Certification.objects.filter(vendor=vendor).select_related("vendor"))


def _by_vendor(found: Iterable[Certification]) -> dict[int, list[Certification]]:
    by_vendor: dict[int, list[Certification]] = {}
    for cert in found:
        by_vendor.setdefault(cert.vendor_id, []).append(cert)
    return by_vendor


def certifications_of_vendors(vendor_ids: Iterable[int]) -> dict[int, list[Certification]]:
    """The certifications of these vendors, by vendor id (one query)."""
    ids = list(set(vendor_ids))
    if not ids:
        return {}
    return _by_vendor(Certification.objects.filter(vendor_id__in=ids))


def certifications_of_case(case) -> dict[int, list[Certification]]:
    """The certifications of the vendors with an offer in the case, by vendor id (one
    query)."""
    return _by_vendor(Certification.objects.filter(vendor__offers__case=case).distinct())


def contact_get_for(actor, pk: int) -> VendorContact:
    found = VendorContact.objects.select_related("vendor")
    return get_object_or_404(
        found if actor.has_perm("vendors.view_vendorcontact") else found.none(), pk=pk
    )


def sub_processor_get_for(actor, pk: int) -> SubProcessor:
    found = SubProcessor.objects.select_related("vendor")
    return get_object_or_404(
        found if actor.has_perm("vendors.view_subprocessor") else found.none(), pk=pk
    )


def certification_get_for(actor, pk: int) -> Certification:
    found = Certification.objects.select_related("vendor")
    return get_object_or_404(
        found if actor.has_perm("vendors.view_certification") else found.none(), pk=pk
    )


class ReportChanged(Exception):
    """The stored report no longer hashes to the SHA-256 recorded when it was stored."""


def certification_report_bytes(cert: Certification) -> bytes:
    """The stored report, checked against its SHA-256; ``Http404`` when there is none."""
    if not cert.report_storage_name:
        raise Http404(_("This certification has no stored report."))
    try:
        with default_storage.open(cert.report_storage_name, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        raise Http404(_("The stored file is missing.")) from None
    if hashlib.sha256(raw).hexdigest() != cert.report_sha256:
        raise ReportChanged(cert.report_storage_name)
    return raw


@dataclass(frozen=True)
class CertificationRow:
    certification: Certification
    state: str  # valid, expiring or expired (apps.vendors.rules.CertificationState)


def vendor_master_data(actor, vendor: Vendor) -> dict:
    """The vendor's contacts, sub-processors and certifications (with where each stands
    today) for a reader of each; an empty list where the reader may not (three queries)."""
    today = timezone.localdate()
    certs = (
        [
            CertificationRow(c, str(certification_state(c.expires_on, today=today)))
            for c in certifications_of(vendor)
        ]
        if actor.has_perm("vendors.view_certification")
        else []
    )
    return {
        "contacts": contacts_of(vendor) if actor.has_perm("vendors.view_vendorcontact") else [],
        "sub_processors": sub_processors_of(vendor)
        if actor.has_perm("vendors.view_subprocessor")
        else [],
        "certifications": certs,
    }
