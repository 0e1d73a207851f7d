"""When a vendor's reassessment falls due and when it lapses (docs/rules/reassessment.md).

Pure dates: the vendor's review cycle (its tier's, or its own) says how many months after
the last reassessment, or after the first acceptance of its offer, the next one falls due;
a reassessment not completed within the grace after it started has lapsed, and stands as
a finding on every open case with an offer from that vendor.
"""

import calendar
from datetime import date, timedelta

# The register code a lapsed reassessment raises (apps.casework.findings).
REASSESSMENT_LAPSED = "vendors.reassessment_lapsed"
REGISTER_FINDINGS: tuple[str, ...] = (REASSESSMENT_LAPSED,)

# Days a started reassessment has to complete: the vendor answers the portal again and the
# acceptance is run again within them. The harness token it issues lives as long.
GRACE_DAYS = 30


def add_months(day: date, months: int) -> date:
    """``day`` moved ``months`` later; the 31st becomes the month's last day where it has none."""
    month_index = day.month - 1 + months
    year, month = day.year + month_index // 12, month_index % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def next_due(anchor: date, cycle_months: int) -> date:
    """The day the next reassessment falls due: one review cycle after ``anchor`` (the day
    the last one completed, or the day the offer was first accepted or approved)."""
    return add_months(anchor, cycle_months)


def lapses_on(started_on: date) -> date:
    """The first day a reassessment started on ``started_on`` and still open has lapsed."""
    return started_on + timedelta(days=GRACE_DAYS)


def has_lapsed(*, started_on: date, completed: bool, today: date) -> bool:
    return not completed and today >= lapses_on(started_on)
