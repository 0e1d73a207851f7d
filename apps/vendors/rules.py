"""The vendor's rules, on plain values (docs/rules/vendors.md).

- **Tier from the cases**: each of three dimensions of the vendor's cases gives a level
  (0 low … 3 critical), and the highest level is the tier. The data sent (the datasets of
  the cases' data-export assessments), the spend (the cases' budgets) and how critical the
  workload is (the availability the cases state they need).
- **Certifications**: one that has expired, or expires within 60 days, is a finding on
  every active case that has an offer from the vendor.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from enum import StrEnum

from django.utils.translation import gettext as _

from apps.vendors.models import VendorTier

# --- the tier kept from the cases ----------------------------------------------------------

LEVEL_TIERS = (VendorTier.LOW, VendorTier.MEDIUM, VendorTier.HIGH, VendorTier.CRITICAL)

# The sensitivity of a dataset sent (apps.assessments SENSITIVITY_CHOICES) → level.
DATA_LEVELS: dict[str, int] = {
    "public": 0,
    "internal": 1,
    "personal": 2,
    "sensitive_personal": 3,
    "important_data": 3,
}
# The budget's total, from which a level holds (in the budget's own currency).
SPEND_LEVELS: tuple[tuple[Decimal, int], ...] = (
    (Decimal("1000000"), 3),
    (Decimal("250000"), 2),
    (Decimal("50000"), 1),
)
# The availability a case needs, in %, from which a level holds.
AVAILABILITY_LEVELS: tuple[tuple[Decimal, int], ...] = (
    (Decimal("99.95"), 3),
    (Decimal("99.9"), 2),
    (Decimal("99.5"), 1),
)


@dataclass(frozen=True)
class CaseFacts:
    """What one of the vendor's cases records that the tier weighs."""

    sensitivities: tuple[str, ...] = ()  # of the datasets its assessments send
    budget_total: Decimal | None = None
    availability_need_pct: Decimal | None = None


def _step(value: Decimal | None, steps: tuple[tuple[Decimal, int], ...]) -> int:
    if value is None:
        return 0
    return next((level for floor, level in steps if value >= floor), 0)


def case_level(facts: CaseFacts) -> int:
    """The highest of the case's three levels: data, spend, criticality."""
    data = max((DATA_LEVELS.get(s, 0) for s in facts.sensitivities), default=0)
    return max(
        data,
        _step(facts.budget_total, SPEND_LEVELS),
        _step(facts.availability_need_pct, AVAILABILITY_LEVELS),
    )


def derive_tier(cases: Iterable[CaseFacts]) -> str | None:
    """The tier the vendor's cases call for: the highest level of any; None without a case
    (the vendor then stands at the default tier)."""
    levels = [case_level(facts) for facts in cases]
    if not levels:
        return None
    return str(LEVEL_TIERS[max(levels)])


def override_errors(tier: str | None, reason: str | None) -> dict[str, str]:
    """A tier set by hand needs a reason; a reason without a tier means nothing."""
    if tier and not (reason or "").strip():
        return {"tier_override_reason": _("Say why the tier is set by hand.")}
    if tier and tier not in VendorTier.values:
        return {"tier_override": _("Choose one of the tiers.")}
    return {}


# --- certifications -------------------------------------------------------------------------

CERTIFICATION_EXPIRED = "vendors.certification_expired"
CERTIFICATION_EXPIRING = "vendors.certification_expiring"
REGISTER_FINDINGS: tuple[str, ...] = (CERTIFICATION_EXPIRED, CERTIFICATION_EXPIRING)

# A certificate expiring within this many days is shown as a finding that informs.
EXPIRING_DAYS = 60


class CertificationState(StrEnum):
    VALID = "valid"
    EXPIRING = "expiring"
    EXPIRED = "expired"


def certification_state(expires_on: date, *, today: date) -> CertificationState:
    """Expired from the day after its last valid day; expiring within 60 days of it."""
    if expires_on < today:
        return CertificationState.EXPIRED
    if (expires_on - today).days <= EXPIRING_DAYS:
        return CertificationState.EXPIRING
    return CertificationState.VALID


@dataclass(frozen=True)
class CertificationFinding:
    code: str
    key: str
    message: str
    facts: str


def certification_findings(certifications: Iterable, *, today: date) -> list[CertificationFinding]:
    """One finding for each certification expired or expiring; ``certifications`` carry
    ``pk``, ``expires_on`` and a readable ``str``."""
    found = []
    for cert in certifications:
        state = certification_state(cert.expires_on, today=today)
        if state is CertificationState.VALID:
            continue
        when = cert.expires_on.isoformat()
        if state is CertificationState.EXPIRED:
            code = CERTIFICATION_EXPIRED
            message = _("The vendor's %(cert)s expired on %(date)s.")
        else:
            code = CERTIFICATION_EXPIRING
            message = _("The vendor's %(cert)s expires on %(date)s.")
        found.append(
            CertificationFinding(
                code=code,
                key=f"certification-{cert.pk}",
                message=message % {"cert": cert, "date": when},
                facts=f"expires_on={when}",
            )
        )
    return found
