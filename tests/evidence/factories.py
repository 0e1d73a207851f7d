"""Bundles for tests: re-serialised exactly as the harness writes them."""

import copy
import hashlib
import json

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from apps.core.services import tracked_create
from apps.evidence.models import EvidenceBundle, SpecVerification
from apps.evidence.services import harness_token_create


def serialise(document: dict) -> bytes:
    # The harness's own form: compact, key-sorted (harness README, bundle format).
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def bundle_for(document: dict, token, **changes) -> dict:
    doc = copy.deepcopy(document)
    doc["nonce"] = token.nonce
    doc.update(changes)
    return doc


def make_token(actor, case, offer=None, **kwargs):
    return harness_token_create(actor=actor, case=case, offer=offer, **kwargs)


def make_bundle_record(
    case, offer, token, *, n: int, verdict: str = "verified", content: bytes | None = None
):
    """A stored bundle without running the pipeline, for list pages and selectors.

    With ``content``, those bytes are stored as its file, under their real SHA-256."""
    sha256 = hashlib.sha256(content).hexdigest() if content is not None else f"{n:064x}"
    storage_name = f"evidence/{sha256}.json"
    if content is not None:
        storage_name = default_storage.save(storage_name, ContentFile(content))
    bundle = tracked_create(
        EvidenceBundle,
        actor=None,
        case=case,
        offer=offer,
        token=token,
        sha256=sha256,
        size=len(content) if content is not None else 100,
        storage_name=storage_name,
        format_version="diligence-evidence/1",
        harness_version="0.1.0",
        received_at=timezone.now(),
        nonce=token.nonce,
        summary={"cells": []},
    )
    tracked_create(
        SpecVerification,
        actor=None,
        bundle=bundle,
        offer=offer,
        verdict=verdict,
        checks=[],
        headline={"gpus": 8, "gpu_names": ["NVIDIA H200"], "matmul": {}},
        rules_version="evidence-rules/1",
    )
    return bundle


def record_composed(
    offer,
    token,
    *,
    n: int,
    checks: list[dict],
    headline: dict | None = None,
    summary: dict | None = None,
    host_name: str = "",
    gpu_uuids: list[str] | None = None,
    received_at=None,
):
    """A stored bundle whose own checks are given, composed into the offer's verification as
    the upload would compose it (``composition.verification_record``)."""
    from django.db import transaction

    from apps.evidence.composition import verification_record

    when = received_at or timezone.now()
    with transaction.atomic():
        bundle = tracked_create(
            EvidenceBundle,
            actor=None,
            case=offer.case,
            offer=offer,
            token=token,
            sha256=hashlib.sha256(f"composed-{n}".encode()).hexdigest(),
            size=100,
            storage_name=f"evidence/composed-{n}.json",
            format_version="diligence-evidence/1",
            harness_version="0.1.0",
            received_at=when,
            run_started_at=when,
            run_finished_at=when,
            nonce=token.nonce,
            host_name=host_name,
            gpu_uuids=gpu_uuids or [],
            summary=summary or {"cells": []},
        )
        verification_record(
            bundle=bundle, offer=offer, checks=checks, headline=headline or {"gpus": 0}
        )
    return bundle
