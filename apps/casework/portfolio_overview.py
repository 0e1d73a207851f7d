"""The portfolio across cases, for procurement, finance and auditors: where the cases
stand and how long they take, what is committed and spent against the budgets, how
concentrated the commitments are on vendors and countries, what expires soon, and the
open findings. Only the cases the reader may see are counted.

Counts are aggregated in the database and the rest read in a fixed number of queries
whatever the number of cases (``tests/test_portfolio.py`` pins it); the contract values
and the median are worked out here from the rows read.

The open findings need each open case's areas' rules (``apps.casework.registers``), which
cost far more than the rest. Each case's counts are kept in the cache, for the day and the
deployed code and settings, beside the case's ``StandingMark`` as read with the case,
before its records: every tracked write touching the case, or a record every case reads,
raises that mark in its own transaction (``apps.casework.standing``). A case whose mark
moved since it was counted is counted again; the others are read back. So a count is
never older than the last tracked write, and a write costs the next reader one case.

Money is never summed across currencies: the product records no exchange rate, so every
amount is grouped by its currency. The committed spend of a case is the contract value of
its chosen offer (the offer the decision in force approved, else the one its budget
picked, as the case's costs page reads it), in the offer's currency; the budget and the
actual spend (the vendors' bills as imported, months replaced by a later import left
out) are in the budget's currency.
"""

from __future__ import annotations

import hashlib
import json
import logging
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from functools import cached_property
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, OuterRef, Q, Subquery, Sum
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.approvals.findings import SEVERITY_LABELS, Severity
from apps.approvals.models import Approval, FindingAcceptance
from apps.cases.models import ProcurementCase, StandingMark
from apps.cases.selectors import case_list_for
from apps.casework.registers import OPEN_STATUSES, area_registers
from apps.casework.standing import code_fingerprint, settings_fingerprint
from apps.contracts.models import RedFlagWaiver
from apps.contracts.selectors import waiver_expires_on
from apps.core.roles import Role
from apps.costs.models import Budget, CostPeriod
from apps.costs.rules import OfferTerms, committed_spend
from apps.offers.models import Offer

# Who opens the portfolio (docs/roles.md): those who answer for the money and the
# process across cases; the legal reviewer and the tech lead work case by case.
PORTFOLIO_ROLES: tuple[str, ...] = (Role.PROCUREMENT, Role.FINANCE, Role.AUDITOR, Role.ADMIN)

# Days since a case was opened, by bucket: (first day, last day or None for "and more").
AGE_BUCKETS: tuple[tuple[int, int | None], ...] = ((0, 30), (31, 90), (91, 180), (181, None))
# Waivers and acceptances that run out within so many days, by bucket.
EXPIRY_BUCKETS: tuple[int, ...] = (30, 60, 90)
# How many of the slowest decided cases are named.
SLOWEST_SHOWN = 5
# The severities of the findings counted (an informing finding is never open).
OPEN_SEVERITIES = (Severity.BLOCKS, Severity.NEEDS_ACCEPTANCE)
SECONDS_PER_DAY = Decimal(86400)
# The open findings' counts of each case, kept between the writes that touch it.
FINDINGS_FORMAT = "portfolio-findings/1"
FINDINGS_KEEP_SECONDS = 24 * 3600

logger = logging.getLogger(__name__)


def may_see_portfolio(roles) -> bool:
    return bool(set(roles) & set(PORTFOLIO_ROLES))


def _url(name: str, query: dict | None = None, args: list | None = None) -> str:
    url = reverse(name, args=args or [])
    return f"{url}?{urlencode(query)}" if query else url


def case_list_url(**query) -> str:
    return _url("cases:list", {k: v for k, v in query.items() if v not in (None, "")})


# --- Cases by stage and age ------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One number of the page and the list that shows its rows."""

    count: int
    url: str


@dataclass(frozen=True)
class StageRow:
    status: str
    label: str
    total: Cell
    ages: list[Cell]


def age_label(low: int, high: int | None) -> str:
    if high is None:
        return _("%(low)s days and more") % {"low": low}
    return _("%(low)s–%(high)s days") % {"low": low, "high": high}


def _start_of(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def stages(visible, today: date) -> list[StageRow]:
    """Each status with its cases, and by days since opened (1 query)."""
    buckets = {}
    for n, (low, high) in enumerate(AGE_BUCKETS):
        # Opened on a local day from ``today - high`` to ``today - low``.
        opened = Q(created_at__lt=_start_of(today - timedelta(days=low - 1)))
        if high is not None:
            opened &= Q(created_at__gte=_start_of(today - timedelta(days=high)))
        buckets[f"age{n}"] = Count("pk", filter=opened)
    counted = {
        row["status"]: row
        for row in visible.order_by().values("status").annotate(total=Count("pk"), **buckets)
    }
    rows = []
    for status, label in ProcurementCase.Status.choices:
        row = counted.get(status, {})
        ages = []
        for n, (low, high) in enumerate(AGE_BUCKETS):
            after = None if high is None else today - timedelta(days=high)
            before = today - timedelta(days=low)
            ages.append(
                Cell(
                    row.get(f"age{n}", 0),
                    case_list_url(status=status, opened_after=after, opened_before=before),
                )
            )
        rows.append(
            StageRow(
                status, str(label), Cell(row.get("total", 0), case_list_url(status=status)), ages
            )
        )
    return rows


# --- Cycle time --------------------------------------------------------------------------

DECIDED = (ProcurementCase.Status.APPROVED, ProcurementCase.Status.ACCEPTED)


@dataclass(frozen=True)
class CaseTime:
    case_id: int
    name: str
    days: Decimal
    url: str


@dataclass(frozen=True)
class CycleTime:
    decided: list[StageRow]  # the decided statuses, each with its count and list
    median_days: Decimal | None
    slowest: list[CaseTime]

    @property
    def count(self) -> int:
        return sum(row.total.count for row in self.decided)


def _decisions(visible) -> dict[int, dict]:
    """The decision in force that approved an offer, per visible case (1 query)."""
    found: dict[int, dict] = {}
    for row in (
        Approval.objects.filter(
            case__in=visible.values("pk"),
            decision=Approval.Decision.APPROVED,
            superseded_at__isnull=True,
            offer__isnull=False,
        )
        .order_by("-decided_at", "-pk")
        .values(
            "case_id", "offer_id", "decided_at", "case__name", "case__status", "case__created_at"
        )
    ):
        found.setdefault(row["case_id"], dict(row))
    return found


def cycle_time(decisions: dict[int, dict], stage_rows: list[StageRow]) -> CycleTime:
    """From opening to the decision in force, for the decided cases."""
    times = [
        CaseTime(
            case_id,
            row["case__name"],
            Decimal((row["decided_at"] - row["case__created_at"]).total_seconds())
            / SECONDS_PER_DAY,
            _url("cases:detail", args=[case_id]),
        )
        for case_id, row in decisions.items()
        if row["case__status"] in DECIDED
    ]
    times.sort(key=lambda t: (-t.days, t.case_id))
    decided = [row for row in stage_rows if row.status in DECIDED]
    median = statistics.median([t.days for t in times]) if times else None
    return CycleTime(decided, median, times[:SLOWEST_SHOWN])


# --- Spend -------------------------------------------------------------------------------


@dataclass
class CaseSpend:
    """One case's chosen offer, committed spend, budget and bills."""

    case_id: int
    name: str
    offer: dict | None  # the chosen offer's values, with its vendor's
    source: str  # "approved", "picked" or ""
    decided_at: datetime | None
    committed: Decimal | None = None
    missing: tuple[str, ...] = ()
    budget_currency: str = ""
    budget_total: Decimal | None = None
    actual: dict[date, Decimal] = field(default_factory=dict)

    @property
    def vendor_id(self) -> int | None:
        return self.offer["vendor_id"] if self.offer else None

    @property
    def currency(self) -> str:
        return self.offer["currency"] if self.offer else ""

    @property
    def cards(self) -> int:
        return self.offer["accelerator_count"] if self.offer else 0


OFFER_VALUES = (
    "pk",
    "case_id",
    "vendor_id",
    "vendor__name",
    "vendor__jurisdiction",
    "accelerator_count",
    "unit_price",
    "currency",
    "billing_basis",
    "prepayment_ratio",
    "contract_term_months",
)


def case_spends(visible, decisions: dict[int, dict]) -> list[CaseSpend]:
    """Every visible case with a chosen offer, a budget or bills (3 queries)."""
    names = dict(visible.order_by().values_list("pk", "name"))
    budgets = {
        row["case_id"]: row
        for row in Budget.objects.filter(case__in=visible.values("pk")).values(
            "case_id", "currency", "total_amount", "offer_id"
        )
    }
    chosen = {pk: row["offer_id"] for pk, row in decisions.items()}
    for pk, row in budgets.items():
        if pk not in chosen and row["offer_id"]:
            chosen[pk] = row["offer_id"]
    offers = {
        row["pk"]: row
        for row in Offer.objects.filter(pk__in=list(chosen.values())).values(*OFFER_VALUES)
    }
    actual: dict[int, dict[date, Decimal]] = defaultdict(dict)
    for billed in (
        CostPeriod.objects.filter(case__in=visible.values("pk"), superseded_at__isnull=True)
        .order_by()
        .values("case_id", "period")
        .annotate(amount=Sum("amount"))
    ):
        actual[billed["case_id"]][billed["period"]] = billed["amount"]
    spends = []
    for pk in sorted(set(chosen) | set(budgets) | set(actual)):
        offer = offers.get(chosen.get(pk))
        decision = decisions.get(pk)
        spend = CaseSpend(
            case_id=pk,
            name=names.get(pk, ""),
            offer=offer,
            source="approved" if decision else ("picked" if offer else ""),
            decided_at=decision["decided_at"] if decision else None,
            actual=dict(actual.get(pk, {})),
        )
        if offer is not None:
            value = committed_spend(
                OfferTerms(
                    billing_basis=offer["billing_basis"],
                    unit_price=offer["unit_price"],
                    gpu_count=offer["accelerator_count"],
                    term_months=offer["contract_term_months"],
                    prepayment_ratio=offer["prepayment_ratio"],
                    currency=offer["currency"],
                )
            )
            spend.committed, spend.missing = value.contract_value, value.missing
        budget = budgets.get(pk)
        if budget is not None:
            spend.budget_currency = budget["currency"]
            spend.budget_total = budget["total_amount"]
        spends.append(spend)
    return spends


@dataclass
class SpendRow:
    """Committed, budget and actual spend of a group of cases, in one currency."""

    key: str  # the vendor's name, a month, a country
    currency: str
    url: str = ""
    cases: set[int] = field(default_factory=set)
    committed: Decimal = Decimal(0)
    budget: Decimal = Decimal(0)
    actual: Decimal = Decimal(0)
    cards: int = 0
    committed_share: Decimal | None = None
    cards_share: Decimal | None = None

    @property
    def case_count(self) -> int:
        return len(self.cases)

    @property
    def committed_of_budget(self) -> Decimal | None:
        return self.committed / self.budget if self.budget else None

    @property
    def actual_of_budget(self) -> Decimal | None:
        return self.actual / self.budget if self.budget else None


def _chosen_key(spend: CaseSpend) -> tuple[str, str]:
    """The vendor row a case counts under: (its name, the case list of its cases)."""
    if spend.offer is None:
        return str(NO_OFFER), ""
    return spend.offer["vendor__name"], case_list_url(vendor=spend.vendor_id)


NO_OFFER = gettext_lazy("No offer chosen yet")
NOT_APPROVED = gettext_lazy("Chosen, not approved yet")


def by_vendor(spends: list[CaseSpend]) -> list[SpendRow]:
    """Per vendor and currency: committed in the offer's currency, budget and actual in
    the budget's (a case whose two differ counts in two rows, never converted)."""
    rows: dict[tuple, SpendRow] = {}
    for spend in spends:
        name, url = _chosen_key(spend)
        if spend.offer is not None:
            row = rows.setdefault((name, spend.currency), SpendRow(name, spend.currency, url))
            row.cases.add(spend.case_id)
            row.committed += spend.committed or 0
            row.cards += spend.cards
        if spend.budget_currency:
            currency = spend.budget_currency
            row = rows.setdefault((name, currency), SpendRow(name, currency, url))
            row.cases.add(spend.case_id)
            row.budget += spend.budget_total or 0
            row.actual += sum(spend.actual.values(), Decimal(0))
    return sorted(rows.values(), key=lambda r: (r.currency, -r.committed, r.key))


def by_month(spends: list[CaseSpend]) -> list[SpendRow]:
    """Per month and currency: contracts committed by the month of their approval (a chosen
    offer not yet approved apart), and the bills of the month."""
    rows: dict[tuple, SpendRow] = {}
    for spend in spends:
        if spend.offer is not None and spend.committed is not None:
            month = (
                f"{timezone.localtime(spend.decided_at):%Y-%m}"
                if spend.decided_at
                else str(NOT_APPROVED)
            )
            row = rows.setdefault((month, spend.currency), SpendRow(month, spend.currency))
            row.cases.add(spend.case_id)
            row.committed += spend.committed
        if spend.budget_currency:
            for period, amount in spend.actual.items():
                month = f"{period:%Y-%m}"
                currency = spend.budget_currency
                row = rows.setdefault((month, currency), SpendRow(month, currency))
                row.cases.add(spend.case_id)
                row.actual += amount
    return sorted(rows.values(), key=lambda r: (r.key, r.currency))


def concentration(spends: list[CaseSpend], *, by: str) -> list[SpendRow]:
    """The chosen offers per vendor (``by="vendor"``) or per vendor jurisdiction
    (``by="country"``) and currency: their cards and committed spend, each with its share
    (cards of all cards; spend of the spend in the same currency)."""
    rows: dict[tuple, SpendRow] = {}
    for spend in spends:
        offer = spend.offer
        if offer is None:
            continue
        if by == "vendor":
            key, url = offer["vendor__name"], case_list_url(vendor=offer["vendor_id"])
        else:
            key = offer["vendor__jurisdiction"]
            url = case_list_url(country=key)
        row = rows.setdefault((key, spend.currency), SpendRow(key, spend.currency, url))
        row.cases.add(spend.case_id)
        row.cards += spend.cards
        row.committed += spend.committed or 0
    cards = sum(row.cards for row in rows.values())
    per_currency: dict[str, Decimal] = defaultdict(Decimal)
    for row in rows.values():
        per_currency[row.currency] += row.committed
    for row in rows.values():
        row.cards_share = Decimal(row.cards) / cards if cards else None
        total = per_currency[row.currency]
        row.committed_share = row.committed / total if total else None
    return sorted(rows.values(), key=lambda r: (-r.cards, r.key, r.currency))


# --- Expiring waivers and acceptances ----------------------------------------------------


@dataclass(frozen=True)
class Expiring:
    kind: str
    case_id: int
    case_name: str
    subject: str
    expires_on: date
    days_left: int
    bucket: int  # the first of EXPIRY_BUCKETS it falls within
    url: str


def _bucket(days_left: int) -> int:
    return next(b for b in EXPIRY_BUCKETS if days_left <= b)


def expiring(visible, today: date) -> list[Expiring]:
    """Red-flag waivers in force and findings' acceptances in force that run out within
    the last bucket's days, soonest first (2 queries)."""
    horizon = today + timedelta(days=EXPIRY_BUCKETS[-1])
    found: list[Expiring] = []
    # A waiver recorded before expiry dates runs out a fixed time after it was granted:
    # read those granted late enough to be in force still, and judge each here.
    waivers = (
        RedFlagWaiver.objects.filter(
            item__checklist__offer__case__in=visible.values("pk"), lapsed_at__isnull=True
        )
        .filter(
            Q(expires_on__gte=today, expires_on__lte=horizon)
            | Q(expires_on__isnull=True, waived_at__gte=_start_of(today - timedelta(days=366)))
        )
        .select_related("item__checklist__offer__case", "item__checklist__offer__vendor")
    )
    for waiver in waivers:
        item = waiver.item
        ends = waiver_expires_on(waiver)
        holds = item.status == waiver.waived_status
        confirmed = waiver.confirmed_at is not None or not item.high_severity
        if not (holds and confirmed and today <= ends <= horizon):
            continue
        offer = item.checklist.offer
        found.append(
            Expiring(
                kind=_("Red-flag waiver"),
                case_id=offer.case_id,
                case_name=offer.case.name,
                subject=f"{offer.vendor.name}: {item.number}. {item.title}",
                expires_on=ends,
                days_left=(ends - today).days,
                bucket=_bucket((ends - today).days),
                # The case's clause comparison, which every reviewing role reads (the
                # checklist's own page is the legal reviewer's form).
                url=_url("contracts:comparison", args=[offer.case_id]),
            )
        )
    acceptances = FindingAcceptance.objects.filter(
        case__in=visible.values("pk"),
        withdrawn_at__isnull=True,
        expired_at__isnull=True,
        expires_on__gte=today,
        expires_on__lte=horizon,
    ).select_related("case", "offer__vendor")
    for acceptance in acceptances:
        days = (acceptance.expires_on - today).days
        about = acceptance.offer.vendor.name if acceptance.offer else _("The whole case")
        role = str(Role(acceptance.role).label) if acceptance.role in Role.values else ""
        found.append(
            Expiring(
                kind=_("Accepted finding"),
                case_id=acceptance.case_id,
                case_name=acceptance.case.name,
                subject=_("%(about)s: %(finding)s (accepted as %(role)s)")
                % {"about": about, "finding": acceptance.message, "role": role},
                expires_on=acceptance.expires_on,
                days_left=days,
                bucket=_bucket(days),
                url=_url("approvals:findings", args=[acceptance.case_id]),
            )
        )
    return sorted(found, key=lambda e: (e.expires_on, e.kind, e.case_id, e.subject))


@dataclass(frozen=True)
class ExpiryCount:
    kind: str
    counts: list[Cell]  # per bucket: its count and its place on the page


def expiry_counts(rows: list[Expiring]) -> list[ExpiryCount]:
    kinds = (_("Red-flag waiver"), _("Accepted finding"))
    return [
        ExpiryCount(
            kind,
            [
                Cell(
                    sum(1 for row in rows if row.kind == kind and row.bucket == bucket),
                    f"#expiring-{bucket}",
                )
                for bucket in EXPIRY_BUCKETS
            ],
        )
        for kind in kinds
    ]


def bucket_label(bucket: int) -> str:
    earlier = [b for b in EXPIRY_BUCKETS if b < bucket]
    low = earlier[-1] + 1 if earlier else 0
    return _("in %(low)s–%(high)s days") % {"low": low, "high": bucket}


# --- Open findings -----------------------------------------------------------------------


@dataclass(frozen=True)
class FindingsRow:
    case_id: int
    name: str
    numbers: tuple[int, ...]  # per severity of OPEN_SEVERITIES

    @cached_property
    def counts(self) -> list[Cell]:
        """Each number with the case's findings page showing what it counts."""
        url = reverse("approvals:findings", args=[self.case_id])
        return [
            Cell(count, f"{url}?{query}")
            for count, query in zip(self.numbers, _SEVERITY_QUERIES, strict=True)
        ]


_SEVERITY_QUERIES = tuple(urlencode({"open": severity.value}) for severity in OPEN_SEVERITIES)


@dataclass(frozen=True)
class OpenCase:
    """An open case as its findings are counted: its mark is the last tracked write
    touching it or every case, read with it, before the records the counts come from."""

    pk: int
    name: str
    created_at: datetime | None
    mark: int

    @property
    def identity(self) -> tuple[int, str]:
        # A case deleted and another made with its id is another case: its creation tells.
        return self.mark, self.created_at.isoformat() if self.created_at else ""


def _open_cases(visible) -> list[OpenCase]:
    """The visible open cases, by name, each with its mark (1 query)."""
    marks = StandingMark.objects.values("seq")
    rows = (
        visible.filter(status__in=OPEN_STATUSES)
        .order_by("name", "pk")
        .annotate(
            own_mark=Subquery(marks.filter(key=OuterRef("pk"))),
            every_mark=Subquery(marks.filter(key=StandingMark.ALL)),
        )
        .values_list("pk", "name", "created_at", "own_mark", "every_mark")
    )
    return [
        OpenCase(pk, name, created_at, max(own or 0, every or 0))
        for pk, name, created_at, own, every in rows
    ]


def _findings_key(today: date) -> str:
    """Where the cases' counts are kept: one entry per day, deployed code and settings."""
    parts = [FINDINGS_FORMAT, today.isoformat(), code_fingerprint(), settings_fingerprint()]
    digest = hashlib.sha256(json.dumps(parts).encode()).hexdigest()
    return f"{FINDINGS_FORMAT}:{digest}"


def _counted(cases: list[OpenCase], today: date) -> dict[int, tuple[int, ...]]:
    """Each case's open findings per severity of ``OPEN_SEVERITIES``, worked out by the
    areas' rules (``apps.casework.registers``) for the cases a tracked write touched since
    they were last counted, and read back for the others (see the module's docstring)."""
    if not cases:
        return {}
    key = _findings_key(today)
    kept_counts: dict = {}
    if settings.CASE_STANDING_STORED:
        try:
            kept_counts = cache.get(key) or {}
        except Exception:  # the cache is down: every case is counted afresh
            logger.warning("The portfolio's kept findings could not be read", exc_info=True)
    counts: dict[int, tuple[int, ...]] = {}
    stale: dict[int, OpenCase] = {}
    for case in cases:
        found = kept_counts.get(case.pk)
        if found is not None and found[0] == case.identity:
            counts[case.pk] = found[1]
        else:
            stale[case.pk] = case
    if not stale:
        return counts
    records = list(ProcurementCase.objects.filter(pk__in=list(stale)).order_by("pk"))
    for found in area_registers(records, today=today):
        pk = found.case.pk
        counts[pk] = tuple(
            sum(1 for e in found.entries if e.blocking and e.rule.severity == severity)
            for severity in OPEN_SEVERITIES
        )
        kept_counts[pk] = (stale[pk].identity, counts[pk])
    if settings.CASE_STANDING_STORED:
        try:
            cache.set(key, kept_counts, FINDINGS_KEEP_SECONDS)
        except Exception:  # not kept: only speed
            logger.warning("The portfolio's findings could not be kept", exc_info=True)
    return counts


def open_findings(visible, today: date) -> list[FindingsRow]:
    """The open cases' open findings of the areas' rules, per case and severity, in a fixed
    number of queries (``apps.casework.registers``); a gate's own finding (a step not yet
    taken) is on the case's approval page instead. Each case's counts are kept between the
    tracked writes that touch it (see the module's docstring)."""
    cases = _open_cases(visible)
    counted = _counted(cases, today)
    return [
        FindingsRow(case.pk, case.name, counted[case.pk])
        for case in cases
        if any(counted.get(case.pk, ()))
    ]


# --- The whole page ----------------------------------------------------------------------

FINDINGS_SHOWN = 25


@dataclass
class Portfolio:
    today: date
    stages: list[StageRow]
    cycle: CycleTime
    spends: list[CaseSpend]
    vendors: list[SpendRow]
    months: list[SpendRow]
    vendor_share: list[SpendRow]
    country_share: list[SpendRow]
    expiring: list[Expiring]
    findings: list[FindingsRow]

    @property
    def case_count(self) -> int:
        return sum(row.total.count for row in self.stages)

    @property
    def age_labels(self) -> list[str]:
        return [age_label(low, high) for low, high in AGE_BUCKETS]

    @property
    def bucket_labels(self) -> list[str]:
        return [bucket_label(bucket) for bucket in EXPIRY_BUCKETS]

    @property
    def expiry_counts(self) -> list[ExpiryCount]:
        return expiry_counts(self.expiring)

    @property
    def concentration_tables(self) -> list[tuple[str, str, list[SpendRow], str]]:
        """(heading, first column, rows, the CSV's table) for vendors, then countries."""
        return [
            (_("By vendor"), _("Vendor"), self.vendor_share, "vendor-share"),
            (_("By country"), _("Country"), self.country_share, "country-share"),
        ]

    @property
    def expiring_by_bucket(self) -> list[tuple[int, str, list[Expiring]]]:
        return [
            (bucket, bucket_label(bucket), [row for row in self.expiring if row.bucket == bucket])
            for bucket in EXPIRY_BUCKETS
        ]

    @property
    def not_computable(self) -> list[CaseSpend]:
        """Cases whose chosen offer lacks a term the contract value needs."""
        return [s for s in self.spends if s.offer is not None and s.committed is None]

    @property
    def has_actuals(self) -> bool:
        return any(spend.actual for spend in self.spends)

    @property
    def severity_labels(self) -> list[str]:
        return [str(SEVERITY_LABELS[s]) for s in OPEN_SEVERITIES]

    @property
    def findings_shown(self) -> list[FindingsRow]:
        """The cases with the most open findings, the weightiest first: the page shows
        ``FINDINGS_SHOWN`` of them (the CSV lists every case)."""
        ranked = sorted(
            self.findings, key=lambda row: ([-count for count in row.numbers], row.name)
        )
        return ranked[:FINDINGS_SHOWN]

    @property
    def findings_more(self) -> int:
        return max(0, len(self.findings) - FINDINGS_SHOWN)

    @property
    def findings_totals(self) -> list[int]:
        return [sum(row.numbers[n] for row in self.findings) for n in range(len(OPEN_SEVERITIES))]


def portfolio_for(actor, *, today: date | None = None) -> Portfolio:
    """The portfolio of the cases ``actor`` may see, in a fixed number of queries."""
    today = today or timezone.localdate()
    # The visibility rule of the case list, without its count of offers.
    visible = ProcurementCase.objects.filter(pk__in=case_list_for(actor).values("pk"))
    stage_rows = stages(visible, today)
    decisions = _decisions(visible)
    spends = case_spends(visible, decisions)
    return Portfolio(
        today=today,
        stages=stage_rows,
        cycle=cycle_time(decisions, stage_rows),
        spends=spends,
        vendors=by_vendor(spends),
        months=by_month(spends),
        vendor_share=concentration(spends, by="vendor"),
        country_share=concentration(spends, by="country"),
        expiring=expiring(visible, today),
        findings=open_findings(visible, today),
    )
