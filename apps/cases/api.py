"""REST API for procurement cases."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

import django_filters
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.urls import URLPattern
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter

from apps.cases import services
from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_list_for
from apps.core.api import TrackedSerializer, TrackedViewSetMixin
from apps.core.permissions import RolePermission

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations
    from rest_framework.permissions import _SupportsHasPermission

    class _OfferCount(TypedDict):
        offer_count: int

    # A case as ``case_list_for`` gives it: its offers counted, which the serializer shows.
    CountedCase = WithAnnotations[ProcurementCase, _OfferCount]


def _counted(case: ProcurementCase, offer_count: int) -> "CountedCase":
    counted = cast("CountedCase", case)
    counted.offer_count = offer_count
    return counted


class CaseSerializer(TrackedSerializer):
    owner: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    offer_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = ProcurementCase
        fields = [
            "id",
            "name",
            "owner",
            "status",
            "workload",
            "requirements",
            "slo_p95_ttft_ms",
            "slo_error_rate_pct",
            "slo_peak_memory_pct",
            "exit_window_days",
            "availability_need_pct",
            "offer_minimum_waiver",
            "offer_count",
            "created_at",
            "updated_at",
            "version",
            "change_reason",
        ]
        read_only_fields = ["status", "offer_minimum_waiver", "created_at", "updated_at"]


class WaiverSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)


class CaseFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = ProcurementCase
        fields = ["status", "workload", "name"]


class CaseViewSet(
    TrackedViewSetMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = CaseSerializer
    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "cases.view_procurementcase",
        "POST": "cases.add_procurementcase",
        "PUT": "cases.change_procurementcase",
        "PATCH": "cases.change_procurementcase",
    }
    filterset_class = CaseFilter
    ordering_fields = ["created_at", "name", "status"]
    search_fields = ["name", "requirements"]

    def get_queryset(self) -> QuerySet[ProcurementCase]:
        return case_list_for(self.request.user).order_by("-created_at")

    def get_permissions(self) -> Sequence["_SupportsHasPermission"]:
        if self.action == "waive_offer_minimum":
            self.required_permissions = {"POST": "cases.waive_offer_minimum"}
        return super().get_permissions()

    def perform_service_create(self, data: dict[str, Any]) -> ProcurementCase:
        return _counted(services.case_create(actor=self.request.user, **data), 0)

    def perform_service_update(
        self, case: "CountedCase", data: dict[str, Any], reason: str, version: int | None
    ) -> ProcurementCase:
        updated = services.case_update(
            actor=self.request.user, case=case, fields=data, reason=reason, expected_version=version
        )
        return _counted(updated, case.offer_count)

    @extend_schema(request=WaiverSerializer, responses=CaseSerializer)
    @action(detail=True, methods=["post"], url_path="waive-offer-minimum")
    def waive_offer_minimum(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        case = self.get_object()
        body = WaiverSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        updated = services.case_offer_minimum_waive(
            actor=request.user, case=case, reason=body.validated_data["reason"]
        )
        return Response(
            CaseSerializer(_counted(updated, case.offer_count)).data, status=status.HTTP_200_OK
        )


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("cases", CaseViewSet, basename="case")
    return []
