from django.core.files.uploadedfile import SimpleUploadedFile

from apps.workloads.services import workload_set_upload
from tests.acceptance.factories import GPU, LADDER, load_summary
from tests.workloads.setfiles import jsonl, prompt_lines, sample_lines


def upload_set(actor, case, kind="prompts", name="support tickets", raw: bytes | None = None):
    if raw is None:
        raw = jsonl(prompt_lines(per_tier=4) if kind == "prompts" else sample_lines(5))
    return workload_set_upload(
        actor=actor,
        case=case,
        kind=kind,
        name=name,
        upload=SimpleUploadedFile("set.jsonl", raw, content_type="application/x-ndjson"),
    )


# Requests of each tier in every cell: what the harness sends, the same for every tier.
EVEN = {"short": 70, "medium": 70, "long": 70}


def load_test_summary(*, prompt_set: dict | None = None, sent: dict | None = None) -> dict:
    """A recomputed load-test summary whose levels hold the default service levels, every
    level's cells sending ``sent`` requests of each tier (0.5 requests/s per concurrent
    stream), recording ``prompt_set`` (``workload_sets.prompt_set``) as the set it ran."""
    summary = load_summary()
    summary["cells"] = [
        {
            "concurrency": c,
            "round": 1,
            "prompt_set": tier,
            "n": n,
            "req_s": 0.5 * c,
            "gpu_memory_peak_mib": {GPU: 90_000},
        }
        for c in LADDER
        for tier, n in (sent or EVEN).items()
    ]
    if prompt_set is not None:
        summary["workload_sets"] = {"prompt_set": prompt_set}
    return summary


def ran(workload_set) -> dict:
    """The bundle's record of a run on the case's ``workload_set``."""
    return {
        "source": "case",
        "name": workload_set.name,
        "sha256": workload_set.sha256,
        "count": workload_set.item_count,
    }


BUILT_IN = {"source": "built-in", "name": "short,medium,long", "sha256": "0" * 64, "count": 60}
