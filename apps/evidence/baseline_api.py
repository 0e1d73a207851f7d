"""REST API of baselines: list, pin, unpin, and a bundle's comparison with its baseline."""

from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.permissions import RolePermission
from apps.evidence import baselines
from apps.evidence.models import Baseline, EvidenceBundle
from apps.evidence.selectors import bundle_get_for
from apps.offers.selectors import offer_get_for


class BaselineSerializer(serializers.ModelSerializer):
    bundle_sha256 = serializers.CharField(source="bundle.sha256", read_only=True)
    pinned_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    unpinned_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    in_force = serializers.BooleanField(read_only=True)

    class Meta:
        model = Baseline
        fields = ["id", "case", "offer", "bundle", "bundle_sha256", "pin_reason", "pinned_by"]
        fields += ["pinned_at", "in_force", "unpinned_at", "unpinned_by", "unpin_reason"]
        fields += ["version"]
        read_only_fields = fields


class BaselinePinSerializer(serializers.Serializer):
    bundle = serializers.IntegerField(help_text="The verified evidence bundle to pin.")
    offer = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="The offer whose baseline it becomes; absent or null: the case's baseline.",
    )
    reason = serializers.CharField(max_length=2000, help_text="Why this run is the baseline.")


class BaselineUnpinSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)
    version = serializers.IntegerField(required=False, allow_null=True)


class BaselineViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Pinned baselines, in force and past; POST pins one (replacing the one in force)."""

    serializer_class = BaselineSerializer
    permission_classes = [RolePermission]
    required_permissions = {"GET": "evidence.view_baseline", "POST": "evidence.add_baseline"}
    filterset_fields = ["case", "offer", "bundle"]

    def get_queryset(self) -> QuerySet[Baseline]:
        return baselines.baseline_list_for(self.request.user).order_by("-pinned_at", "-pk")

    @extend_schema(request=BaselinePinSerializer, responses={201: BaselineSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = BaselinePinSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        bundle = bundle_get_for(request.user, data["bundle"])
        offer = offer_get_for(request.user, data["offer"]) if data.get("offer") else None
        baseline = baselines.baseline_pin(
            actor=request.user, bundle=bundle, offer=offer, reason=data["reason"]
        )
        return Response(BaselineSerializer(baseline).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=BaselineUnpinSerializer, responses={200: BaselineSerializer})
    @action(
        detail=True, methods=["post"], required_permissions={"POST": "evidence.change_baseline"}
    )
    def unpin(self, request: Request, pk: str | None = None, format: str | None = None) -> Response:

        baseline = self.get_object()
        body = BaselineUnpinSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        baseline = baselines.baseline_unpin(
            actor=request.user,
            baseline=baseline,
            reason=body.validated_data["reason"],
            expected_version=body.validated_data.get("version"),
        )
        return Response(BaselineSerializer(baseline).data)


COMPARISON = inline_serializer(
    "BaselineComparison",
    {
        "bundle": serializers.IntegerField(),
        "state": serializers.ChoiceField(
            choices=[
                baselines.NO_BASELINE,
                baselines.IS_BASELINE,
                baselines.OLDER,
                baselines.COMPARED,
            ]
        ),
        "baseline": BaselineSerializer(allow_null=True),
        "regressed": serializers.BooleanField(allow_null=True),
        "tolerances": serializers.DictField(allow_null=True),
        "metrics": serializers.ListField(child=serializers.DictField()),
        "answers": serializers.ListField(child=serializers.DictField()),
        "findings": serializers.ListField(child=serializers.CharField()),
    },
)


def comparison_body(bundle: EvidenceBundle) -> dict:
    """The bundle against its baseline: each metric with both values, the change, the
    tolerance, the direction and whether it regressed; the answers; the findings."""
    against = baselines.comparison_for_bundle(bundle)
    comparison = against.comparison
    tolerances = comparison.tolerances if comparison else None
    return {
        "bundle": bundle.pk,
        "state": against.state,
        "baseline": BaselineSerializer(against.baseline).data if against.baseline else None,
        "regressed": comparison.regressed if comparison else None,
        "tolerances": {
            "throughput_pct": str(tolerances.throughput_pct),
            "latency_pct": str(tolerances.latency_pct),
            "error_rate_points": str(tolerances.error_rate_points),
            "from_acceptance_plan": tolerances.from_plan,
        }
        if tolerances
        else None,
        "metrics": [row.as_dict() for row in comparison.metrics] if comparison else [],
        "answers": [row.as_dict() for row in comparison.answers] if comparison else [],
        "findings": comparison.findings if comparison else [],
    }
