"""An approved offer with evidence whose load test holds the SLOs, and acceptance records."""

import hashlib
import itertools
from dataclasses import replace

from django.utils import timezone

from apps.acceptance.services import acceptance_plan_create, acceptance_result_record
from apps.approvals.services import approval_decide, case_submit_for_approval
from apps.core.services import tracked_create
from apps.evidence import acceptance as harness_values
from apps.evidence.models import EvidenceBundle, SpecVerification
from apps.evidence.services import harness_token_create
from tests.approvals.factories import make_ready_case, security_checks

_n = itertools.count(1)
GPU = "GPU-aaaa"
LADDER = (1, 4, 8, 16, 32)
GREEN = ["versions.driver", "versions.cuda", "versions.shm", "versions.ulimits"]
GREEN += ["versions.clock_sync"]


def load_summary(*, p95_ms=800.0, memory_mib=90_000, failing_from=None, n=200, e2e_ms=None) -> dict:
    """A recomputed load-test summary: every level n = 200; P95 over the SLO from a level on.
    ``e2e_ms``: the end-to-end P95 of each level (P99 1.5 times it), as the server keeps it
    since it does; None: a summary from before, without it."""
    levels = []
    for c in LADDER:
        p95 = 2000.0 if failing_from is not None and c >= failing_from else p95_ms
        level = {
            "concurrency": c,
            "n": n,
            "errors": 0,
            "error_rate": 0.0,
            "ttft_ms": {"n": n, "p50": p95 / 2, "p95": p95, "p99": p95 * 1.25},
            "tpot_ms": {"n": n},
            "output_tok_s": {"n": 3, "mean": 100.0 * c, "std": 1.0, "cv": 0.01},
            "effective_concurrency": [float(c)],
        }
        if e2e_ms is not None:
            level["e2e_ms"] = {"n": n, "p95": e2e_ms + c, "p99": (e2e_ms + c) * 1.5}
        levels.append(level)
    cells = [
        {"concurrency": c, "round": 1, "gpu_memory_peak_mib": {GPU: memory_mib}} for c in LADDER
    ]
    return {
        "levels": levels,
        "cells": cells,
        "gpus": [{"uuid": GPU, "memory_total_mib": 143_771}],
    }


def make_evidence(actor, offer, *, summary=None, checks_status="pass", verdict="verified"):
    n = next(_n)
    token = harness_token_create(actor=actor, case=offer.case, offer=offer).record
    when = timezone.now()
    bundle = tracked_create(
        EvidenceBundle,
        actor=actor,
        reason="Evidence received",
        case=offer.case,
        offer=offer,
        token=token,
        sha256=hashlib.sha256(f"acceptance-bundle-{n}".encode()).hexdigest(),
        size=2048,
        storage_name=f"evidence/acceptance-{n}.json",
        format_version="1",
        received_at=when,
        run_started_at=when,
        run_finished_at=when,
        nonce=f"acceptance-nonce-{n}",
        summary=load_summary() if summary is None else summary,
    )
    checks = [
        {"key": key, "title": key, "status": checks_status, "measured": "ok", "expected": "ok"}
        for key in GREEN
    ] + security_checks()  # an endpoint that refuses what it must
    return tracked_create(
        SpecVerification,
        actor=actor,
        reason="Verified",
        bundle=bundle,
        offer=offer,
        verdict=verdict,
        checks=checks,
        headline={},
        rules_version="test",
    )


def approved_offer(people, **evidence):
    """priya's case, its first offer approved by tariq on evidence that holds the SLOs."""
    case, offer, _others = make_ready_case(people)
    make_evidence(people["tariq"], offer, **evidence)
    case = case_submit_for_approval(actor=people["priya"], case=case)
    approval_decide(
        actor=people["tariq"], case=case, decision="approved", comment="Gates held", offer=offer
    )
    case.refresh_from_db()
    offer.refresh_from_db()
    return case, offer


def make_plan(actor, offer, **fields):
    return acceptance_plan_create(actor=actor, offer=offer, **fields)


def record_faults(actor, plan, kinds=("network", "node_killed", "maintenance"), **overrides):
    results = []
    for kind in kinds:
        values = dict(
            layer="stability",
            fault_kind=kind,
            activity=f"Injected {kind}",
            outcome="passed",
            resumed_from_checkpoint=True,
            duplicated_data=False,
        )
        values.update(overrides.get(kind, {}))
        results.append(acceptance_result_record(actor=actor, plan=plan, **values))
    return results


def _from_newest_bundle(measurement, offer):
    """The measurement as recomputed from the offer's newest bundle, as the evidence app would."""
    if measurement is None:
        return []
    bundle = EvidenceBundle.objects.filter(offer=offer).order_by("-received_at", "-pk").first()
    if bundle is None:
        return [measurement]
    return [replace(measurement, bundle_id=bundle.pk, bundle_sha256=bundle.sha256)]


def harness_measures(monkeypatch, *, soak_run=None, correctness_run=None):
    """What the evidence app's soak and correctness functions would return (newest first)."""
    monkeypatch.setattr(
        harness_values,
        "soak_measurements_for_offer",
        lambda offer: _from_newest_bundle(soak_run, offer),
        raising=False,
    )
    monkeypatch.setattr(
        harness_values,
        "correctness_measurements_for_offer",
        lambda offer: _from_newest_bundle(correctness_run, offer),
        raising=False,
    )
