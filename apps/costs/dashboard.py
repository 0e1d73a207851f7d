"""Budget thresholds crossed, on the role dashboard: the owner's cases (finance, auditors,
admins: all)."""

from datetime import date, timedelta

from django.urls import reverse
from django.utils.translation import gettext as _

from apps.core import formats
from apps.core.contributions import Item, Section
from apps.core.roles import Role
from apps.costs.models import ThresholdAlert

RECENT_DAYS = 62  # this month's and last month's crossings
LIMIT = 50
# Who sees every case's crossings: finance, who answers for the commitments, and the
# readers of everything (docs/roles.md).
EVERY_CASE = {Role.FINANCE, Role.ADMIN, Role.AUDITOR}


def dashboard_section(user, *, roles: set[str], today: date):
    """One section in one query; None for those who may not see budgets."""
    if not user.has_perm("costs.view_thresholdalert"):
        return None
    alerts = ThresholdAlert.objects.filter(
        created_at__date__gte=today - timedelta(days=RECENT_DAYS)
    ).select_related("case")
    if not roles & EVERY_CASE:
        alerts = alerts.filter(case__owner=user)
    section = Section(_("Budget thresholds crossed"))
    for alert in alerts.order_by("-period", "-threshold_pct", "-pk")[:LIMIT]:
        section.items.append(
            Item(
                str(alert.case),
                _("%(pct)s %% of the %(scope)s reached in %(period)s: %(spent)s of %(limit)s")
                % {
                    "pct": alert.threshold_pct,
                    "scope": alert.get_scope_display().lower(),
                    "period": alert.period_text,
                    "spent": formats.number(alert.spent, formats.MONEY_PLACES),
                    "limit": formats.number(alert.limit, formats.MONEY_PLACES),
                },
                reverse("costs:case", args=[alert.case_id]),
                "bad" if alert.threshold_pct >= 100 else "warn",
            )
        )
    if not section.items and not roles & ({Role.PROCUREMENT} | EVERY_CASE):
        return None
    return section
