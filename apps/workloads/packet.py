"""The workload sets in the acceptance report of the signed packet: each set's digest and
statistics, and the sets each acceptance plan requires; never a line of a set.

Each set is a file of the manifest, re-hashed from storage.
"""

from django.utils.translation import gettext as _

from apps.acceptance.selectors import case_plans
from apps.core.contributions import PacketSection
from apps.workloads import rules
from apps.workloads.selectors import case_sets, plan_workload, workload_history_querysets


def packet_section(case):
    sets = case_sets(case)
    if not sets:
        return None
    labels = rules.histogram_labels()
    rows = []
    for workload_set in sets:
        statistics = workload_set.statistics or {}
        groups = (
            statistics.get("tiers") or {}
            if workload_set.kind == rules.PROMPTS
            else {_("inputs"): statistics.get("inputs") or {}}
        )
        rows.append(
            (
                workload_set,
                [
                    (name, group, list(zip(labels, group.get("histogram") or [], strict=False)))
                    for name, group in groups.items()
                ],
            )
        )
    return PacketSection(
        title=_("Acceptance workload sets"),
        template="workloads/packet_section.html",
        context={"rows": rows, "plans": [(p, plan_workload(p)) for p in case_plans(case)]},
        manifest_files=[
            (f"workload-set-{s.pk}-{s.name}-v{s.set_version}.jsonl", s.storage_name, s.sha256)
            for s in sets
        ],
        history_querysets=workload_history_querysets(case),
        anchor="workload-sets",
    )
