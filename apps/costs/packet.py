"""The cost guardrails and reconciliation chapter of the signed packet (docs/rules/costs.md).

Every imported bill file is listed in the manifest with the SHA-256 recorded
at import, so the packet re-hashes it from storage and shows any that changed.
"""

from django.utils.translation import gettext as _

from apps.core.contributions import PacketSection
from apps.costs.selectors import cost_history_querysets, cost_view


def packet_section(case):
    view = cost_view(case, with_unit_costs=True)
    if view.budget is None and not view.imports:
        return None
    return PacketSection(
        title=_("Cost guardrails and reconciliation"),
        template="costs/packet_section.html",
        context={"view": view},
        manifest_files=[
            (
                f"{'daily' if i.is_daily else 'bill'}-{i.sha256[:16]}."
                f"{i.storage_name.rsplit('.', 1)[-1]}",
                i.storage_name,
                i.sha256,
            )
            for i in view.imports
        ],
        history_querysets=cost_history_querysets(case),
    )
