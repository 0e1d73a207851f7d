"""REST API for a case's access matrix (with its review) and network plan."""

from typing import Any

from django.http import Http404
from django.urls import URLPattern, path
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.views import APIView

from apps.access import services
from apps.access.models import (
    AccessMatrix,
    ControlStatus,
    DataSent,
    LinkChoice,
    NetworkPlan,
    PermissionKind,
    WorkloadType,
)
from apps.access.rules import PERIOD_BOUNDS, Budget, Leg, OfferBudget
from apps.access.selectors import (
    ControlRow,
    access_control_of,
    access_matrix_of,
    matrix_view,
    network_plan_of,
    plan_view,
)
from apps.cases.selectors import case_get_for
from apps.core.api import version_edited
from apps.core.bounds import REASON_MAX_LENGTH
from apps.core.permissions import RolePermission

# Input ---------------------------------------------------------------------


class RoleSerializer(serializers.Serializer):
    key = serializers.CharField(
        max_length=50, required=False, allow_blank=True, help_text="Derived from the name if blank."
    )
    name = serializers.CharField(max_length=200)
    is_audit_role = serializers.BooleanField(default=False)


class PermissionSerializer(serializers.Serializer):
    key = serializers.CharField(max_length=50, required=False, allow_blank=True)
    name = serializers.CharField(max_length=200)
    kind = serializers.ChoiceField(choices=PermissionKind.choices, default=PermissionKind.OTHER)
    is_write = serializers.BooleanField(
        required=False,
        help_text="Defaults to true for cluster admin, job submit and data write kinds.",
    )


class GrantSerializer(serializers.Serializer):
    role = serializers.CharField(max_length=50, help_text="Key of a role listed in `roles`.")
    permission = serializers.CharField(
        max_length=50, help_text="Key of a permission listed in `permissions`."
    )
    justification = serializers.CharField(
        max_length=2000, allow_blank=True, default="", help_text="Blank is an SoD violation."
    )


class RiskAcceptanceReadSerializer(serializers.Serializer):
    accepted_by = serializers.CharField()
    accepted_at = serializers.DateTimeField(allow_null=True)
    reason = serializers.CharField()
    expires_on = serializers.DateField(help_text="Holds through this day.")
    expired = serializers.BooleanField()


class ControlSerializer(serializers.Serializer):
    key = serializers.CharField(max_length=50)
    title = serializers.CharField(read_only=True)
    status = serializers.ChoiceField(choices=ControlStatus.choices)
    evidence = serializers.CharField(max_length=2000, allow_blank=True, default="")
    version = serializers.IntegerField(
        read_only=True, help_text="Send it back when accepting this control's risk."
    )
    gap = serializers.CharField(
        read_only=True, allow_null=True, help_text="Why this control blocks approval; null if not."
    )
    risk_acceptance = RiskAcceptanceReadSerializer(read_only=True, allow_null=True)


def _period(name: str, help_text: str) -> serializers.IntegerField:
    low, high = PERIOD_BOUNDS[name]
    return serializers.IntegerField(
        min_value=low, max_value=high, required=False, allow_null=True, help_text=help_text
    )


class PeriodsSerializer(serializers.Serializer):
    """The periods the controls run on; a period left out keeps its value, null clears it."""

    key_rotation_days = _period("key_rotation_days", "Quarterly rotation means at most 90.")
    credential_lifetime_hours = _period("credential_lifetime_hours", "Short-lived: at most 168.")
    log_retention_days = _period("log_retention_days", "How long access logs are kept off-site.")


class MatrixWriteSerializer(serializers.Serializer):
    """The whole matrix: roles or permissions left out are removed with their grants."""

    roles = RoleSerializer(many=True)
    permissions = PermissionSerializer(many=True)
    grants = GrantSerializer(many=True)
    controls = ControlSerializer(
        many=True, required=False, help_text="Controls left out keep their status."
    )
    periods = PeriodsSerializer(required=False)
    version = serializers.IntegerField(
        required=False, help_text="Version edited; a stale version is refused with 409."
    )
    change_reason = serializers.CharField(
        required=False, allow_blank=True, max_length=500, help_text="Required on edits."
    )


class RiskAcceptanceSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000, help_text="Why the risk is accepted.")
    expires_on = serializers.DateField(
        help_text="Holds through this day; after today and at most a year ahead."
    )
    version = serializers.IntegerField(
        required=False, help_text="The control's version; a stale version is refused with 409."
    )


class ReviewSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, max_length=500)
    version = serializers.IntegerField(required=False)


class WorkloadLinkSerializer(serializers.Serializer):
    workload = serializers.ChoiceField(choices=WorkloadType.choices)
    key_metric = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        help_text="The recommended default when blank.",
    )
    link = serializers.ChoiceField(choices=LinkChoice.choices)
    data_sent = serializers.ChoiceField(
        choices=DataSent.choices,
        required=False,
        allow_null=True,
        allow_blank=True,
        default=None,
        help_text=(
            "What this link sends to the vendor: none (control and results only), "
            "deidentified (de-identified, synthetic or feature data only) or raw; null when "
            "not stated. Where the case's data-export assessment says data may not leave, a "
            "link sending raw data, or a batch-inference, training or data-sync link that "
            "does not say, blocks approval. Omitted, it is not stated: the list replaces "
            "the plan's links."
        ),
    )
    notes = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")


def _ms(**kwargs: Any) -> serializers.DecimalField:
    return serializers.DecimalField(max_digits=8, decimal_places=1, **kwargs)


class PlanWriteSerializer(serializers.Serializer):
    target_latency_ms = _ms(min_value=1)
    user_to_gateway_ms = _ms(min_value=0)
    estimated_rtt_ms = _ms(min_value=0, required=False, allow_null=True, default=None)
    rtt_source = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    queueing_and_first_token_ms = _ms(min_value=0, required=False, allow_null=True, default=None)
    multi_node_training_in_one_cluster = serializers.BooleanField(
        required=False, allow_null=True, default=None
    )
    notes = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=REASON_MAX_LENGTH
    )
    links = WorkloadLinkSerializer(many=True, help_text="Every workload type in use.")
    version = serializers.IntegerField(required=False)
    change_reason = serializers.CharField(required=False, allow_blank=True, max_length=500)


# Output --------------------------------------------------------------------


class ViolationSerializer(serializers.Serializer):
    rule = serializers.CharField()
    role = serializers.CharField()
    permission = serializers.CharField(allow_null=True)
    message = serializers.CharField()
    cells = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))


class MatrixStateSerializer(serializers.Serializer):
    reviewed = serializers.BooleanField()
    expired = serializers.BooleanField()
    holds = serializers.BooleanField(help_text="Reviewed, not expired, no SoD violation.")
    violations = ViolationSerializer(many=True)
    controls_hold = serializers.BooleanField(
        help_text="Every control in place with its evidence, or its risk accepted."
    )
    control_gaps = serializers.ListField(child=serializers.CharField())
    risk_acceptances = serializers.ListField(child=serializers.CharField())


class MatrixReadSerializer(serializers.Serializer):
    case = serializers.IntegerField()
    version = serializers.IntegerField()
    roles = RoleSerializer(many=True)
    permissions = PermissionSerializer(many=True)
    grants = GrantSerializer(many=True)
    controls = ControlSerializer(many=True)
    periods = PeriodsSerializer()
    reviewed_by = serializers.CharField(allow_null=True)
    reviewed_at = serializers.DateTimeField(allow_null=True)
    review_by = serializers.DateField(allow_null=True)
    state = MatrixStateSerializer()


class BudgetSerializer(serializers.Serializer):
    target = serializers.DecimalField(max_digits=10, decimal_places=1)
    total = serializers.DecimalField(max_digits=10, decimal_places=1, allow_null=True)
    over_target = serializers.BooleanField()
    rtt_share = serializers.DecimalField(max_digits=8, decimal_places=4, allow_null=True)
    rtt_over_half = serializers.BooleanField()
    gateway_over_limit = serializers.BooleanField()
    advice = serializers.ListField(child=serializers.CharField())
    missing = serializers.ListField(child=serializers.CharField())


class LegSerializer(serializers.Serializer):
    ms = serializers.DecimalField(max_digits=10, decimal_places=1, allow_null=True)
    kind = serializers.ChoiceField(
        choices=["measured", "estimate", "unknown"],
        help_text="measured: from an evidence bundle; estimate: the plan's typed value.",
    )
    p95_ms = serializers.DecimalField(
        max_digits=10,
        decimal_places=1,
        allow_null=True,
        help_text="Measured RTTs only; null when too few connects for a defensible P95.",
    )
    bundle = serializers.IntegerField(
        allow_null=True, help_text="The evidence bundle measuring it."
    )
    bundle_sha256_prefix = serializers.CharField(allow_blank=True)
    measured_at = serializers.DateTimeField(allow_null=True)
    probed_host = serializers.CharField(allow_blank=True)
    samples = serializers.IntegerField(allow_null=True, help_text="Connects behind an RTT.")
    demo = serializers.BooleanField(help_text="A demo bundle's value, not a measurement.")
    origin = serializers.ChoiceField(
        choices=["gateway", "rented_machine", ""],
        help_text="A measured RTT's: from the customer's gateway (the only one that fills the "
        "hop) or from the rented machine.",
    )


class OfferBudgetSerializer(serializers.Serializer):
    offer = serializers.IntegerField()
    offer_name = serializers.CharField()
    user_to_gateway_ms = serializers.DecimalField(max_digits=10, decimal_places=1, allow_null=True)
    gateway_to_remote_service = LegSerializer()
    queueing_and_first_token = LegSerializer()
    verdict = serializers.ChoiceField(
        choices=["within_target", "over_target", "rtt_over_half", "incomplete"]
    )
    budget = BudgetSerializer()
    rented_machine_rtt = LegSerializer(
        allow_null=True,
        help_text="The rented machine's own round trip to its endpoint: shown, never the hop.",
    )


class PlanReadSerializer(PlanWriteSerializer):
    case = serializers.IntegerField()
    budget = BudgetSerializer(help_text="On the plan's estimates alone.")
    offer_budgets = OfferBudgetSerializer(
        many=True, help_text="Per offer: measured legs where its evidence has them."
    )
    training_problems = serializers.ListField(child=serializers.CharField())

    class Meta:
        ref_name = "NetworkPlanRead"


def matrix_payload(matrix: AccessMatrix) -> dict:
    view = matrix_view(matrix, timezone.localdate())
    data = matrix.as_data()
    return {
        "case": matrix.case_id,
        "version": matrix.version,
        "roles": [vars(r) for r in data.roles],
        "permissions": [vars(p) for p in data.permissions],
        "grants": [vars(g) for g in data.grants],
        "controls": [_control_payload(row) for row in view.control_rows],
        "periods": {name: getattr(matrix, name) for name in PERIOD_BOUNDS},
        "reviewed_by": matrix.reviewed_by.username if matrix.reviewed_by else None,
        "reviewed_at": matrix.reviewed_at,
        "review_by": matrix.review_by,
        "state": {
            "reviewed": view.state.reviewed,
            "expired": view.state.expired,
            "holds": view.state.holds,
            "violations": [vars(v) for v in view.state.violations],
            "controls_hold": view.controls_state.holds,
            "control_gaps": [gap.message for gap in view.controls_state.gaps],
            "risk_acceptances": [a.message for a in view.controls_state.acceptances],
        },
    }


def _control_payload(row: ControlRow) -> dict:
    control = row.control
    acceptance = None
    if control.risk_expires_on is not None:
        who = control.risk_accepted_by
        acceptance = {
            "accepted_by": who.username if who else "",
            "accepted_at": control.risk_accepted_at,
            "reason": control.risk_reason or "",
            "expires_on": control.risk_expires_on,
            "expired": not row.acceptance_current,
        }
    return {
        "key": control.key,
        "title": control.title,
        "status": control.status,
        "evidence": control.evidence,
        "version": control.version,
        "gap": row.gap.message if row.gap else None,
        "risk_acceptance": acceptance,
    }


def plan_payload(plan: NetworkPlan) -> dict:
    view = plan_view(plan)
    budget = view.budget
    return {
        "case": plan.case_id,
        "version": plan.version,
        **{name: getattr(plan, name) for name in services.PLAN_FIELDS},
        "links": view.links,
        "budget": _budget_payload(budget),
        "offer_budgets": [_offer_budget_payload(row) for row in view.offers],
        "training_problems": view.training_problems,
    }


def _budget_payload(budget: Budget) -> dict:
    return {**vars(budget), "advice": list(budget.advice), "missing": list(budget.missing)}


def _leg_payload(leg: Leg) -> dict:
    return {
        "ms": leg.ms,
        "kind": leg.kind,
        "p95_ms": leg.p95_ms,
        "bundle": leg.bundle,
        "bundle_sha256_prefix": leg.bundle_label,
        "measured_at": leg.measured_at,
        "probed_host": leg.target,
        "samples": leg.samples,
        "demo": leg.demo,
        "origin": leg.origin,
    }


def _offer_budget_payload(row: OfferBudget) -> dict:
    return {
        "offer": row.offer_id,
        "offer_name": row.offer,
        "user_to_gateway_ms": row.user_to_gateway_ms,
        "gateway_to_remote_service": _leg_payload(row.rtt),
        "queueing_and_first_token": _leg_payload(row.queueing),
        "verdict": row.verdict,
        "budget": _budget_payload(row.budget),
        "rented_machine_rtt": _leg_payload(row.machine_rtt) if row.machine_rtt else None,
    }


# Views ---------------------------------------------------------------------


class AccessMatrixView(APIView):
    """A case's access matrix: roles × permissions, controls, review and SoD violations."""

    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "access.view_accessmatrix",
        "PUT": "access.change_accessmatrix",
    }

    @extend_schema(responses=MatrixReadSerializer)
    def get(self, request: Request, case_pk: int) -> Response:
        matrix = access_matrix_of(case_get_for(request.user, case_pk))
        if matrix is None:
            raise Http404("This case has no access matrix yet.")
        return Response(MatrixReadSerializer(matrix_payload(matrix)).data)

    @extend_schema(request=MatrixWriteSerializer, responses=MatrixReadSerializer)
    def put(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        body = MatrixWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        existed = access_matrix_of(case) is not None
        services.access_matrix_save(
            actor=request.user,
            case=case,
            roles=[dict(r) for r in data["roles"]],
            permissions=[dict(p) for p in data["permissions"]],
            grants=[dict(g) for g in data["grants"]],
            controls=[dict(c) for c in data.get("controls", [])],
            periods=dict(data.get("periods", {})),
            reason=data.get("change_reason", ""),
            expected_version=version_edited(data, editing=existed),
        )
        return Response(
            MatrixReadSerializer(matrix_payload(access_matrix_of(case))).data,
            status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED,
        )


class AccessMatrixReviewView(APIView):
    """Mark the matrix reviewed now; the next review is due 90 days later."""

    permission_classes = [RolePermission]
    required_permissions = {"POST": "access.review_accessmatrix"}

    @extend_schema(request=ReviewSerializer, responses=MatrixReadSerializer)
    def post(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        matrix = access_matrix_of(case)
        if matrix is None:
            raise Http404("This case has no access matrix yet.")
        body = ReviewSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.access_matrix_review(
            actor=request.user,
            matrix=matrix,
            note=body.validated_data.get("note", ""),
            expected_version=version_edited(body.validated_data, editing=True),
        )
        return Response(MatrixReadSerializer(matrix_payload(access_matrix_of(case))).data)


class ControlRiskAcceptanceView(APIView):
    """Accept, until a date, the risk of one control not in place (tech leads only)."""

    permission_classes = [RolePermission]
    required_permissions = {"POST": "access.accept_control_risk"}

    @extend_schema(request=RiskAcceptanceSerializer, responses=MatrixReadSerializer)
    def post(self, request: Request, case_pk: int, control_key: str) -> Response:
        case = case_get_for(request.user, case_pk)
        control = access_control_of(case, control_key)
        body = RiskAcceptanceSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.control_risk_accept(
            actor=request.user,
            control=control,
            reason=body.validated_data["reason"],
            expires_on=body.validated_data["expires_on"],
            expected_version=version_edited(body.validated_data, editing=True),
        )
        return Response(MatrixReadSerializer(matrix_payload(access_matrix_of(case))).data)


class NetworkPlanView(APIView):
    """A case's network plan: workload links, latency budget and training-traffic rule."""

    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "access.view_networkplan",
        "PUT": "access.change_networkplan",
    }

    @extend_schema(responses=PlanReadSerializer)
    def get(self, request: Request, case_pk: int) -> Response:
        plan = network_plan_of(case_get_for(request.user, case_pk))
        if plan is None:
            raise Http404("This case has no network plan yet.")
        return Response(PlanReadSerializer(plan_payload(plan)).data)

    @extend_schema(request=PlanWriteSerializer, responses=PlanReadSerializer)
    def put(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        body = PlanWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        existed = network_plan_of(case) is not None
        services.network_plan_save(
            actor=request.user,
            case=case,
            fields={name: data[name] for name in services.PLAN_FIELDS},
            links=[dict(link) for link in data["links"]],
            reason=data.get("change_reason", ""),
            expected_version=version_edited(data, editing=existed),
        )
        plan = network_plan_of(case)
        assert plan is not None  # saved just above
        return Response(
            PlanReadSerializer(plan_payload(plan)).data,
            status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED,
        )


def register(router: BaseRouter) -> list[URLPattern]:
    return [
        path(
            "cases/<int:case_pk>/access-matrix/",
            AccessMatrixView.as_view(),
            name="access-matrix",
        ),
        path(
            "cases/<int:case_pk>/access-matrix/review/",
            AccessMatrixReviewView.as_view(),
            name="access-matrix-review",
        ),
        path(
            "cases/<int:case_pk>/access-matrix/controls/<slug:control_key>/risk-acceptance/",
            ControlRiskAcceptanceView.as_view(),
            name="access-control-risk-acceptance",
        ),
        path(
            "cases/<int:case_pk>/network-plan/",
            NetworkPlanView.as_view(),
            name="network-plan",
        ),
    ]
