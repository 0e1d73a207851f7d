"""The acceptance and load-test report chapter of the signed packet (seed 000 deliverable
"验收与压测报告"): criteria, measured values, the ladder with the safe operating level,
each result with its attachments' digests, and the sign-off.

Every attachment is an evidence file of the manifest, re-hashed from storage.
"""

from django.utils.translation import gettext as _

from apps.acceptance.selectors import acceptance_history_querysets, acceptance_state, case_plans


def packet_section(case):
    from apps.packets.sections import PacketSection

    plans = case_plans(case)
    if not plans:
        return None
    states = [acceptance_state(plan) for plan in plans]
    files = [
        (f"acceptance-{a.pk}-{a.name}", a.storage_name, a.sha256)
        for state in states
        for result in state.results
        for a in result.attachments.all()
    ]
    return PacketSection(
        title=_("Acceptance and load-test report"),
        template="acceptance/packet_section.html",
        context={"states": states},
        order=85,
        manifest_files=files,
        history_querysets=acceptance_history_querysets(case),
        anchor="acceptance",
    )
