"""REST API: a case's budget, usage-and-bill imports, periods and reconciliation."""

from collections.abc import Mapping
from typing import Any

from django.http import Http404
from django.urls import URLPattern, path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.views import APIView

from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_get_for
from apps.core.api import version_edited
from apps.core.bounds import CARDS_PER_NODE_MAX, CURRENCY_CHOICES
from apps.core.parsers import CSVBodyParser, JSONParser
from apps.core.permissions import RolePermission
from apps.core.uploads import api_declared_over, refused_unread
from apps.costs import services
from apps.costs.bill_rows import MAX_FILE_BYTES, MAX_MONEY, BillFileRefused
from apps.costs.models import TOKENS_PER_REQUEST_MAX, CostImport, CostPeriod
from apps.costs.rules import UnitCosts
from apps.costs.selectors import CostView, budget_of, cost_imports_of, cost_view
from apps.offers.models import Offer


def _money(**kwargs: Any) -> serializers.DecimalField:
    return serializers.DecimalField(max_digits=16, decimal_places=2, **kwargs)


def _decimal_out(*, places: int = 2) -> serializers.DecimalField:
    # Computed figures (sums, products, shares) have no column to fit: a bound on their
    # digits only turned large but valid inputs into a 500 when the answer was written.
    return serializers.DecimalField(max_digits=None, decimal_places=places, allow_null=True)


def _rate(**kwargs: Any) -> serializers.DecimalField:
    return serializers.DecimalField(
        max_digits=14, decimal_places=6, min_value=0, required=False, allow_null=True, **kwargs
    )


class BudgetWriteSerializer(serializers.Serializer):
    currency = serializers.ChoiceField(
        choices=CURRENCY_CHOICES, default="USD", help_text="An ISO 4217 code, e.g. USD."
    )
    total_amount = _money(min_value=0, max_value=MAX_MONEY)
    monthly_amount = _money(min_value=0, max_value=MAX_MONEY)
    daily_amount = _money(
        min_value=0,
        max_value=MAX_MONEY,
        required=False,
        allow_null=True,
        help_text="Judged against each day's spend from the daily-spend imports; null: off.",
    )
    thresholds_pct = serializers.ListField(
        child=serializers.IntegerField(max_value=200),
        max_length=20,
        default=[70, 90, 100],
        help_text="Percent, 1–200.",
    )
    training_max_run_hours = serializers.DecimalField(
        max_digits=10, decimal_places=2, min_value=0, required=False, allow_null=True
    )
    training_max_spend = _money(min_value=0, max_value=MAX_MONEY, required=False, allow_null=True)
    offer = serializers.IntegerField(
        required=False, allow_null=True, help_text="Offer used until one is approved."
    )
    gpus_per_instance = serializers.IntegerField(
        min_value=1, max_value=CARDS_PER_NODE_MAX, default=1
    )
    price_per_million_tokens_in = _rate()
    price_per_million_tokens_out = _rate()
    storage_per_gib_month = _rate()
    cross_region_per_gib = _rate()
    assumed_tokens_in_per_request = serializers.IntegerField(
        min_value=1, max_value=TOKENS_PER_REQUEST_MAX, required=False, allow_null=True
    )
    version = serializers.IntegerField(
        required=False, help_text="Version edited; a stale version is refused with 409."
    )
    change_reason = serializers.CharField(
        required=False, allow_blank=True, max_length=500, help_text="Required on edits."
    )


class CommittedSerializer(serializers.Serializer):
    contract_value = _decimal_out()
    prepayment = _decimal_out()
    prepayment_financing = _decimal_out()
    per_month = _decimal_out()
    effective_cost_per_gpu_hour = _decimal_out(places=4)
    explanation = serializers.ListField(child=serializers.CharField())
    missing = serializers.ListField(child=serializers.CharField())


class BudgetReadSerializer(BudgetWriteSerializer):
    case = serializers.IntegerField()
    chosen_offer = serializers.IntegerField(allow_null=True)
    chosen_offer_source = serializers.CharField(help_text="approved, picked, or empty.")
    committed = CommittedSerializer(allow_null=True)
    committed_over_budget = serializers.BooleanField()
    guardrail_problems = serializers.ListField(child=serializers.CharField())

    class Meta:
        ref_name = "CostBudgetRead"


class ImportSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    # The stubs see DRF's Field.source here; the serializer metaclass takes declared
    # fields off the class, so this is a field named "source", shadowing nothing.
    source = serializers.CharField()  # type: ignore[assignment]
    file_name = serializers.CharField()
    sha256 = serializers.CharField()
    size_bytes = serializers.IntegerField()
    row_count = serializers.IntegerField()
    replaces_periods = serializers.BooleanField()
    kind = serializers.CharField(
        allow_null=True, help_text="bill or daily; null: a bill imported before daily spend."
    )
    imported_by = serializers.CharField()
    note = serializers.CharField()
    created_at = serializers.DateTimeField()


class PeriodSerializer(serializers.Serializer):
    period = serializers.CharField(help_text="YYYY-MM")
    instance_hours = serializers.DecimalField(max_digits=14, decimal_places=4)
    gpu_hours = serializers.DecimalField(max_digits=14, decimal_places=4)
    tokens_in = serializers.IntegerField()
    tokens_out = serializers.IntegerField()
    requests = serializers.IntegerField(allow_null=True)
    storage_gib_months = serializers.DecimalField(max_digits=14, decimal_places=4)
    cross_region_gib = serializers.DecimalField(max_digits=14, decimal_places=4)
    amount = _money()
    training_job_hours_max = serializers.DecimalField(
        max_digits=14, decimal_places=4, allow_null=True, help_text="The longest training job."
    )
    training_job_spend_max = _money(allow_null=True, help_text="The costliest training job.")
    import_sha256 = serializers.CharField()
    superseded_at = serializers.DateTimeField(allow_null=True)


class CauseSerializer(serializers.Serializer):
    key = serializers.CharField()
    detail = serializers.CharField()
    amount = _decimal_out()


class ReconciledPeriodSerializer(serializers.Serializer):
    period = serializers.CharField()
    billed = _decimal_out()
    expected = _decimal_out()
    expected_lines = serializers.ListField(child=serializers.CharField())
    difference = _decimal_out()
    causes = CauseSerializer(many=True)
    cumulative = _decimal_out()
    month_share = _decimal_out(places=4)
    cumulative_share = _decimal_out(places=4)
    month_crossed = serializers.ListField(child=serializers.IntegerField())
    cumulative_crossed = serializers.ListField(child=serializers.IntegerField())


class CrossingSerializer(serializers.Serializer):
    scope = serializers.CharField()
    period = serializers.CharField()
    threshold = serializers.IntegerField()
    spent = _decimal_out()
    limit = _decimal_out()


class DaySpendSerializer(serializers.Serializer):
    day = serializers.CharField(help_text="YYYY-MM-DD, in the server's time zone")
    spent = _decimal_out()
    share = _decimal_out(places=4)
    percent = _decimal_out(places=1)
    crossed = serializers.ListField(child=serializers.IntegerField())


class DailySpendSerializer(serializers.Serializer):
    case = serializers.IntegerField()
    currency = serializers.CharField()
    daily_amount = _decimal_out()
    thresholds_pct = serializers.ListField(child=serializers.IntegerField())
    time_zone = serializers.CharField(help_text="Where each day starts and ends.")
    days = DaySpendSerializer(many=True)
    crossings = CrossingSerializer(many=True)


class BreachSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="The finding of the register it raises.")
    key = serializers.CharField(help_text="idle, training_max_run_hours or training_max_spend.")
    message = serializers.CharField()
    periods = serializers.ListField(child=serializers.CharField(help_text="YYYY-MM"))


class ThroughputSerializer(serializers.Serializer):
    safe_concurrency = serializers.IntegerField(
        allow_null=True, help_text="null: no level of the load test holds the service levels."
    )
    requests_per_s = _decimal_out(places=4)
    output_tokens_per_s = _decimal_out(places=4)
    rate_rps = serializers.DecimalField(
        max_digits=None,
        decimal_places=4,
        allow_null=True,
        help_text="The open-loop rate search's highest request rate within the service levels, "
        "whose goodput the unit costs divide by; null: the load test's safe level is read.",
    )
    # A field named "source" (see ImportSerializer): the load test read, in words.
    source = serializers.CharField()  # type: ignore[assignment]


class UnitCostSerializer(serializers.Serializer):
    key = serializers.CharField(
        help_text="per_request, per_million_tokens (output tokens, at the safe level), "
        "per_request_served, per_million_tokens_served (from the bills' own counts)."
    )
    value = _decimal_out(places=6)
    computable = serializers.BooleanField()
    working = serializers.CharField(help_text="The formula with its numbers, or why not.")


class UnitCostsSerializer(serializers.Serializer):
    first_period = serializers.CharField(allow_null=True)
    last_period = serializers.CharField(allow_null=True)
    spend = _decimal_out()
    seconds = serializers.IntegerField()
    throughput = ThroughputSerializer(allow_null=True)
    costs = UnitCostSerializer(many=True)


class ReconciliationSerializer(serializers.Serializer):
    case = serializers.IntegerField()
    currency = serializers.CharField()
    billed_total = _decimal_out()
    expected_total = _decimal_out()
    periods = ReconciledPeriodSerializer(many=True)
    crossings = CrossingSerializer(many=True)
    guardrail_breaches = BreachSerializer(many=True)
    unit_costs = UnitCostsSerializer()


def budget_payload(case: ProcurementCase) -> dict:
    view = cost_view(case)
    budget = view.budget
    assert budget is not None  # asked for only once the budget exists (else a 404)
    committed = view.committed
    return {
        "case": case.pk,
        "version": budget.version,
        **{name: getattr(budget, name) for name in services.BUDGET_FIELDS if name != "offer"},
        "offer": budget.offer_id,
        "chosen_offer": view.offer.pk if view.offer else None,
        "chosen_offer_source": view.offer_source,
        "committed": None
        if committed is None
        else {**vars(committed), "explanation": list(committed.explanation)},
        "committed_over_budget": view.committed_over_budget,
        "guardrail_problems": view.guardrail_problems,
    }


def import_payload(cost_import: CostImport) -> dict:
    return {
        **{name: getattr(cost_import, name) for name in ImportSerializer().get_fields()},
        "imported_by": cost_import.imported_by.get_username(),
    }


def period_payload(period: CostPeriod) -> dict:
    return {
        "period": f"{period.period:%Y-%m}",
        **{
            name: getattr(period, name)
            for name in (
                "instance_hours",
                "gpu_hours",
                "tokens_in",
                "tokens_out",
                "requests",
                "storage_gib_months",
                "cross_region_gib",
                "amount",
                "training_job_hours_max",
                "training_job_spend_max",
                "superseded_at",
            )
        },
        "import_sha256": period.cost_import.sha256,
    }


def reconciliation_payload(view: CostView) -> dict:
    """The reconciliation of a case with a budget (``cost_view`` reconciles only those)."""
    rec, budget = view.reconciliation, view.budget
    assert rec is not None and budget is not None
    return {
        "case": view.case.pk,
        "currency": budget.currency,
        "billed_total": rec.billed_total,
        "expected_total": rec.expected_total,
        "periods": [
            {
                "period": f"{row.usage.period:%Y-%m}",
                "billed": row.usage.amount,
                "expected": row.expected.total,
                "expected_lines": list(row.expected.lines),
                "difference": row.difference,
                "causes": [vars(c) for c in row.causes],
                "cumulative": row.cumulative,
                "month_share": row.month_share,
                "cumulative_share": row.cumulative_share,
                "month_crossed": list(row.month_crossed),
                "cumulative_crossed": list(row.cumulative_crossed),
            }
            for row in rec.periods
        ],
        "crossings": [{**vars(c), "period": f"{c.period:%Y-%m}"} for c in rec.crossings],
        "guardrail_breaches": [
            {
                "code": b.code,
                "key": b.key,
                "message": b.message,
                "periods": [f"{p:%Y-%m}" for p in b.periods],
            }
            for b in view.breaches
        ],
        "unit_costs": unit_costs_payload(view.unit_costs),
    }


def unit_costs_payload(costs: UnitCosts | None) -> dict:
    """The unit costs of a view read with them (``cost_view(with_unit_costs=True)``)."""
    assert costs is not None
    throughput = costs.throughput
    return {
        "first_period": f"{costs.first:%Y-%m}" if costs.first else None,
        "last_period": f"{costs.last:%Y-%m}" if costs.last else None,
        "spend": costs.spend,
        "seconds": costs.seconds,
        "throughput": None
        if throughput is None
        else {
            "safe_concurrency": throughput.concurrency,
            "requests_per_s": throughput.requests_per_s,
            "output_tokens_per_s": throughput.output_tokens_per_s,
            "rate_rps": throughput.rate_rps,
            "source": throughput.source,
        },
        "costs": [
            {"key": c.key, "value": c.value, "computable": c.computable, "working": c.working}
            for c in costs.costs
        ],
    }


def daily_spend_payload(view: CostView) -> dict:
    """The daily spend of a case with a budget."""
    budget = view.budget
    assert budget is not None
    return {
        "case": view.case.pk,
        "currency": budget.currency,
        "daily_amount": budget.daily_amount,
        "thresholds_pct": sorted(budget.thresholds_pct),
        "time_zone": view.time_zone,
        "days": [
            {
                "day": f"{d.day:%Y-%m-%d}",
                "spent": d.spent,
                "share": d.share,
                "percent": d.percent,
                "crossed": list(d.crossed),
            }
            for d in view.days
        ],
        "crossings": [{**vars(c), "period": f"{c.period:%Y-%m-%d}"} for c in view.daily_crossings],
    }


def _refused(refusal: BillFileRefused) -> Response:
    return Response(
        {
            "detail": "The file was refused; nothing was imported.",
            "problems": [vars(p) for p in refusal.problems],
        },
        status=status.HTTP_400_BAD_REQUEST,
    )


class BudgetView(APIView):
    """A case's budget, thresholds, training limits, rate card and committed spend."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "costs.view_budget", "PUT": "costs.change_budget"}

    @extend_schema(responses=BudgetReadSerializer)
    def get(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        if budget_of(case) is None:
            raise Http404("This case has no budget yet.")
        return Response(BudgetReadSerializer(budget_payload(case)).data)

    @extend_schema(request=BudgetWriteSerializer, responses=BudgetReadSerializer)
    def put(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        body = BudgetWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        offer = None
        if data.get("offer") is not None:
            offer = Offer.objects.filter(case=case, pk=data["offer"]).first()
            if offer is None:
                raise serializers.ValidationError({"offer": "Choose one of this case's offers."})
        data["offer"] = offer
        existed = budget_of(case) is not None
        services.budget_save(
            actor=request.user,
            case=case,
            fields=data,
            reason=data.get("change_reason", ""),
            expected_version=version_edited(data, editing=existed),
        )
        return Response(
            BudgetReadSerializer(budget_payload(case)).data,
            status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED,
        )


class ImportsView(APIView):
    """Usage-and-bill imports: list them, or import one (CSV body or JSON rows), all or nothing.

    POST with ``Content-Type: text/csv`` (query ``replace``, ``file_name``,
    ``note``) or ``application/json``: ``{"rows": [{column: value}],
    "replace": false, "file_name": "", "note": ""}``. The columns are those of
    the upload (see ``apps/costs/bill_rows.py``).
    """

    permission_classes = [RolePermission]
    required_permissions = {"GET": "costs.view_costimport", "POST": "costs.add_costimport"}
    # A session client's CSRF check parses the body before ``post`` runs: text/csv must be
    # a known type (415 otherwise), and its parser leaves the bytes for ``post`` to read.
    parser_classes = [JSONParser, CSVBodyParser]

    @extend_schema(responses=ImportSerializer(many=True))
    def get(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        imports = [import_payload(i) for i in cost_imports_of(case)]
        return Response(ImportSerializer(imports, many=True).data)

    @extend_schema(
        request={"text/csv": str, "application/json": dict},
        parameters=[OpenApiParameter("replace", bool), OpenApiParameter("file_name", str)],
        responses={201: ImportSerializer},
    )
    def post(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        # The declared length was checked before the body was read (``register`` below).
        content_type = (request.content_type or "").split(";")[0].strip().lower()
        raw = request.body  # kept byte for byte, with its SHA-256
        options: Mapping[str, Any] = request.query_params
        rows = None
        if content_type == "text/csv":
            source = CostImport.Source.API_CSV
        elif content_type == "application/json":
            source = CostImport.Source.API_JSON
            document: object = request.data  # the API's bounded parser: depth and integer size
            if isinstance(document, dict):
                options = {**request.query_params.dict(), **document}
                document = document.get("rows")
            if not isinstance(document, list) or not all(isinstance(r, dict) for r in document):
                return Response(
                    {"detail": 'Send {"rows": [{column: value}, …]}, one object per month.'},
                    status=status.HTTP_400_BAD_REQUEST,
                )
            rows = document
        else:
            return Response(
                {"detail": "Send text/csv or application/json."},
                status=status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
            )
        replace = options.get("replace") in (True, "true", "1", "yes")
        try:
            cost_import = services.cost_import_create(
                actor=request.user,
                case=case,
                raw=raw,
                rows=rows,
                file_name=str(options.get("file_name") or f"api-{source}")[:200],
                source=source,
                replace=replace,
                note=str(options.get("note") or "")[:500],
            )
        except BillFileRefused as refusal:
            return _refused(refusal)
        return Response(
            ImportSerializer(import_payload(cost_import)).data, status=status.HTTP_201_CREATED
        )


def _body_rows(request: Request) -> tuple[str, list | None, dict] | Response:
    """(source, JSON rows or None for CSV, options) of an import body, or the answer to it."""
    content_type = (request.content_type or "").split(";")[0].strip().lower()
    options: dict = request.query_params.dict()
    if content_type == "text/csv":
        return CostImport.Source.API_CSV, None, options
    if content_type != "application/json":
        return Response(
            {"detail": "Send text/csv or application/json."},
            status=status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
        )
    document: object = request.data  # the API's bounded parser: depth and integer size
    if isinstance(document, dict):
        options = {**options, **document}

        document = document.get("rows")
    if not isinstance(document, list) or not all(isinstance(r, dict) for r in document):
        return Response(
            {"detail": 'Send {"rows": [{column: value}, …]}, one object per row.'},
            status=status.HTTP_400_BAD_REQUEST,
        )
    return CostImport.Source.API_JSON, document, options


class DailySpendView(APIView):
    """Each day's spend against the daily budget, or import a daily-spend file, all or nothing.

    POST with ``Content-Type: text/csv`` (query ``file_name``, ``note``) or
    ``application/json``: ``{"rows": [{"charged_at": …, "amount": …}], "file_name": "",
    "note": ""}``. Columns: ``charged_at`` (ISO 8601 with its offset from UTC, or a day
    ``YYYY-MM-DD``), ``amount``, optionally ``description`` and ``currency`` (see
    ``apps/costs/spend_rows.py``). Days run midnight to midnight in the server's time zone.
    """

    permission_classes = [RolePermission]
    required_permissions = {"GET": "costs.view_spendcharge", "POST": "costs.add_costimport"}
    parser_classes = [JSONParser, CSVBodyParser]

    @extend_schema(responses=DailySpendSerializer)
    def get(self, request: Request, case_pk: int) -> Response:
        view = cost_view(case_get_for(request.user, case_pk))
        if view.budget is None:
            raise Http404("This case has no budget yet.")
        return Response(DailySpendSerializer(daily_spend_payload(view)).data)

    @extend_schema(
        request={"text/csv": str, "application/json": dict},
        parameters=[OpenApiParameter("file_name", str)],
        responses={201: ImportSerializer},
    )
    def post(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        parsed = _body_rows(request)
        if isinstance(parsed, Response):
            return parsed
        source, rows, options = parsed
        try:
            cost_import = services.spend_import_create(
                actor=request.user,
                case=case,
                raw=request.body,  # kept byte for byte, with its SHA-256
                rows=rows,
                file_name=str(options.get("file_name") or f"api-daily-{source}")[:200],
                source=source,
                note=str(options.get("note") or "")[:500],
            )
        except BillFileRefused as refusal:
            return _refused(refusal)
        return Response(
            ImportSerializer(import_payload(cost_import)).data, status=status.HTTP_201_CREATED
        )


class PeriodsView(APIView):
    """Imported months, oldest first; a replaced month is listed with when it was replaced."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "costs.view_costperiod"}

    @extend_schema(responses=PeriodSerializer(many=True))
    def get(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        periods = (
            CostPeriod.objects.filter(case=case)
            .select_related("cost_import")
            .order_by("period", "pk")
        )
        return Response(PeriodSerializer([period_payload(p) for p in periods], many=True).data)


class ReconciliationView(APIView):
    """Expected cost against the bill per month, the difference, its likely causes, crossings;
    the guardrails the newest bills broke, and the unit costs (docs/rules/costs.md)."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "costs.view_budget"}

    @extend_schema(responses=ReconciliationSerializer)
    def get(self, request: Request, case_pk: int) -> Response:
        view = cost_view(case_get_for(request.user, case_pk), with_unit_costs=True)
        if view.budget is None:
            raise Http404("This case has no budget yet.")
        return Response(ReconciliationSerializer(reconciliation_payload(view)).data)


def register(router: BaseRouter) -> list[URLPattern]:
    prefix = "cases/<int:case_pk>/costs/"
    return [
        path(prefix + "budget/", BudgetView.as_view(), name="costs-budget"),
        path(
            prefix + "imports/",
            # Refused from the declared length, before anything (the CSRF check) reads it.
            refused_unread(api_declared_over(lambda: MAX_FILE_BYTES, slack_bytes=0))(
                ImportsView.as_view()
            ),
            name="costs-imports",
        ),
        path(
            prefix + "daily-spend/",
            refused_unread(api_declared_over(lambda: MAX_FILE_BYTES, slack_bytes=0))(
                DailySpendView.as_view()
            ),
            name="costs-daily-spend",
        ),
        path(prefix + "periods/", PeriodsView.as_view(), name="costs-periods"),
        path(prefix + "reconciliation/", ReconciliationView.as_view(), name="costs-reconciliation"),
    ]
