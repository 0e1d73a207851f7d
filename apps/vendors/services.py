"""Writes to vendors."""

from typing import Any

from apps.core.services import tracked_create, tracked_update
from apps.vendors.models import Vendor

EDITABLE_FIELDS = ("name", "jurisdiction", "regions", "contacts", "website")


def vendor_create(*, actor, **fields: Any) -> Vendor:
    return tracked_create(Vendor, actor=actor, reason="Vendor added", **fields)


def vendor_update(
    *, actor, vendor: Vendor, fields: dict[str, Any], reason: str, expected_version=None
) -> Vendor:
    fields = {k: v for k, v in fields.items() if k in EDITABLE_FIELDS}
    return tracked_update(
        vendor, actor=actor, reason=reason, fields=fields, expected_version=expected_version
    )
