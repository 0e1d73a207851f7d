"""REST API: acceptance plans, results (with attachment upload), the state, and sign-off."""

from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.urls import URLPattern, path
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.views import APIView

from apps.acceptance import services
from apps.acceptance.models import (
    SIGN_OFF_COMMENT_MAX_LENGTH,
    AcceptanceAttachment,
    AcceptancePlan,
    AcceptanceResult,
    AcceptanceSignOff,
)
from apps.acceptance.selectors import (
    AcceptanceState,
    acceptance_state,
    plan_get_for,
    plan_list_for,
    result_get_for,
    result_list_for,
)
from apps.core.api import TrackedSerializer, TrackedViewSetMixin
from apps.core.permissions import RolePermission
from apps.core.uploads import api_declared_over, refused_unread
from apps.offers.selectors import offer_get_for


class AcceptancePlanSerializer(TrackedSerializer):
    offer = serializers.IntegerField(source="offer_id", help_text="The approved offer.")
    case = serializers.IntegerField(source="case_id", read_only=True)

    class Meta:
        model = AcceptancePlan
        fields = ["id", "case", "offer", *services.PLAN_FIELDS, "version", "change_reason"]
        read_only_fields = ["id", "case"]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        if self.instance is not None and "offer_id" in attrs:
            raise serializers.ValidationError({"offer": "The offer of a plan cannot change."})
        return attrs


class AcceptanceAttachmentSerializer(serializers.ModelSerializer):
    uploaded_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )

    class Meta:
        model = AcceptanceAttachment
        fields = ["id", "result", "name", "content_type", "size_bytes", "sha256", "uploaded_by"]
        fields += ["created_at"]
        read_only_fields = fields


class AcceptanceResultSerializer(TrackedSerializer):
    recorded_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    attachments = AcceptanceAttachmentSerializer(many=True, read_only=True)

    class Meta:
        model = AcceptanceResult
        fields = ["id", "plan", *services.RESULT_FIELDS, "recorded_by", "attachments"]
        fields += ["version", "change_reason"]
        read_only_fields = ["id", "recorded_by", "attachments"]
        extra_kwargs = {"performed_at": {"required": False}}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        if self.instance is not None and "plan" in attrs:
            raise serializers.ValidationError({"plan": "The plan of a result cannot change."})
        return attrs


class PlanViewSet(
    TrackedViewSetMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Acceptance plans: the four layers' pass criteria for one approved offer."""

    serializer_class = AcceptancePlanSerializer
    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "acceptance.view_acceptanceplan",
        "POST": "acceptance.add_acceptanceplan",
        "PATCH": "acceptance.change_acceptanceplan",
    }
    http_method_names = ["get", "post", "patch", "head", "options"]
    filterset_fields = ["case", "offer"]

    def get_queryset(self) -> QuerySet[AcceptancePlan]:
        return plan_list_for(self.request.user).order_by("pk")

    def perform_service_create(self, data: dict[str, Any]) -> AcceptancePlan:
        offer = offer_get_for(self.request.user, data.pop("offer_id"))
        return services.acceptance_plan_create(actor=self.request.user, offer=offer, **data)

    def perform_service_update(
        self, plan: AcceptancePlan, data: dict[str, Any], reason: str, version: int | None
    ) -> AcceptancePlan:
        return services.acceptance_plan_update(
            actor=self.request.user, plan=plan, fields=data, reason=reason, expected_version=version
        )


class ResultViewSet(
    TrackedViewSetMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Engineers' acceptance results (fault injections above all), with their attachments."""

    serializer_class = AcceptanceResultSerializer
    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "acceptance.view_acceptanceresult",
        "POST": "acceptance.add_acceptanceresult",
        "PATCH": "acceptance.change_acceptanceresult",
    }
    http_method_names = ["get", "post", "patch", "head", "options"]
    filterset_fields = ["plan", "layer"]

    def get_queryset(self) -> QuerySet[AcceptanceResult]:
        return result_list_for(self.request.user).prefetch_related("attachments__uploaded_by")

    def perform_service_create(self, data: dict[str, Any]) -> AcceptanceResult:
        plan = plan_get_for(self.request.user, data.pop("plan").pk)
        return services.acceptance_result_record(actor=self.request.user, plan=plan, **data)

    def perform_service_update(
        self, result: AcceptanceResult, data: dict[str, Any], reason: str, version: int | None
    ) -> AcceptanceResult:
        return services.acceptance_result_update(
            actor=self.request.user,
            result=result,
            fields=data,
            reason=reason,
            expected_version=version,
        )


class AcceptanceUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="A log or screenshot; size and type are checked.")


class AttachmentUploadView(APIView):
    """Attach a log or screenshot to a result (multipart); stored with its SHA-256."""

    permission_classes = [RolePermission]
    required_permissions = {"POST": "acceptance.add_acceptanceattachment"}
    parser_classes = [MultiPartParser]

    @extend_schema(
        request={"multipart/form-data": AcceptanceUploadSerializer},
        responses=AcceptanceAttachmentSerializer,
    )
    def post(self, request: Request, pk: int) -> Response:
        result = result_get_for(request.user, pk)
        body = AcceptanceUploadSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        attachment = services.acceptance_attachment_add(
            actor=request.user, result=result, upload=body.validated_data["file"]
        )
        return Response(
            AcceptanceAttachmentSerializer(attachment).data, status=status.HTTP_201_CREATED
        )


class AcceptanceCriterionSerializer(serializers.Serializer):
    key = serializers.CharField()
    title = serializers.CharField()
    status = serializers.CharField()
    measured = serializers.CharField()
    # The stubs see DRF's Field.required here; the serializer metaclass takes declared
    # fields off the class, so this is a field named "required", shadowing nothing.
    required = serializers.CharField()  # type: ignore[assignment]
    reason = serializers.CharField()


class AcceptanceLayerSerializer(serializers.Serializer):
    layer = serializers.CharField()
    status = serializers.CharField()
    reasons = serializers.ListField(child=serializers.CharField())
    criteria = AcceptanceCriterionSerializer(many=True)


class AcceptanceSignOffSerializer(serializers.ModelSerializer):
    signed_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )

    class Meta:
        model = AcceptanceSignOff
        fields = ["id", "plan", "signed_by", "signed_at", "comment", "layers", "bound_state"]
        fields += ["voided_at", "void_reason", "version"]
        read_only_fields = fields


class AcceptanceStateSerializer(serializers.Serializer):
    plan = serializers.IntegerField(source="plan.pk")
    case_status = serializers.CharField(source="plan.case.status")
    overall = serializers.CharField()
    approved = serializers.SerializerMethodField()
    signed_off = serializers.BooleanField()
    accepted = serializers.BooleanField()
    safe_operating_level = serializers.IntegerField(source="safe_level", allow_null=True)
    layers = AcceptanceLayerSerializer(many=True)
    signoff = AcceptanceSignOffSerializer(allow_null=True)
    signoff_void_because = serializers.SerializerMethodField()

    def get_approved(self, state: AcceptanceState) -> bool:
        return state.approval is not None

    def get_signoff_void_because(self, state: AcceptanceState) -> list[str]:
        return [str(change) for change in state.signoff_changes]


class PlanStateView(APIView):
    """Per layer passed / failed / in progress with the reasons; the overall acceptance."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "acceptance.view_acceptanceplan"}

    @extend_schema(responses=AcceptanceStateSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(
            AcceptanceStateSerializer(acceptance_state(plan_get_for(request.user, pk))).data
        )


class AcceptanceSignOffRequestSerializer(serializers.Serializer):
    comment = serializers.CharField(max_length=SIGN_OFF_COMMENT_MAX_LENGTH)


class PlanSignOffView(APIView):
    """A tech lead other than the results' recorder signs off; the case becomes accepted."""

    permission_classes = [RolePermission]
    required_permissions = {"POST": "acceptance.signoff_acceptanceplan"}

    @extend_schema(
        request=AcceptanceSignOffRequestSerializer, responses={201: AcceptanceSignOffSerializer}
    )
    def post(self, request: Request, pk: int) -> Response:
        plan = plan_get_for(request.user, pk)
        body = AcceptanceSignOffRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        signoff = services.acceptance_signoff(
            actor=request.user, plan=plan, comment=body.validated_data["comment"]
        )
        return Response(AcceptanceSignOffSerializer(signoff).data, status=status.HTTP_201_CREATED)


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("acceptance-plans", PlanViewSet, basename="acceptance-plan")
    router.register("acceptance-results", ResultViewSet, basename="acceptance-result")
    return [
        path(
            "acceptance-plans/<int:pk>/state/",
            PlanStateView.as_view(),
            name="acceptance-plan-state",
        ),
        path(
            "acceptance-plans/<int:pk>/sign-off/",
            PlanSignOffView.as_view(),
            name="acceptance-plan-signoff",
        ),
        path(
            "acceptance-results/<int:pk>/attachments/",
            # Refused from the declared length, before multipart parsing spools the body.
            refused_unread(api_declared_over(services.attachment_max_bytes))(
                AttachmentUploadView.as_view()
            ),
            name="acceptance-result-attachments",
        ),
    ]
