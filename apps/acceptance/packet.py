"""The acceptance and load-test report chapter of the signed packet
(docs/rules/audit.md#deliverables,
"验收与压测报告"): criteria, measured values, the ladder with the safe operating level,
each result with its attachments' digests, and the sign-off.

Every attachment is an evidence file of the manifest, re-hashed from storage.
"""

from django.utils.translation import gettext as _

from apps.acceptance.selectors import (
    acceptance_history_querysets,
    acceptance_state,
    active_plan,
    case_plans,
)
from apps.core.contributions import PacketSection


def packet_section(case):
    plans = case_plans(case)
    plan = active_plan(case, plans)
    if plan is None:
        return None
    # The acceptance in force is reported in full; plans of other offers are named.
    states = [acceptance_state(plan)]
    files = [
        (f"acceptance-{a.pk}-{a.name}", a.storage_name, a.sha256)
        for state in states
        for result in state.results
        for a in result.attachments.all()
    ]
    return PacketSection(
        title=_("Acceptance and load-test report"),
        template="acceptance/packet_section.html",
        context={"states": states, "others": [p for p in plans if p.pk != plan.pk]},
        manifest_files=files,
        history_querysets=acceptance_history_querysets(case),
        anchor="acceptance",
    )
