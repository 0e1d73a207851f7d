from django.core.files.uploadedfile import SimpleUploadedFile

from apps.workloads.services import workload_set_upload
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
