"""REST API of the vendors' reassessments: read them, and start one early
(docs/rules/reassessment.md)."""

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.urls import URLPattern, path
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.views import APIView

from apps.casework import reassessments
from apps.casework.models import Reassessment
from apps.core.permissions import RolePermission
from apps.vendors import reassessment as rules
from apps.vendors.models import Vendor


class ReassessmentSerializer(serializers.ModelSerializer):
    state = serializers.SerializerMethodField()
    lapses_on = serializers.SerializerMethodField()

    class Meta:
        model = Reassessment
        fields = [
            "id",
            "vendor",
            "offer",
            "case",
            "due_on",
            "tier",
            "cycle_months",
            "state",
            "started_at",
            "started_by",
            "lapses_on",
            "invitation",
            "sections",
            "harness_token",
            "baseline",
            "verification",
            "completed_at",
            "lapsed_at",
            "version",
        ]
        read_only_fields = fields

    def get_state(self, obj: Reassessment) -> str:
        return reassessments.state_of(obj)

    def get_lapses_on(self, obj: Reassessment) -> str:
        return rules.lapses_on(timezone.localdate(obj.started_at)).isoformat()


class ReassessmentViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """The reassessments of the cases the reader may see, newest first."""

    serializer_class = ReassessmentSerializer
    permission_classes = [RolePermission]
    required_permissions = {"GET": "casework.view_reassessment"}
    filterset_fields = ["vendor", "case"]
    ordering_fields = ["started_at", "due_on"]

    def get_queryset(self) -> QuerySet[Reassessment]:
        return reassessments.reassessment_list_for(self.request.user).order_by("-started_at", "-pk")


class StartRequestSerializer(serializers.Serializer):
    vendor = serializers.IntegerField(min_value=1, max_value=2**31 - 1)


class ReassessmentStartView(APIView):
    """Procurement starts a vendor's next reassessment before it falls due; 409 where one is
    already open."""

    permission_classes = [RolePermission]
    required_permissions = {"POST": "casework.start_reassessment"}

    @extend_schema(request=StartRequestSerializer, responses={201: ReassessmentSerializer})
    def post(self, request: Request) -> Response:
        body = StartRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        vendor = get_object_or_404(Vendor, pk=body.validated_data["vendor"])
        started = reassessments.reassessment_start_early(actor=request.user, vendor=vendor)
        return Response(ReassessmentSerializer(started).data, status=status.HTTP_201_CREATED)


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("reassessments", ReassessmentViewSet, basename="reassessment")
    return [
        path(
            "reassessments/start/",
            ReassessmentStartView.as_view(),
            name="reassessment-start",
        )
    ]
