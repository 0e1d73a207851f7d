"""Writes to vendors and their master data: contacts, sub-processors, certifications.

Every write is tracked (its history row names who, when and why) and an edit names the
version it was made against, so a stale form is refused rather than overwriting.
"""

import uuid
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils.translation import gettext as _

from apps.core.services import tracked_create, tracked_update
from apps.core.uploads import UploadPolicy, kinds
from apps.vendors.models import Certification, SubProcessor, Vendor, VendorContact
from apps.vendors.rules import override_errors

EDITABLE_FIELDS = ("name", "jurisdiction", "regions", "contacts", "website")
# Who answers for the vendor and how often it is reviewed; the tier set by hand, with why.
STEWARD_FIELDS = ("owner", "review_cycle_months")
OVERRIDE_FIELDS = ("tier_override", "tier_override_reason")
CONTACT_FIELDS = ("name", "email", "role", "language", "active")
SUB_PROCESSOR_FIELDS = ("name", "country", "service", "handles_data")
CERTIFICATION_FIELDS = ("kind", "issuer", "scope", "issued_on", "expires_on")

REPORT_MAX_BYTES = 20 * 1024 * 1024
# An audit report or certificate: a PDF, checked by its first bytes as well as its name.
REPORT_POLICY = UploadPolicy(limit=lambda: REPORT_MAX_BYTES, types=kinds(".pdf"))


def vendor_create(*, actor, **fields: Any) -> Vendor:
    return tracked_create(Vendor, actor=actor, reason="Vendor added", **fields)


def vendor_update(
    *, actor, vendor: Vendor, fields: dict[str, Any], reason: str, expected_version=None
) -> Vendor:
    fields = {k: v for k, v in fields.items() if k in EDITABLE_FIELDS}
    return tracked_update(
        vendor, actor=actor, reason=reason, fields=fields, expected_version=expected_version
    )


def vendor_stewardship_save(
    *, actor, vendor: Vendor, fields: dict[str, Any], reason: str, expected_version=None
) -> Vendor:
    """The owner, the review cycle and the tier set by hand (docs/rules/vendors.md).

    Owner and cycle are procurement's (``change_vendor``); setting or clearing the tier
    by hand takes ``override_vendor_tier`` (procurement and legal) and a reason."""
    wanted = {k: v for k, v in fields.items() if k in STEWARD_FIELDS + OVERRIDE_FIELDS}
    for name in ("tier_override", "tier_override_reason"):
        if name in wanted:
            wanted[name] = (wanted[name] or "").strip() or None
    if "tier_override" in wanted and not wanted["tier_override"]:
        wanted["tier_override_reason"] = None  # no tier by hand: no reason for one
    steward = {k: v for k, v in wanted.items() if k in STEWARD_FIELDS}
    overridden = {
        k: v for k, v in wanted.items() if k in OVERRIDE_FIELDS and v != getattr(vendor, k)
    }
    if any(v != getattr(vendor, k) for k, v in steward.items()) and not actor.has_perm(
        "vendors.change_vendor"
    ):
        raise PermissionDenied(_("Only procurement may change the vendor's owner or cycle."))
    if overridden and not actor.has_perm("vendors.override_vendor_tier"):
        raise PermissionDenied(_("Only procurement or legal may set the vendor's tier by hand."))
    if "tier_override" in wanted:
        errors = override_errors(wanted["tier_override"], wanted.get("tier_override_reason"))
        if errors:
            raise ValidationError(errors)
    return tracked_update(
        vendor, actor=actor, reason=reason, fields=wanted, expected_version=expected_version
    )


def vendor_derived_tier_keep(*, vendor: Vendor, tier: str | None) -> Vendor:
    """Keep the tier the vendor's cases call for; written only when it changed."""
    if vendor.derived_tier == tier:
        return vendor
    return tracked_update(
        vendor,
        actor=None,
        reason=f"Tier from the cases: {tier or 'none'}",
        fields={"derived_tier": tier},
    )


# --- contacts ---------------------------------------------------------------------------


def contact_create(*, actor, vendor: Vendor, **fields: Any) -> VendorContact:
    fields = {k: v for k, v in fields.items() if k in CONTACT_FIELDS}
    _unique_email(vendor, fields.get("email"), None)
    return tracked_create(
        VendorContact, actor=actor, reason="Contact added", vendor=vendor, **fields
    )


def contact_update(
    *, actor, contact: VendorContact, fields: dict[str, Any], reason: str, expected_version=None
) -> VendorContact:
    fields = {k: v for k, v in fields.items() if k in CONTACT_FIELDS}
    if "email" in fields:
        _unique_email(contact.vendor, fields["email"], contact.pk)
    return tracked_update(
        contact, actor=actor, reason=reason, fields=fields, expected_version=expected_version
    )


def _unique_email(vendor: Vendor, email: str | None, pk: int | None) -> None:
    same = vendor.contact_people.filter(email__iexact=email)
    if email and (same.exclude(pk=pk) if pk is not None else same).exists():
        raise ValidationError({"email": _("This vendor already has a contact with this e-mail.")})


# --- sub-processors ---------------------------------------------------------------------


def sub_processor_create(*, actor, vendor: Vendor, **fields: Any) -> SubProcessor:
    fields = {k: v for k, v in fields.items() if k in SUB_PROCESSOR_FIELDS}
    return tracked_create(
        SubProcessor, actor=actor, reason="Sub-processor added", vendor=vendor, **fields
    )


def sub_processor_update(
    *,
    actor,
    sub_processor: SubProcessor,
    fields: dict[str, Any],
    reason: str,
    expected_version=None,
) -> SubProcessor:
    fields = {k: v for k, v in fields.items() if k in SUB_PROCESSOR_FIELDS}
    return tracked_update(
        sub_processor, actor=actor, reason=reason, fields=fields, expected_version=expected_version
    )


# --- certifications ---------------------------------------------------------------------


def _dates_errors(fields: dict[str, Any]) -> None:
    issued, expires = fields.get("issued_on"), fields.get("expires_on")
    if issued and expires and expires <= issued:
        raise ValidationError({"expires_on": _("A certification expires after it is issued.")})


def _read_report(report):
    try:
        return REPORT_POLICY.read(report, default_name="report")
    except ValidationError as error:
        raise ValidationError({"report": error.messages}) from None


def certification_create(*, actor, vendor: Vendor, report=None, **fields: Any) -> Certification:
    """Record a certification, with its report where one is given: the report is checked
    (a PDF by its content, within the limit), stored under a name the server makes with
    its SHA-256; a refusal, or a failure after storing, leaves nothing stored or written."""
    fields = {k: v for k, v in fields.items() if k in CERTIFICATION_FIELDS}
    _dates_errors(fields)
    read = _read_report(report) if report is not None else None
    saved = None
    try:
        with transaction.atomic():
            if read is not None:
                wanted = f"vendors/certifications/{vendor.pk}/{uuid.uuid4().hex}{read.extension}"
                saved = default_storage.save(wanted, ContentFile(read.raw))
                fields.update(
                    report_name=read.name,
                    report_sha256=read.sha256,
                    report_size_bytes=len(read.raw),
                    report_storage_name=saved,
                )
            return tracked_create(
                Certification, actor=actor, reason="Certification added", vendor=vendor, **fields
            )
    except BaseException:
        if saved:
            default_storage.delete(saved)
        raise


def certification_update(
    *,
    actor,
    certification: Certification,
    fields: dict[str, Any],
    reason: str,
    expected_version=None,
) -> Certification:
    """The certification's facts (a renewed certificate is recorded as a new one)."""
    fields = {k: v for k, v in fields.items() if k in CERTIFICATION_FIELDS}
    _dates_errors(
        {
            "issued_on": fields.get("issued_on", certification.issued_on),
            "expires_on": fields.get("expires_on", certification.expires_on),
        }
    )
    return tracked_update(
        certification, actor=actor, reason=reason, fields=fields, expected_version=expected_version
    )
