"""Contract terms with a quantity, and how they stand against the case (plain rules).

The clause checklist says whether a clause is acceptable; these terms say what it
commits to, in numbers a reader can compare across offers: the availability the
SLA promises, the notice before planned maintenance, the deadlines for deleting
and exporting our data, the format images are handed over in, the penalty for
leaving early, the prepayment and the billing basis.

Plain functions on plain data (no Django models, no I/O), so the checklist page,
the API, the offer matrix and the packet judge the terms the same way.

Decisions a reviewer or an auditor should know:

- A term left blank is "not stated", never zero. A check that needs it says so.
- The data-export window is checked against the exit window the case needs:
  leaving within a bounded time, with the data fully exportable, is a hard
  requirement, so a shorter export window is a problem, not a preference.
- The SLA is checked against the availability the case needs.
- The prepayment premium is the offer's prepayment ratio over what the vendor asks
  of ordinary customers, less one (60 % against 40 % is a 50 % premium). Market
  reports put such premiums at about 30–50 %: inside that range it is flagged for
  a decision with finance and risk; above it, as beyond what the market reports.
  It cannot be computed when ordinary customers prepay nothing or are not stated.
- A proprietary image format, or no image handed over, means the images cannot
  be rebuilt elsewhere; a lock-in penalty makes leaving costly, and above a
  fifth of the remaining contract finance weighs it with legal.
- Where the contract's billing basis or prepayment differs from the offer's, the
  offer's prices were compared on the wrong terms.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from enum import StrEnum

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.core import formats
from apps.core.bounds import DAYS_MAX, HOURS_MAX
from apps.offers.models import BillingBasis

# Market reports of what such offers ask over ordinary overseas customers' prepayment.
PREMIUM_LOW = Decimal("0.30")
PREMIUM_HIGH = Decimal("0.50")

IMAGE_FORMATS = {
    "oci": gettext_lazy("Standard container image (OCI / Docker)"),
    "vm_disk": gettext_lazy("Virtual machine disk image (qcow2, raw, VMDK)"),
    "proprietary": gettext_lazy("Vendor-specific format"),
    "none": gettext_lazy("No image handed over"),
}
NOT_PORTABLE_FORMATS = frozenset({"proprietary", "none"})

# The largest whole number a term of each kind takes: a year's notice, ten years' days.
WHOLE_MAX = {"hours": HOURS_MAX, "days": DAYS_MAX}


class Severity(StrEnum):
    BAD = "bad"  # the term fails what the case needs
    WARN = "warn"  # a decision or a second look is needed


@dataclass(frozen=True)
class Term:
    """One quantity of the contract, and the checklist item it stands beside."""

    name: str
    item_key: str
    label: Promise  # a lazy translation
    kind: str  # "percent", "hours", "days", "choice"


TERMS: tuple[Term, ...] = (
    Term("sla_availability_pct", "sla", gettext_lazy("SLA availability (%)"), "percent"),
    Term(
        "maintenance_notice_hours",
        "planned_maintenance",
        gettext_lazy("Maintenance notice (hours)"),
        "hours",
    ),
    Term(
        "data_deletion_days", "data_deletion", gettext_lazy("Data deletion deadline (days)"), "days"
    ),
    Term("data_export_days", "termination_exit", gettext_lazy("Data export window (days)"), "days"),
    Term("image_format", "termination_exit", gettext_lazy("Image delivery format"), "choice"),
    Term(
        "exit_penalty_pct",
        "termination_exit",
        gettext_lazy("Lock-in or early-exit penalty (% of the remaining contract)"),
        "percent",
    ),
    Term("prepayment_pct", "prepayment", gettext_lazy("Prepayment (%)"), "percent"),
    Term(
        "ordinary_prepayment_pct",
        "prepayment",
        gettext_lazy("Prepayment asked of ordinary customers (%)"),
        "percent",
    ),
    Term("billing_basis", "billing_basis", gettext_lazy("Billing basis"), "choice"),
)
TERM_NAMES = tuple(term.name for term in TERMS)
PERCENT_TERMS = frozenset(t.name for t in TERMS if t.kind == "percent")
COUNT_TERMS = frozenset(t.name for t in TERMS if t.kind in ("hours", "days"))


@dataclass(frozen=True)
class TermValues:
    """The contract's terms; None or "" where the contract states none."""

    sla_availability_pct: Decimal | None = None
    maintenance_notice_hours: int | None = None
    data_deletion_days: int | None = None
    data_export_days: int | None = None
    image_format: str = ""
    exit_penalty_pct: Decimal | None = None
    prepayment_pct: Decimal | None = None
    ordinary_prepayment_pct: Decimal | None = None
    billing_basis: str = ""


@dataclass(frozen=True)
class CaseNeeds:
    """What the case and the offer say, for the terms to be checked against."""

    exit_window_days: int | None = None
    availability_need_pct: Decimal | None = None
    offer_billing_basis: str = ""
    offer_prepayment_ratio: Decimal | None = None  # 0 to 1, as the offer holds it


# docs/rules/contracts.md#contract-terms: above a fifth of the remaining contract, leaving
# early is a financial commitment in its own right, accepted by finance beside legal.
EXIT_PENALTY_FINANCE_PCT = Decimal(20)


class Check(StrEnum):
    EXPORT_WINDOW_SHORT = "export_window_short"
    EXPORT_WINDOW_NOT_STATED = "export_window_not_stated"
    SLA_BELOW_NEED = "sla_below_need"
    SLA_NOT_STATED = "sla_not_stated"
    PREMIUM_ABOVE_RANGE = "premium_above_range"
    PREMIUM_IN_RANGE = "premium_in_range"
    IMAGE_NOT_PORTABLE = "image_not_portable"
    EXIT_PENALTY = "exit_penalty"
    EXIT_PENALTY_HIGH = "exit_penalty_high"
    BILLING_DIFFERS = "billing_differs"
    PREPAYMENT_DIFFERS = "prepayment_differs"


class DateCheck(StrEnum):
    """The checks of the contract's dates (docs/rules/contracts.md#contract-dates): judged
    on a day, not against the case, so apart from the terms' own checks."""

    NOTICE_DEADLINE_PASSED = "notice_deadline_passed"
    END_DATE_NEAR = "end_date_near"


# The codes of the case's findings register these checks raise (docs/rules/findings.md).
REGISTER_FINDINGS = tuple(f"contracts.{check.value}" for check in (*Check, *DateCheck))


@dataclass(frozen=True)
class Finding:
    check: Check | DateCheck
    severity: Severity
    term: str  # the term it is about
    message: str
    # The values it was raised on, where they are not the term's own (the dates').
    facts: str = ""


def prepayment_premium(values: TermValues) -> Decimal | None:
    """The prepayment ratio over ordinary customers', less one; None where not computable."""
    ratio, ordinary = values.prepayment_pct, values.ordinary_prepayment_pct
    if ratio is None or ordinary is None or ordinary <= 0:
        return None
    return ratio / ordinary - 1


def term_errors(raw: dict[str, object], *, billing_choices: frozenset[str]) -> dict[str, str]:
    """What is wrong with each given term: percentages 0–100, whole non-negative hours and
    days, a known image format and billing basis. Keys are term names."""
    errors: dict[str, str] = {}
    for name, value in raw.items():
        if name not in TERM_NAMES:
            errors[name] = str(_("'%(name)s' is not a contract term.") % {"name": name})
        elif value is None or value == "":
            continue
        elif name in PERCENT_TERMS:
            number = _decimal(value)
            if number is None or not Decimal(0) <= number <= Decimal(100):
                errors[name] = str(_("Give a percentage from 0 to 100."))
        elif name in COUNT_TERMS:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                errors[name] = str(_("Give a whole number, 0 or more."))
        elif name == "image_format" and value not in IMAGE_FORMATS:
            errors[name] = str(
                _("Choose one of: %(choices)s.") % {"choices": ", ".join(IMAGE_FORMATS)}
            )
        elif name == "billing_basis" and value not in billing_choices:
            errors[name] = str(
                _("Choose one of: %(choices)s.") % {"choices": ", ".join(sorted(billing_choices))}
            )
    return errors


def _decimal(value: object) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        return None
    try:
        number = Decimal(str(value))
    except ArithmeticError:
        return None
    return number if number.is_finite() else None


def findings(values: TermValues, needs: CaseNeeds) -> list[Finding]:
    """Every check that the terms fail or that asks for a decision, the worst first."""
    found = [
        *_export_window(values, needs),
        *_sla(values, needs),
        *_premium(values),
        *_exit(values),
        *_against_offer(values, needs),
    ]
    return sorted(found, key=lambda f: f.severity is not Severity.BAD)


def _days(n: int) -> str:
    return formats.number(n)


def _export_window(values: TermValues, needs: CaseNeeds) -> list[Finding]:
    needed = needs.exit_window_days
    if needed is None:
        return []
    if values.data_export_days is None:
        return [
            Finding(
                Check.EXPORT_WINDOW_NOT_STATED,
                Severity.WARN,
                "data_export_days",
                _(
                    "The contract states no window to export our data; the case must be able "
                    "to leave within %(needed)s days. Guides to renting remote compute make "
                    "leaving within a bounded time, with the data fully exportable, a hard "
                    "requirement."
                )
                % {"needed": _days(needed)},
            )
        ]
    if values.data_export_days < needed:
        return [
            Finding(
                Check.EXPORT_WINDOW_SHORT,
                Severity.BAD,
                "data_export_days",
                _(
                    "The contract leaves %(export)s days to export our data, fewer than the "
                    "%(needed)s days the case needs to leave. Guides to renting remote compute "
                    "make leaving within a bounded time, with the data fully exportable, a "
                    "hard requirement: negotiate a longer window."
                )
                % {"export": _days(values.data_export_days), "needed": _days(needed)},
            )
        ]
    return []


def _sla(values: TermValues, needs: CaseNeeds) -> list[Finding]:
    needed = needs.availability_need_pct
    if needed is None:
        return []
    promised = values.sla_availability_pct
    if promised is None:
        return [
            Finding(
                Check.SLA_NOT_STATED,
                Severity.WARN,
                "sla_availability_pct",
                _(
                    "The contract states no availability; the case needs %(needed)s. Without "
                    "a number, an outage costs the vendor nothing."
                )
                % {"needed": formats.percent(needed, -3, ratio=False)},
            )
        ]
    if promised < needed:
        return [
            Finding(
                Check.SLA_BELOW_NEED,
                Severity.BAD,
                "sla_availability_pct",
                _(
                    "The SLA promises %(promised)s availability, less than the %(needed)s the "
                    "case needs. The greatest risk of remote compute is whether the business "
                    "carries on when supply is cut, not the price."
                )
                % {
                    "promised": formats.percent(promised, -3, ratio=False),
                    "needed": formats.percent(needed, -3, ratio=False),
                },
            )
        ]
    return []


def _premium(values: TermValues) -> list[Finding]:
    premium = prepayment_premium(values)
    if premium is None or premium < PREMIUM_LOW:
        return []
    shown = {
        "premium": formats.percent(premium),
        "ratio": formats.percent(values.prepayment_pct, ratio=False),
        "ordinary": formats.percent(values.ordinary_prepayment_pct, ratio=False),
        "low": formats.percent(PREMIUM_LOW),
        "high": formats.percent(PREMIUM_HIGH),
    }
    if premium > PREMIUM_HIGH:
        return [
            Finding(
                Check.PREMIUM_ABOVE_RANGE,
                Severity.BAD,
                "prepayment_pct",
                _(
                    "The offer asks %(ratio)s in advance against %(ordinary)s from ordinary "
                    "customers: a premium of %(premium)s, above the %(low)s–%(high)s market "
                    "reports cite for such offers. Prepaying raises the financial risk and the "
                    "cost of moving away: negotiate, and decide with finance and risk."
                )
                % shown,
            )
        ]
    return [
        Finding(
            Check.PREMIUM_IN_RANGE,
            Severity.WARN,
            "prepayment_pct",
            _(
                "The offer asks %(ratio)s in advance against %(ordinary)s from ordinary "
                "customers: a premium of %(premium)s, within the %(low)s–%(high)s market "
                "reports cite for such offers. Prepaying for a long contract buys certainty of "
                "supply but raises the financial risk and the cost of moving away: decide with "
                "finance and risk."
            )
            % shown,
        )
    ]


def _exit(values: TermValues) -> list[Finding]:
    found = []
    if values.image_format in NOT_PORTABLE_FORMATS:
        found.append(
            Finding(
                Check.IMAGE_NOT_PORTABLE,
                Severity.BAD,
                "image_format",
                _(
                    "Images are handed over as “%(format)s”: they cannot be rebuilt with "
                    "another provider. Leaving within a bounded time needs images rebuildable "
                    "elsewhere."
                )
                % {"format": IMAGE_FORMATS[values.image_format]},
            )
        )
    penalty = values.exit_penalty_pct
    if penalty is not None and penalty > EXIT_PENALTY_FINANCE_PCT:
        found.append(
            Finding(
                Check.EXIT_PENALTY_HIGH,
                Severity.WARN,
                "exit_penalty_pct",
                _(
                    "Leaving early costs %(penalty)s of the remaining contract, more than "
                    "%(threshold)s: a commitment of that size is accepted by finance as well "
                    "as legal. A lock-in penalty ties the business's continuity to one vendor."
                )
                % {
                    "penalty": formats.percent(penalty, ratio=False),
                    "threshold": formats.percent(EXIT_PENALTY_FINANCE_PCT, ratio=False),
                },
            )
        )
    elif penalty is not None and penalty > 0:
        found.append(
            Finding(
                Check.EXIT_PENALTY,
                Severity.WARN,
                "exit_penalty_pct",
                _(
                    "Leaving early costs %(penalty)s of the remaining contract. A lock-in "
                    "penalty ties the business's continuity to one vendor."
                )
                % {"penalty": formats.percent(penalty, ratio=False)},
            )
        )
    return found


def _against_offer(values: TermValues, needs: CaseNeeds) -> list[Finding]:
    found = []
    if (
        values.billing_basis
        and needs.offer_billing_basis
        and values.billing_basis != needs.offer_billing_basis
    ):
        labels = dict(BillingBasis.choices)
        found.append(
            Finding(
                Check.BILLING_DIFFERS,
                Severity.WARN,
                "billing_basis",
                _(
                    "The contract bills “%(contract)s”, the offer was priced “%(offer)s”: the "
                    "price comparison uses the offer's basis. Correct the offer or the contract."
                )
                % {
                    "contract": labels.get(values.billing_basis, values.billing_basis),
                    "offer": labels.get(needs.offer_billing_basis, needs.offer_billing_basis),
                },
            )
        )
    ratio = needs.offer_prepayment_ratio
    stated = values.prepayment_pct
    if stated is not None and ratio is not None and stated != ratio * 100:
        found.append(
            Finding(
                Check.PREPAYMENT_DIFFERS,
                Severity.WARN,
                "prepayment_pct",
                _(
                    "The contract asks %(contract)s in advance, the offer states %(offer)s: the "
                    "price comparison uses the offer's. Correct the offer or the contract."
                )
                % {
                    "contract": formats.percent(values.prepayment_pct, ratio=False),
                    "offer": formats.percent(ratio),
                },
            )
        )
    return found


# --- the contract's dates ----------------------------------------------------------------

DATE_NAMES = ("effective_date", "renewal_date", "notice_deadline", "end_date")
DATE_LABELS = {
    "effective_date": gettext_lazy("Effective date"),
    "renewal_date": gettext_lazy("Renewal date"),
    "notice_deadline": gettext_lazy("Notice deadline"),
    "end_date": gettext_lazy("End date"),
}
# A notice deadline or an end date this many days ahead is work to do now.
DATES_AHEAD_DAYS = 60


@dataclass(frozen=True)
class ContractDates:
    """The contract's dates; None where the contract states none."""

    effective_date: date | None = None
    renewal_date: date | None = None
    notice_deadline: date | None = None  # the last day to give notice against the renewal
    end_date: date | None = None

    @property
    def stated(self) -> bool:
        return any(getattr(self, name) is not None for name in DATE_NAMES)


def date_errors(dates: ContractDates) -> dict[str, str]:
    """What is wrong with the dates together: a contract ends on or after it takes
    effect, and notice is given on or before the renewal it is against."""
    errors: dict[str, str] = {}
    if dates.effective_date and dates.end_date and dates.end_date < dates.effective_date:
        errors["end_date"] = _("The end date is before the effective date.")
    if dates.notice_deadline and dates.renewal_date and dates.notice_deadline > dates.renewal_date:
        errors["notice_deadline"] = _("The notice deadline is after the renewal date.")
    return errors


def notice_due(dates: ContractDates, today: date) -> bool:
    """Notice against the renewal can still be given, and the last day is near."""
    deadline = dates.notice_deadline
    return deadline is not None and 0 <= (deadline - today).days <= DATES_AHEAD_DAYS


def date_findings(dates: ContractDates, today: date) -> list[Finding]:
    """A notice deadline gone by (the contract renews unless it ended first), and an end
    date within ``DATES_AHEAD_DAYS`` days (or gone by)."""
    found = []
    deadline, renewal, end = dates.notice_deadline, dates.renewal_date, dates.end_date
    if deadline is not None and deadline < today and (renewal is None or renewal >= today):
        found.append(
            Finding(
                DateCheck.NOTICE_DEADLINE_PASSED,
                Severity.WARN,
                "notice_deadline",
                _(
                    "The last day to give notice against the renewal, %(deadline)s, has "
                    "passed: the contract renews on %(renewal)s."
                )
                % {
                    "deadline": formats.date(deadline),
                    "renewal": formats.date(renewal) if renewal else _("its renewal date"),
                },
                facts=f"notice_deadline={deadline}; renewal_date={renewal}",
            )
        )
    if end is not None and (end - today).days <= DATES_AHEAD_DAYS:
        message = (
            _("The contract ended on %(end)s.")
            if end < today
            else _("The contract ends on %(end)s, within %(days)s days.")
        )
        found.append(
            Finding(
                DateCheck.END_DATE_NEAR,
                Severity.WARN,
                "end_date",
                message % {"end": formats.date(end), "days": DATES_AHEAD_DAYS},
                facts=f"end_date={end}",
            )
        )
    return found
