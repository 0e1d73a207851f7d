"""REST API for procurement cases."""

import django_filters
from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from apps.cases import services
from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_list_for
from apps.core.api import TrackedSerializer, TrackedViewSetMixin
from apps.core.permissions import RolePermission


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

    def get_queryset(self):
        return case_list_for(self.request.user).order_by("-created_at")

    def get_permissions(self):
        if self.action == "waive_offer_minimum":
            self.required_permissions = {"POST": "cases.waive_offer_minimum"}
        return super().get_permissions()

    def perform_service_create(self, data):
        case = services.case_create(actor=self.request.user, **data)
        case.offer_count = 0
        return case

    def perform_service_update(self, case, data, reason, version):
        updated = services.case_update(
            actor=self.request.user, case=case, fields=data, reason=reason, expected_version=version
        )
        updated.offer_count = case.offer_count
        return updated

    @extend_schema(request=WaiverSerializer, responses=CaseSerializer)
    @action(detail=True, methods=["post"], url_path="waive-offer-minimum")
    def waive_offer_minimum(self, request, pk=None, format=None):
        case = self.get_object()
        body = WaiverSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        updated = services.case_offer_minimum_waive(
            actor=request.user, case=case, reason=body.validated_data["reason"]
        )
        updated.offer_count = case.offer_count
        return Response(CaseSerializer(updated).data, status=status.HTTP_200_OK)


def register(router) -> list:
    router.register("cases", CaseViewSet, basename="case")
    return []
