"""Proposals and documents as the vendor's side records them: no actor, awaiting review."""

import hashlib
import uuid

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from apps.core.services import tracked_create
from apps.portal.models import Proposal, VendorDocument


def make_proposal(invitation, section, claim, value, *, clause_reference="", **fields):
    return tracked_create(
        Proposal,
        actor=None,
        reason="Proposed by the vendor",
        invitation=invitation,
        section=section,
        claim=claim,
        value=value,
        clause_reference=clause_reference,
        **fields,
    )


def make_document(invitation, content=b"%PDF-1.4 SLA of the vendor\n", *, name="sla.pdf"):
    stored = default_storage.save(f"portal/{uuid.uuid4().hex}/{name}", ContentFile(content))
    return tracked_create(
        VendorDocument,
        actor=None,
        reason="Uploaded by the vendor",
        invitation=invitation,
        kind="sla",
        name=name,
        content_type="application/pdf",
        size_bytes=len(content),
        sha256=hashlib.sha256(content).hexdigest(),
        storage_name=stored,
    )
