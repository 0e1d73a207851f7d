"""Writes of the evidence app: issue and revoke harness tokens, receive a bundle and verify it.

Evidence is immutable: there is no update service for bundles or verifications.
"""

import hashlib
import math
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.access.selectors import network_plan_of
from apps.core.services import tracked_create, tracked_update
from apps.evidence import bundle as bundle_reader
from apps.evidence import composition
from apps.evidence.models import EvidenceBundle, EvidenceUpload, HarnessToken
from apps.evidence.requirement import requirement_values
from apps.evidence.rules import Context, throughput, verify
from apps.evidence.rules.versions import DEFAULT_ENVIRONMENT
from apps.workloads.selectors import required_set_missed

TOKEN_PREFIX = "dlh_"
MAX_TOKEN_TTL_HOURS = 24 * 30


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class IssuedToken:
    """The token in clear, shown once, and its stored record."""

    token: str
    record: HarnessToken


def harness_token_create(
    *, actor, case, offer=None, ttl_hours: int | None = None, label: str = ""
) -> IssuedToken:
    default_ttl: int = settings.EVIDENCE_TOKEN_TTL_HOURS
    ttl = ttl_hours or default_ttl
    if not 1 <= ttl <= MAX_TOKEN_TTL_HOURS:
        raise ValidationError(
            {"ttl_hours": f"A token lives between 1 and {MAX_TOKEN_TTL_HOURS} hours."}
        )
    if offer is not None and offer.case_id != case.pk:
        raise ValidationError({"offer": "The offer belongs to another case."})
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    record = tracked_create(
        HarnessToken,
        actor=actor,
        reason="Harness token issued",
        case=case,
        offer=offer,
        token_hash=token_hash(token),
        prefix=token[:12],
        nonce=secrets.token_hex(16),
        label=label,
        created_by=actor,
        expires_at=timezone.now() + timedelta(hours=ttl),
    )
    return IssuedToken(token=token, record=record)


def harness_token_revoke(*, actor, token: HarnessToken, reason: str) -> HarnessToken:
    if token.revoked_at is not None:
        raise ValidationError({"token": "This token is already revoked."})
    return tracked_update(
        token,
        actor=actor,
        reason=reason or "Revoked",
        fields={"revoked_at": timezone.now(), "revoked_by": actor},
    )


def revoke_tokens_of_deactivated(sender=None, *, user, actor=None, reason="", **kwargs) -> int:
    """Revoke every harness token ``user`` issued that still works (their account was
    switched off); how many. Each revocation is in the token's history."""
    now = timezone.now()
    live = HarnessToken.objects.select_for_update().filter(
        created_by=user, revoked_at__isnull=True, expires_at__gt=now
    )
    revoked = 0
    for token in live:
        tracked_update(
            token,
            actor=actor,
            reason=(f"Revoked: the issuer's account was deactivated. {reason}".strip())[:300],
            fields={"revoked_at": now, "revoked_by": actor},
        )
        revoked += 1
    return revoked


def verification_context(case, offer) -> Context:
    spec = getattr(offer, "declared_spec", None) if offer is not None else None
    declared = {}
    if offer is not None:
        declared = {
            "accelerator_model": offer.accelerator_model,
            "accelerator_count": offer.accelerator_count,
        }
    if spec is not None:
        declared |= {
            "cards_per_node": spec.cards_per_node,
            "memory_per_card_gib": spec.memory_per_card_gib,
            "driver_version": spec.driver_version,
            "cuda_version": spec.cuda_version,
            "inter_node_network": spec.inter_node_network,
            "inter_node_bandwidth_gbit": spec.inter_node_bandwidth_gbit,
            "runtime_versions": spec.runtime_versions,
            "rate_limit_rps": spec.rate_limit_rps,
            "tokens_scoped": spec.tokens_scoped,
        }
        # Checked against the open-loop rate search (docs/rules/evidence.md#throughput-at-the-slo).
        declared |= {
            "throughput_tokens_per_s": spec.throughput_tokens_per_s,
            "throughput_requests_per_s": spec.throughput_requests_per_s,
        }
        # Inside the node and the local disk (docs/rules/evidence.md#inside-the-node).
        declared |= {
            "intra_node_interconnect": spec.intra_node_interconnect,
            "intra_node_bandwidth_gbps": spec.intra_node_bandwidth_gbps,
            "local_nvme_tb": spec.local_nvme_tb,
        }
    return Context(
        declared=declared,
        slo={
            "p95_ttft_ms": case.slo_p95_ttft_ms,
            "error_rate_pct": case.slo_error_rate_pct,
            "peak_memory_pct": case.slo_peak_memory_pct,
        },
        latency_target_ms=_latency_target(case),
        matmul_bands=settings.EVIDENCE_MATMUL_BANDS,
        environment_requirements=DEFAULT_ENVIRONMENT | settings.EVIDENCE_ENVIRONMENT,
        requirement=requirement_values(case),
    )


def _latency_target(case) -> float | None:
    """The latency the access app's network plan targets (docs/rules/access.md#latency-budget)."""
    plan = network_plan_of(case)
    return float(plan.target_latency_ms) if plan and plan.target_latency_ms else None


def headline(reading, checks, context: Context | None = None) -> dict:
    """The verified numbers an offer is compared on across a case."""
    by_key = {c.key: c for c in checks}
    levels = reading.facts.levels
    best = max((lvl["output_tok_s"].get("mean") or 0 for lvl in levels), default=None)
    ok_levels = [lvl for lvl in levels if lvl["ttft_ms"].get("p50") is not None]
    return {
        "gpus": len(reading.facts.gpus),
        "gpu_names": sorted({g["name"] or "?" for g in reading.summary["gpus"]}),
        "matmul": {
            k.rsplit(".", 1)[1]: c.measured
            for k, c in by_key.items()
            if k.startswith("performance.matmul.")
        },
        "bandwidth": by_key["performance.bandwidth"].measured
        if "performance.bandwidth" in by_key
        else None,
        "max_output_tok_s": best or None,
        "ttft_p50_ms_lowest_level": ok_levels[0]["ttft_ms"]["p50"] if ok_levels else None,
        "max_concurrency_within_slo": by_key["service.max_concurrency"].measured
        if "service.max_concurrency" in by_key
        else None,
        "at_slo": at_slo(reading, by_key.get("service.max_concurrency")),
        "goodput_at_slo": goodput_at_slo(reading, context),
        "statuses": {c.key: c.status for c in checks},
    }


def goodput_at_slo(reading, context: Context | None) -> dict | None:
    """The open-loop rate search at its highest rate within the case's service levels: the
    rate offered, the goodput in requests and output tokens per second, and the GPUs of the
    machine that ran it (docs/rules/evidence.md#throughput-at-the-slo). None where the
    bundle has no rate search or no rate held."""
    judged = throughput.at_slo(reading.facts, context) if context is not None else None
    best = (judged or {}).get("best")
    if not best:
        return None
    return {
        "rate_rps": best["offered_rps"],
        "goodput_req_s": best["goodput_req_s"],
        "goodput_tok_s": best["goodput_tok_s"],
        "limit_found": best["limit_found"],
        "gpus": len(reading.facts.gpus),
    }


def at_slo(reading, check) -> dict | None:
    """The load at the highest concurrency where every SLO holds: output tokens and completed
    requests per second (each round's cells averaged, then the rounds), and the GPUs of the
    machine that ran it. None where no level held or the bundle ran no load test."""
    concurrency = check.measured if check is not None else None
    if not isinstance(concurrency, int) or isinstance(concurrency, bool):
        return None
    cells = [c for c in reading.facts.cells if c["concurrency"] == concurrency]

    def across_rounds(name: str) -> float | None:
        by_round: dict = {}
        for cell in cells:
            if cell.get(name):
                by_round.setdefault(cell["round"], []).append(cell[name])
        means = [math.fsum(values) / len(values) for values in by_round.values()]
        return math.fsum(means) / len(means) if means else None

    return {
        "concurrency": concurrency,
        "output_tok_s": across_rounds("output_tok_s"),
        "req_s": across_rounds("req_s"),
        "gpus": len(reading.facts.gpus),
    }


@dataclass(frozen=True)
class Receipt:
    """What the server holds for an uploaded body, as the upload endpoint answers it."""

    upload: EvidenceUpload | None  # None: an older bundle stored before uploads were kept
    bundle: EvidenceBundle | None  # set once the bytes are a verified bundle
    created: bool  # this request stored the bytes


def upload_receive(*, token: HarnessToken, raw: bytes, declared_sha256: str | None = None):
    """Store one upload's bytes and hand their reading to a worker; returns a ``Receipt``.

    Only what needs no reading of the body is checked here: the digest the
    harness computed before sending, and whether the same bytes are already
    held (a re-send answers with what is held, never a duplicate). The reading
    runs in ``verify_upload_task``: in this process at once where Celery runs
    eagerly (the embedded default), in a worker otherwise.
    """
    sha = hashlib.sha256(raw).hexdigest()
    if declared_sha256 and declared_sha256.strip().lower() != sha:
        raise bundle_reader.BundleRefused(
            "The body does not match the X-Bundle-Sha256 the harness computed before sending: "
            "the bundle was changed after it was written.",
            field="X-Bundle-Sha256",
        )
    # Stored first, then claimed: the one live upload per body is the database's
    # unique constraint, so a re-send costs its lookup and nothing else does.
    saved_name = None
    try:
        saved_name = default_storage.save(f"evidence/{sha[:2]}/{sha}.json", ContentFile(raw))
        upload = _claim(
            token=token, case_id=token.case_id, sha256=sha, size=len(raw), storage_name=saved_name
        )
    except IntegrityError:
        _discard(saved_name)
        held = _held(token, sha)  # sent before, or twice at once and the other one won
        if held is None:
            raise
        return held
    except BaseException:
        _discard(saved_name)
        raise
    if _start_verification(upload):
        upload.refresh_from_db()
    bundle = upload.bundle  # read here already (eager), or None until the worker has
    # A bundle of these bytes stored before uploads were kept was found, not created.
    created = bundle is None or bundle.created_at >= upload.received_at
    return Receipt(upload=upload, bundle=bundle, created=created)


def _claim(**fields) -> EvidenceUpload:
    """The upload's one row. Outside a transaction the INSERT is its own (one round trip
    to the database, no BEGIN and COMMIT); inside one, a savepoint, so that losing the
    race for the same bytes leaves the caller's transaction usable."""
    if transaction.get_connection().in_atomic_block:
        with transaction.atomic():
            return EvidenceUpload.objects.create(**fields)
    return EvidenceUpload.objects.create(**fields)


def _held(token: HarnessToken, sha: str) -> Receipt | None:
    """The live upload of these bytes: verified (with its bundle), or being read."""
    upload = (
        EvidenceUpload.objects.filter(
            sha256=sha, state__in=[EvidenceUpload.State.RECEIVED, EvidenceUpload.State.VERIFIED]
        )
        .select_related("bundle")
        .first()
    )
    if upload is None:
        return None
    if upload.case_id != token.case_id:
        raise bundle_reader.BundleRefused(
            "This bundle was already uploaded for another case.", field="nonce"
        )
    # Sent again while being read: the message may have been lost with a worker, and
    # reading it twice is harmless (the worker reads an upload once), so ask again.
    if not upload.finished and _start_verification(upload):
        upload.refresh_from_db()
    return Receipt(upload=upload, bundle=upload.bundle, created=False)


def _start_verification(upload: EvidenceUpload) -> bool:
    """Hand the reading to the worker; True when it already ran here (eager Celery)."""
    from apps.evidence.tasks import verify_upload_task

    if verify_upload_task.app.conf.task_always_eager:
        verify_upload_task.apply(args=(upload.pk,))  # no worker: read it now, in this process
        return True
    transaction.on_commit(lambda: verify_upload_task.delay(upload.pk))
    return False


REQUEUE_BATCH = 200


def uploads_waiting(now=None) -> list[int]:
    """Uploads received more than ``EVIDENCE_UPLOAD_REQUEUE_MINUTES`` ago and still unread."""
    minutes = settings.EVIDENCE_UPLOAD_REQUEUE_MINUTES
    before = (now or timezone.now()) - timedelta(minutes=minutes)
    return list(
        EvidenceUpload.objects.filter(state=EvidenceUpload.State.RECEIVED, received_at__lt=before)
        .order_by("received_at")
        .values_list("pk", flat=True)[:REQUEUE_BATCH]
    )


def uploads_prune(now=None) -> int:
    """Forget refused and failed uploads finished over ``EVIDENCE_UPLOAD_KEEP_DAYS`` ago.

    Their bytes were removed when they ended; the row only told the harness and the
    tech lead why. Verified uploads stay (their bundle is the regulated record), and
    so do uploads still being read. Returns how many were removed.
    """
    days = settings.EVIDENCE_UPLOAD_KEEP_DAYS
    before = (now or timezone.now()) - timedelta(days=days)
    removed, _by_model = EvidenceUpload.objects.filter(
        state__in=[EvidenceUpload.State.REFUSED, EvidenceUpload.State.FAILED],
        finished_at__lt=before,
    ).delete()
    return removed


def upload_verify(upload_pk: int) -> EvidenceUpload:
    """Read, recompute and verify one received upload, once; returns it finished.

    Ends ``verified`` with its bundle and verification, or ``refused`` with the
    reason (and the stored bytes removed). A second delivery of the same task
    finds the upload finished and returns it. Errors other than a refusal
    propagate with nothing written (the caller retries or marks it failed).

    The bundle is read and recomputed before the write transaction opens: its answers
    are compared (patterns included, each within its time bound) and the case's sample
    set is read with no lock held, so a slow bundle never holds up other requests
    (docs/rules/evidence.md#expected-answers). The writes then happen in one
    transaction, which finds the upload still unfinished.
    """
    upload = EvidenceUpload.objects.select_related(
        "token__case", "token__offer__declared_spec"
    ).get(pk=upload_pk)
    if upload.finished:
        return upload
    prepared: _Prepared | None = None
    refusal: bundle_reader.BundleRefused | None = None
    try:
        if _stored_before(upload) is None:
            prepared = _bundle_read(upload, _stored_bytes(upload))
    except bundle_reader.BundleRefused as refused:
        refusal = refused
    discard = None
    with transaction.atomic():
        upload = (
            EvidenceUpload.objects.select_for_update(of=("self",))
            .select_related("token__case", "token__offer__declared_spec")
            .get(pk=upload_pk)
        )
        if upload.finished:
            return upload
        try:
            if refusal is not None:
                raise refusal
            with transaction.atomic():
                upload.bundle = _stored_before(upload)
                if upload.bundle is None:
                    # Read above, unless a bundle of these bytes went meanwhile (never seen).
                    prepared = prepared or _bundle_read(upload, _stored_bytes(upload))
                    upload.bundle = _bundle_store(upload, prepared)
                elif upload.bundle.storage_name != upload.storage_name:
                    discard, upload.storage_name = upload.storage_name, upload.bundle.storage_name
        except bundle_reader.BundleRefused as refused:
            upload.state = EvidenceUpload.State.REFUSED
            upload.refusal = refused.message
            upload.refusal_field = (refused.field or "")[:300]
            upload.refusal_status = refused.status
            discard = upload.storage_name
        else:
            upload.state = EvidenceUpload.State.VERIFIED
        upload.finished_at = timezone.now()
        upload.save(
            update_fields=[
                "storage_name",
                "bundle",
                "state",
                "refusal",
                "refusal_field",
                "refusal_status",
                "finished_at",
            ]
        )
    _discard(discard)  # once recorded: a refused body, or a second copy of a stored one
    return upload


def _stored_bytes(upload: EvidenceUpload) -> bytes:
    with default_storage.open(upload.storage_name, "rb") as handle:
        return handle.read()


def upload_fail(upload_pk: int, *, error: str) -> EvidenceUpload | None:
    """The server could not read an upload (a bug, not the bundle): say so, keep nothing."""
    with transaction.atomic():
        upload = EvidenceUpload.objects.select_for_update().filter(pk=upload_pk).first()
        if upload is None or upload.finished:
            return upload
        upload.state = EvidenceUpload.State.FAILED
        upload.refusal = (
            f"The server could not verify this bundle ({error[:500]}); it is logged. "
            "Send the same bundle again later."
        )
        upload.refusal_status = 500
        upload.finished_at = timezone.now()
        upload.save(update_fields=["state", "refusal", "refusal_status", "finished_at"])
    _discard(upload.storage_name)
    return upload


def _stored_before(upload: EvidenceUpload) -> EvidenceBundle | None:
    """A bundle of the same bytes stored before uploads were kept: the upload is that one."""
    bundle = EvidenceBundle.objects.filter(sha256=upload.sha256).first()
    if bundle is not None and bundle.case_id != upload.case_id:
        raise bundle_reader.BundleRefused(
            "This bundle was already uploaded for another case.", field="nonce"
        )
    return bundle


@dataclass(frozen=True)
class _Prepared:
    """Everything the server makes of an upload's bytes before anything is written."""

    document: dict
    reading: bundle_reader.Reading
    context: Context
    checks: list
    started: object
    finished: object
    host_name: str
    gpu_uuids: list


def _bundle_read(upload: EvidenceUpload, raw: bytes) -> _Prepared:
    """The reading of the stored bytes, with reads of the database only (the case's sets,
    the offer's spec): refusals (``BundleRefused``) come from here, before any write."""
    token = upload.token
    document = bundle_reader.read(raw)
    if document.get("nonce") != token.nonce:
        raise bundle_reader.BundleRefused(
            "The bundle's nonce was not issued for this token: run the harness with the "
            "--nonce shown when the token was created.",
            field="nonce",
        )
    # Expected answers from the server's own copy of the case's sample set, where the run
    # used one (docs/rules/evidence.md#expected-answers).
    reference = bundle_reader.correctness_reference(document, token.case_id)
    reading = bundle_reader.interpret(document, reference)
    offer = token.offer
    # The offer's acceptance may require the case's own sets: a run on other inputs is refused.
    if missed := required_set_missed(offer, reading.summary):
        raise bundle_reader.BundleRefused(missed[1], field=missed[0])
    context = verification_context(token.case, offer)
    checks = verify(reading.facts, context)
    started, finished = bundle_reader.run_times(document)
    host_name, gpu_uuids = composition.machine_seen(document)
    return _Prepared(
        document=document,
        reading=reading,
        context=context,
        checks=checks,
        started=started,
        finished=finished,
        host_name=host_name,
        gpu_uuids=gpu_uuids,
    )


def _bundle_store(upload: EvidenceUpload, prepared: _Prepared) -> EvidenceBundle:
    """The bundle, its verification and the token's last use, written from its reading."""
    token, document, reading = upload.token, prepared.document, prepared.reading
    offer = token.offer
    try:
        bundle = tracked_create(
            EvidenceBundle,
            actor=None,
            reason=f"Uploaded with harness token {token.prefix}…",
            case=token.case,
            offer=offer,
            token=token,
            sha256=upload.sha256,
            size=upload.size,
            storage_name=upload.storage_name,
            format_version=document["format_version"],
            harness_version=document["harness"]["version"],
            bundle_uuid=document["bundle_id"],
            run_started_at=prepared.started,
            run_finished_at=prepared.finished,
            received_at=upload.received_at,
            host_id=document["host_id"],
            host_name=prepared.host_name,
            gpu_uuids=prepared.gpu_uuids,
            nonce=document["nonce"],
            summary=reading.summary,
            client_summary_disagreements=reading.disagreements,
        )
    except ValidationError as error:
        raise _refusal_of(error) from None
    # The offer's verification, composed with what its other bundles measured.
    composition.verification_record(
        bundle=bundle,
        offer=offer,
        checks=[c.as_dict() for c in prepared.checks],
        headline=headline(reading, prepared.checks, prepared.context),
    )
    tracked_update(
        token,
        actor=None,
        reason="Used to upload evidence",
        fields={"last_used_at": timezone.now()},
    )
    return bundle


def bundle_receive(*, token: HarnessToken, raw: bytes, declared_sha256: str | None = None):
    """Store and verify one upload now, in this process; returns (bundle, created).

    For callers that want the verdict at once (loading data, tests): a refusal
    raises ``BundleRefused`` with nothing of the bundle stored.
    """
    receipt = upload_receive(token=token, raw=raw, declared_sha256=declared_sha256)
    upload = receipt.upload
    if receipt.bundle is None and upload is not None and not upload.finished:
        upload = upload_verify(upload.pk)
    bundle = receipt.bundle or (upload.bundle if upload is not None else None)
    if bundle is None:
        raise bundle_reader.BundleRefused(
            upload.refusal, status=upload.refusal_status or 400, field=upload.refusal_field or None
        )
    return bundle, receipt.created


def bundle_mark_demo(*, actor, bundle: EvidenceBundle, note: str) -> EvidenceBundle:
    """Mark a bundle built for the demo from datasheet values, never measured."""
    if not note.strip():
        raise ValidationError({"demo_note": "Say where the demo values come from."})
    return tracked_update(
        bundle, actor=actor, reason="Marked as demo data", fields={"demo_note": note.strip()}
    )


def _refusal_of(error: ValidationError) -> bundle_reader.BundleRefused:
    """A schema-valid value that does not fit the stored record, such as a 10,000-char id."""
    fields = getattr(error, "message_dict", {"bundle": error.messages})
    name, messages = next(iter(fields.items()))
    return bundle_reader.BundleRefused(
        f"The bundle cannot be stored: {name}: {' '.join(messages)}", field=name
    )


def _discard(name: str | None) -> None:
    if name:
        default_storage.delete(name)
