"""The network and access-control plan chapter of the signed packet
(docs/rules/audit.md#deliverables)."""

from django.utils import timezone
from django.utils.translation import gettext as _

from apps.access.selectors import (
    access_history_querysets,
    access_matrix_of,
    matrix_view,
    network_plan_of,
    plan_view,
)
from apps.core.contributions import PacketSection


def packet_section(case):
    matrix = access_matrix_of(case)
    plan = network_plan_of(case)
    if matrix is None and plan is None:
        return None
    return PacketSection(
        title=_("Network and access-control plan"),
        template="access/packet_section.html",
        context={
            "matrix": matrix_view(matrix, timezone.localdate()) if matrix else None,
            "plan": plan_view(plan) if plan else None,
        },
        history_querysets=access_history_querysets(case),
    )
