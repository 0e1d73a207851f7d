"""Reads: a case's sets, one set for a reader, the sets a plan requires, a bundle's sets.

Sets can hold confidential text: a person reads them only with the view permission of
the case's roles, and a harness token reads only the sets of its own case.
"""

import logging
from dataclasses import dataclass

from django.http import Http404
from django.shortcuts import get_object_or_404

from apps.acceptance.models import AcceptancePlan
from apps.core.downloads import CHUNK_BYTES, StoredFile, StoredFileChanged, stored_file_read
from apps.workloads import rules
from apps.workloads.models import PlanWorkload, SetKind, WorkloadSet

logger = logging.getLogger(__name__)


def set_list_for(actor):
    if not actor.has_perm("workloads.view_workloadset"):
        return WorkloadSet.objects.none()
    return WorkloadSet.objects.select_related("case", "uploaded_by")


def set_get_for(actor, pk: int) -> WorkloadSet:
    return get_object_or_404(set_list_for(actor), pk=pk)


def case_sets(case) -> list[WorkloadSet]:
    """Every set of the case: prompt sets first, then by name, newest version first."""
    return list(
        WorkloadSet.objects.filter(case=case)
        .select_related("uploaded_by")
        .order_by("kind", "name", "-set_version")
    )


def cases_with_prompt_sets(case_ids) -> set[int]:
    """Which of many cases hold a prompt set of their own (1 query)."""
    return set(
        WorkloadSet.objects.filter(case_id__in=list(case_ids), kind=SetKind.PROMPTS).values_list(
            "case_id", flat=True
        )
    )


def case_prompt_sets(case) -> list[rules.CasePromptSet]:
    """Every version of the case's prompt sets, with its prompts per tier (1 query)."""
    return [
        rules.CasePromptSet(
            name=name, version=version, sha256=sha256, tiers=rules.tier_counts(statistics or {})
        )
        for name, version, sha256, statistics in WorkloadSet.objects.filter(
            case=case, kind=SetKind.PROMPTS
        )
        .order_by("name", "-set_version")
        .values_list("name", "set_version", "sha256", "statistics")
    ]


def set_stored_file(workload_set: WorkloadSet) -> StoredFile:
    """The set's bytes as a download sends them, checked against its SHA-256."""
    return StoredFile(
        case_id=workload_set.case_id,
        record=f"Workload set {workload_set}",
        name=workload_set.storage_name,
        sha256=workload_set.sha256,
        filename=f"{workload_set.name}-v{workload_set.set_version}.jsonl",
        content_type="application/x-ndjson",
    )


def plan_workload(plan) -> PlanWorkload | None:
    return (
        PlanWorkload.objects.filter(plan=plan)
        .select_related("prompt_set", "sample_set", "set_by")
        .first()
    )


def offer_required_sets(offer) -> dict[str, WorkloadSet]:
    """The sets the offer's acceptance plan requires, by kind (empty when none)."""
    if offer is None:
        return {}
    required = (
        PlanWorkload.objects.filter(plan__offer=offer).select_related("prompt_set", "sample_set")
    ).first()
    if required is None:
        return {}
    found = {SetKind.PROMPTS.value: required.prompt_set, SetKind.SAMPLES.value: required.sample_set}
    return {kind: workload_set for kind, workload_set in found.items() if workload_set}


def required_set_missed(offer, summary: dict) -> tuple[str, str] | None:
    """(field, reason) when a run of the offer used other inputs than its plan requires.

    A bundle's load test must have used the required prompt set, and its correctness run
    the required sample set, by digest: the built-in sets and other files never satisfy
    a plan that names the case's sets. Steps the bundle did not run are not judged.
    """
    required = offer_required_sets(offer)
    used = summary.get("workload_sets") or {}
    steps = summary.get("steps") or {}
    for kind, key, step, option, words in (
        (SetKind.PROMPTS, "prompt_set", "loadtest", "--prompt-set case", "prompt set"),
        (SetKind.SAMPLES, "sample_set", "correctness", "--sample-set case", "core sample set"),
    ):
        wanted = required.get(kind.value)
        if wanted is None or steps.get(step) != "ok":
            continue
        entry = used.get(key) or {}
        if entry.get("sha256") == wanted.sha256:
            continue
        ran = (
            f"{entry.get('source')} set {entry.get('name')!r} ({str(entry.get('sha256'))[:12]}…)"
            if entry
            else "no recorded set"
        )
        return (
            f"workload_sets/{key}",
            f"The offer's acceptance plan requires the case's {words} "
            f"{wanted} (SHA-256 {wanted.sha256[:12]}…); this run's {step} used {ran}. "
            f"Run the harness with {option}.",
        )
    return None


def harness_set(case, kind: str, sha256: str | None = None) -> WorkloadSet | None:
    """The set a harness token of ``case`` fetches: by digest, else the one the plan of the
    token's case requires, else the newest of that kind."""
    sets = WorkloadSet.objects.filter(case=case, kind=kind)
    if sha256:
        return sets.filter(sha256=sha256.strip().lower()[:64]).first()
    required = (
        PlanWorkload.objects.filter(plan__case=case)
        .select_related("prompt_set", "sample_set")
        .order_by("-pk")
        .first()
    )
    if required is not None:
        named = required.prompt_set if kind == SetKind.PROMPTS else required.sample_set
        if named is not None:
            return named
    return sets.order_by("-created_at", "-pk").first()


@dataclass(frozen=True)
class SampleReference:
    """The expected answers of one of the case's core sample sets, from the server's copy."""

    name: str  # "customer-samples v2"
    sha256: str
    answers: tuple[rules.ExpectedAnswer, ...]  # every sample of the set, in file order


def case_sample_reference(case_id: int, sha256: str, wanted: set[str]) -> SampleReference | None:
    """The case's core sample set with this digest, read from its stored bytes (checked
    against the digest); None when the case holds no such set or its copy cannot be read.

    A correctness run that used the set is judged against these answers, never against the
    copy its bundle carries (docs/rules/evidence.md#expected-answers)."""
    held = WorkloadSet.objects.filter(
        case_id=case_id, kind=SetKind.SAMPLES, sha256=str(sha256 or "").strip().lower()[:64]
    ).first()
    if held is None:
        return None
    try:
        spool = stored_file_read(set_stored_file(held), actor=None)
    except (Http404, StoredFileChanged):
        logger.error("The stored copy of workload set %s cannot be read", held.pk)
        return None
    with spool:
        chunks = iter(lambda: spool.read(CHUNK_BYTES), b"")
        answers = tuple(rules.expected_answers(chunks, wanted))
    return SampleReference(name=str(held), sha256=held.sha256, answers=answers)


@dataclass(frozen=True)
class BundleSet:
    """The set one run used, as its bundle records it, matched with the case's sets."""

    kind: str
    source: str  # "case", "file" or "built-in"
    name: str
    sha256: str
    count: int | None
    case_set: WorkloadSet | None

    @property
    def built_in(self) -> bool:
        return self.source == "built-in"


def bundle_sets(bundle) -> list[BundleSet]:
    """The prompt and sample sets a bundle's runs used (from its stored summary)."""
    recorded = (bundle.summary or {}).get("workload_sets") or {}
    digests = [entry.get("sha256") for entry in recorded.values() if isinstance(entry, dict)]
    if not digests:
        return []  # a bundle with no load test or correctness run: no query
    held = {
        (s.kind, s.sha256): s
        for s in WorkloadSet.objects.filter(case_id=bundle.case_id, sha256__in=digests)
    }
    found = []
    for kind, key in ((SetKind.PROMPTS, "prompt_set"), (SetKind.SAMPLES, "sample_set")):
        entry = recorded.get(key)
        if not isinstance(entry, dict):
            continue
        found.append(
            BundleSet(
                kind=kind.value,
                source=str(entry.get("source") or ""),
                name=str(entry.get("name") or ""),
                sha256=str(entry.get("sha256") or ""),
                count=entry.get("count"),
                case_set=held.get((kind.value, str(entry.get("sha256")))),
            )
        )
    return found


def workload_history_querysets(case) -> list:
    return [
        WorkloadSet.history.filter(case_id=case.pk),
        PlanWorkload.history.filter(
            plan_id__in=AcceptancePlan.history.filter(case_id=case.pk).values("id")
        ),
    ]
