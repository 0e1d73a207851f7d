"""Writes: the budget, usage-and-bill imports, and threshold alerts sent once."""

import hashlib
from datetime import date

from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.cases.lifecycle import case_lock
from apps.core.services import tracked_create, tracked_update
from apps.costs import bill_rows, spend_rows
from apps.costs.models import Budget, CostImport, CostPeriod, SpendCharge, ThresholdAlert
from apps.costs.rules import thresholds_valid
from apps.costs.tasks import send_threshold_alerts_task

BUDGET_FIELDS = (
    "currency",
    "total_amount",
    "monthly_amount",
    "daily_amount",
    "thresholds_pct",
    "training_max_run_hours",
    "training_max_spend",
    "offer",
    "gpus_per_instance",
    "price_per_million_tokens_in",
    "price_per_million_tokens_out",
    "storage_per_gib_month",
    "cross_region_per_gib",
    "assumed_tokens_in_per_request",
)


def _check_budget(case, fields: dict) -> None:
    problems = thresholds_valid(list(fields.get("thresholds_pct") or []))
    if problems:
        raise ValidationError({"thresholds_pct": problems})
    offer = fields.get("offer")
    if offer is not None and offer.case_id != case.pk:
        raise ValidationError({"offer": _("Choose one of this case's offers.")})
    if offer is not None and offer.currency != fields.get("currency", "USD"):
        raise ValidationError(
            {
                "currency": _("The budget is in %(budget)s but the offer is priced in %(offer)s.")
                % {"budget": fields.get("currency"), "offer": offer.currency}
            }
        )
    monthly, total = fields.get("monthly_amount"), fields.get("total_amount")
    if monthly is not None and total is not None and monthly > total:
        raise ValidationError(
            {"monthly_amount": _("The monthly budget cannot exceed the total budget.")}
        )
    daily = fields.get("daily_amount")
    if daily is not None and monthly is not None and daily > monthly:
        raise ValidationError(
            {"daily_amount": _("The daily budget cannot exceed the monthly budget.")}
        )


def budget_save(
    *, actor, case, fields: dict, reason: str = "", expected_version: int | None = None
) -> Budget:
    """Create the case's budget or change it (reason and version required on a change)."""
    fields = {name: fields[name] for name in BUDGET_FIELDS if name in fields}
    fields["thresholds_pct"] = sorted(fields.get("thresholds_pct") or [])
    fields["currency"] = (fields.get("currency") or "USD").upper()
    _check_budget(case, fields)
    with transaction.atomic():
        existing = Budget.objects.select_for_update().filter(case=case).first()
        if existing is None:
            return tracked_create(
                Budget, actor=actor, reason=reason.strip() or "Budget set", case=case, **fields
            )
        return tracked_update(
            existing, actor=actor, reason=reason, fields=fields, expected_version=expected_version
        )


def _refusal(problems) -> ValidationError:
    return ValidationError({"file": [str(p) for p in problems]})


def cost_import_create(
    *,
    actor,
    case,
    raw: bytes,
    file_name: str,
    source: str,
    rows: list[dict] | None = None,
    replace: bool = False,
    note: str = "",
    today: date | None = None,
) -> CostImport:
    """Import a month-per-row file whole, or refuse it whole (``BillFileRefused``).

    ``rows`` are given for a JSON body (``raw`` is then the body as received);
    otherwise ``raw`` is parsed as CSV. A month already imported is refused
    unless ``replace``: then the earlier row is kept, marked replaced by this
    import, and the new one is in force.
    """
    budget = Budget.objects.filter(case=case).first()
    if budget is None:
        raise bill_rows.BillFileRefused(
            [
                bill_rows.RowProblem(
                    None,
                    "",
                    _("set the case's budget first: its currency and rates check the bill."),
                )
            ]
        )
    if len(raw) > bill_rows.MAX_FILE_BYTES:
        raise bill_rows.BillFileRefused([bill_rows.RowProblem(None, "", bill_rows.too_large())])
    today = today or timezone.localdate()
    if rows is None:
        rows = bill_rows.decode_csv(raw)
        usages = bill_rows.parse_rows(rows, currency=budget.currency, today=today)
    else:
        usages = bill_rows.parse_rows(rows, currency=budget.currency, today=today, first_row=1)
    sha = hashlib.sha256(raw).hexdigest()
    saved_name = None
    try:
        with transaction.atomic():
            # Imports of one case wait for each other: a month not yet imported has no
            # row to lock, so two imports of it at once would both find it free.
            case_lock(case)
            in_force = {
                p.period: p
                for p in CostPeriod.objects.select_for_update().filter(
                    case=case, superseded_at__isnull=True, period__in=[u.period for u in usages]
                )
            }
            if in_force and not replace:
                raise bill_rows.BillFileRefused(
                    [
                        bill_rows.RowProblem(
                            None,
                            "period",
                            _(
                                "%(period)s was already imported (import %(sha)s…); import "
                                "again with replace to supersede it."
                            )
                            % {"period": f"{period:%Y-%m}", "sha": p.cost_import.sha256[:12]},
                        )
                        for period, p in sorted(in_force.items())
                    ]
                )
            extension = "json" if source == CostImport.Source.API_JSON else "csv"
            # Storage.save never overwrites: a taken name gets a suffix.
            saved_name = default_storage.save(
                f"costs/{case.pk}/{sha}.{extension}", ContentFile(raw)
            )
            cost_import = tracked_create(
                CostImport,
                actor=actor,
                reason=f"Imported {len(usages)} month(s) from {file_name}",
                kind=CostImport.Kind.BILL,
                case=case,
                source=source,
                file_name=file_name[:200],
                sha256=sha,
                size_bytes=len(raw),
                storage_name=saved_name,
                row_count=len(usages),
                replaces_periods=bool(in_force),
                imported_by=actor,
                note=note[:500],
            )
            now = timezone.now()
            for period in in_force.values():
                tracked_update(
                    period,
                    actor=actor,
                    reason=f"Replaced by import {sha[:12]}…",
                    fields={"superseded_by": cost_import, "superseded_at": now},
                )
            for usage in usages:
                tracked_create(
                    CostPeriod,
                    actor=actor,
                    reason=f"Imported from {file_name}",
                    case=case,
                    cost_import=cost_import,
                    **vars(usage),
                )
            send_threshold_alerts_task.delay_on_commit(case.pk)
    except BaseException:
        if saved_name:
            default_storage.delete(saved_name)
        raise
    return cost_import


def spend_import_create(
    *,
    actor,
    case,
    raw: bytes,
    file_name: str,
    source: str,
    rows: list[dict] | None = None,
    note: str = "",
    now=None,
) -> CostImport:
    """Import a daily-spend file whole, or refuse it whole (``BillFileRefused``).

    A charge already imported (the same instant, amount and description) is refused,
    naming the import that holds it, so overlapping usage exports are not counted twice.
    """
    budget = Budget.objects.filter(case=case).first()
    if budget is None:
        raise bill_rows.BillFileRefused(
            [
                bill_rows.RowProblem(
                    None, "", _("set the case's budget first: its currency and daily budget.")
                )
            ]
        )
    if len(raw) > bill_rows.MAX_FILE_BYTES:
        raise bill_rows.BillFileRefused([bill_rows.RowProblem(None, "", bill_rows.too_large())])
    zone = timezone.get_default_timezone()
    now = now or timezone.now()
    if rows is None:
        charges = spend_rows.parse_spend_rows(
            spend_rows.decode_spend_csv(raw), currency=budget.currency, now=now, zone=zone
        )
    else:
        charges = spend_rows.parse_spend_rows(
            rows, currency=budget.currency, now=now, zone=zone, first_row=1
        )
    sha = hashlib.sha256(raw).hexdigest()
    saved_name = None
    try:
        with transaction.atomic():
            case_lock(case)  # imports of one case wait for each other
            _refuse_charges_already_imported(case, charges)
            extension = "json" if source == CostImport.Source.API_JSON else "csv"
            saved_name = default_storage.save(
                f"costs/{case.pk}/daily-{sha}.{extension}", ContentFile(raw)
            )
            cost_import = tracked_create(
                CostImport,
                actor=actor,
                reason=f"Imported {len(charges)} charge(s) of daily spend from {file_name}",
                case=case,
                kind=CostImport.Kind.DAILY,
                source=source,
                file_name=file_name[:200],
                sha256=sha,
                size_bytes=len(raw),
                storage_name=saved_name,
                row_count=len(charges),
                replaces_periods=False,
                imported_by=actor,
                note=note[:500],
            )
            for charge in charges:
                tracked_create(
                    SpendCharge,
                    actor=actor,
                    reason=f"Imported from {file_name}",
                    case=case,
                    cost_import=cost_import,
                    charged_at=charge.charged_at,
                    amount=charge.amount,
                    description=charge.description,
                )
            send_threshold_alerts_task.delay_on_commit(case.pk)
    except BaseException:
        if saved_name:
            default_storage.delete(saved_name)
        raise
    return cost_import


def _refuse_charges_already_imported(case, charges) -> None:
    if not charges:
        return
    moments = {c.charged_at for c in charges}
    held = {
        (c.charged_at, c.amount, c.description): c.cost_import.sha256
        for c in SpendCharge.objects.filter(case=case, charged_at__in=moments).select_related(
            "cost_import"
        )
    }
    problems = [
        bill_rows.RowProblem(
            c.row,
            "charged_at",
            _("this charge was already imported (import %(sha)s…).")
            % {"sha": held[(c.charged_at, c.amount, c.description)][:12]},
        )
        for c in charges
        if (c.charged_at, c.amount, c.description) in held
    ]
    if problems:
        raise bill_rows.BillFileRefused(problems)


def threshold_alerts_send(*, case=None) -> list[ThresholdAlert]:
    """Tell each case owner of every threshold crossed; once per crossing, recorded.

    Run by the daily reminders beat task (for every case) and after each import
    (for that case).
    """
    from apps.costs.selectors import cost_view  # selectors import the rules; avoid a cycle

    budgets = Budget.objects.select_related("case__owner")
    if case is not None:
        budgets = budgets.filter(case=case)
    sent = []
    for budget in budgets:
        view = cost_view(budget.case)
        assert view.reconciliation is not None  # the case has a budget, so it is reconciled
        recorded = {
            (a.scope, a.period_key, a.threshold_pct)
            for a in ThresholdAlert.objects.filter(case=budget.case)
        }
        for crossing in (*view.daily_crossings, *view.reconciliation.crossings):
            key = _period_key(crossing)
            if (crossing.scope, key, crossing.threshold) in recorded:
                continue
            alert = _alert_record(budget, crossing, key)
            if alert is not None:
                sent.append(alert)
    return sent


def _period_key(crossing) -> str:
    """Each day, each month once per threshold; the total budget once per threshold."""
    if crossing.scope == ThresholdAlert.Scope.DAY:
        return crossing.period.strftime("%Y-%m-%d")
    if crossing.scope == ThresholdAlert.Scope.MONTH:
        return crossing.period.strftime("%Y-%m")
    return ""


def _alert_record(budget, crossing, key: str) -> ThresholdAlert | None:
    owner = budget.case.owner
    recipients = [owner.email] if owner.email else []
    try:
        with transaction.atomic():
            alert = tracked_create(
                ThresholdAlert,
                actor=None,
                reason=f"{crossing.threshold} % of the {crossing.scope} budget reached",
                case=budget.case,
                scope=crossing.scope,
                period=crossing.period,
                period_key=key,
                threshold_pct=crossing.threshold,
                spent=crossing.spent,
                limit=crossing.limit,
                recipients=recipients,
            )
    except (IntegrityError, ValidationError):
        return None  # another worker recorded it first
    if recipients:
        _alert_mail(budget, alert, recipients)
    return alert


def _alert_mail(budget, alert: ThresholdAlert, recipients: list[str]) -> None:
    from django.conf import settings

    scope = alert.get_scope_display().lower()
    subject = _("Budget alert: %(pct)s %% of the %(scope)s reached — %(case)s") % {
        "pct": alert.threshold_pct,
        "scope": scope,
        "case": budget.case,
    }
    send_mail(
        subject=subject[:200],
        message=render_to_string(
            "costs/email/threshold_alert.txt",
            {
                "alert": alert,
                "budget": budget,
                "scope": scope,
                "organisation": settings.ORGANISATION_NAME,
                "time_zone": settings.TIME_ZONE,
                "site_url": settings.SITE_URL,
            },
        ),
        from_email=None,
        recipient_list=recipients,
    )
