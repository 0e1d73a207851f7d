"""Demo: tariq prepares the acceptance of Aurora's offer while the case awaits its decision.

Aurora's offer holds every approval gate, but nobody has decided yet: the plan
is prepared ahead of the decision, and says so. The layers the harness
measures stay "not measured"; the two fault injections tariq rehearsed on the
trial allocation recovered cleanly. Nothing is accepted before an approval.
"""

from datetime import timedelta
from decimal import Decimal

from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from apps.acceptance.models import AcceptancePlan, FaultKind, Layer
from apps.acceptance.services import (
    acceptance_attachment_add,
    acceptance_plan_create,
    acceptance_result_record,
)
from apps.cases.models import ProcurementCase
from apps.offers.models import Offer

DEMO_VENDOR = "Aurora Compute Pte. Ltd."

DEMO_FAULTS = [
    (
        FaultKind.NETWORK,
        "Injected 80 ms jitter and a 20 s disconnect on the gateway link (tc netem)",
        True,
        False,
        "Clients retried; the batch job resumed from the checkpoint of 10:40.",
    ),
    (
        FaultKind.NODE_KILLED,
        "Killed node 3 of 8 during a fine-tuning rehearsal (kill -9 on all ranks)",
        True,
        False,
        "Job rescheduled on the spare node and resumed from step 4,800; loss curve continuous.",
    ),
]

NODE_KILL_LOG = b"""2026-11-28T10:52:03Z rank 24-31 lost heartbeat (node gpu-03)
2026-11-28T10:52:41Z scheduler: replacing gpu-03 with spare gpu-09
2026-11-28T10:54:10Z restore: checkpoint step-4800 (s3://acceptance-rehearsal/ckpt/step-4800)
2026-11-28T10:55:02Z training resumed at step 4801, loss 1.8412 (before kill: 1.8420)
"""


def seed(*, case, users) -> None:
    offer = Offer.objects.filter(case=case, vendor__name=DEMO_VENDOR).first()
    if offer is None or AcceptancePlan.objects.filter(offer=offer).exists():
        return
    # Read afresh: the approval demo moved the case on after it was handed to us.
    status = ProcurementCase.objects.values_list("status", flat=True).get(pk=case.pk)
    if status != ProcurementCase.Status.PENDING_APPROVAL:
        return
    tariq = users["tariq"]
    plan = acceptance_plan_create(
        actor=tariq,
        offer=offer,
        expected_versions="driver 550.127.05, CUDA 12.4, vLLM 0.6.4, NCCL 2.21.5",
        required_safe_concurrency=16,
        # The reference training step: what a training tenant of these cards expects.
        training_min_samples_per_s_per_card=Decimal("120"),
        training_min_scaling_pct=Decimal("90"),
        checkpoint_max_save_s=Decimal("5"),
        checkpoint_max_restore_s=Decimal("5"),
        notes=(
            "Prepared while the case awaits its decision; fault injections rehearsed on "
            "Aurora's trial allocation. Soak, correctness and load test run once approved."
        ),
    )
    start = timezone.now() - timedelta(days=2)
    for index, (kind, activity, resumed, duplicated, notes) in enumerate(DEMO_FAULTS):
        result = acceptance_result_record(
            actor=tariq,
            plan=plan,
            layer=Layer.STABILITY,
            fault_kind=kind,
            activity=activity,
            outcome="failed" if duplicated else "passed",
            notes=notes,
            resumed_from_checkpoint=resumed,
            duplicated_data=duplicated,
            performed_at=start + timedelta(hours=index),
        )
        if kind == FaultKind.NODE_KILLED:
            acceptance_attachment_add(
                actor=tariq,
                result=result,
                upload=SimpleUploadedFile("node-kill-recovery.log", NODE_KILL_LOG, "text/plain"),
            )
