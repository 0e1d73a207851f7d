"""REST API for offers and declared specs."""

from typing import Any

from django.db.models import QuerySet
from django.urls import URLPattern
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import mixins, serializers, viewsets
from rest_framework.routers import BaseRouter

from apps.cases.models import ProcurementCase
from apps.core.api import TrackedSerializer, TrackedViewSetMixin
from apps.core.permissions import RolePermission
from apps.offers import services
from apps.offers.models import DeclaredSpec, Offer
from apps.offers.selectors import offer_list_for, spec_status_for


class SpecStatusSerializer(serializers.Serializer):
    confirmed = serializers.BooleanField()
    missing = serializers.ListField(child=serializers.CharField())
    total_memory_gib = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)


class OfferSerializer(TrackedSerializer):
    case = serializers.PrimaryKeyRelatedField(queryset=ProcurementCase.objects.all())
    vendor_name = serializers.CharField(source="vendor.name", read_only=True)
    spec_status = serializers.SerializerMethodField()

    class Meta:
        model = Offer
        fields = [
            "id",
            "case",
            "vendor",
            "vendor_name",
            "accelerator_model",
            "accelerator_count",
            "unit_price",
            "currency",
            "billing_basis",
            "prepayment_ratio",
            "contract_term_months",
            "notes",
            "spec_status",
            "created_at",
            "updated_at",
            "version",
            "change_reason",
        ]
        read_only_fields = ["created_at", "updated_at"]
        # The web form takes percent; the API keeps the stored unit, a share of 1.
        extra_kwargs = {
            "prepayment_ratio": {
                "help_text": "Share of the contract value paid in advance, as a fraction "
                "from 0 to 1: 0.3 means 30 %. (The web form asks for percent.)"
            }
        }

    @extend_schema_field(SpecStatusSerializer)
    def get_spec_status(self, offer: Offer) -> dict:
        return SpecStatusSerializer(spec_status_for(offer)).data

    def validate_case(self, case: ProcurementCase) -> ProcurementCase:
        if self.instance is not None and case != self.instance.case:
            raise serializers.ValidationError(_("An offer cannot move to another case."))
        return case


class OfferViewSet(
    TrackedViewSetMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = OfferSerializer
    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "offers.view_offer",
        "POST": "offers.add_offer",
        "PUT": "offers.change_offer",
        "PATCH": "offers.change_offer",
    }
    filterset_fields = ["case", "vendor", "billing_basis"]
    ordering_fields = ["created_at", "unit_price"]

    def get_queryset(self) -> QuerySet[Offer]:
        return offer_list_for(self.request.user).order_by("pk")

    def perform_service_create(self, data: dict[str, Any]) -> Offer:
        case = data.pop("case")
        return services.offer_create(actor=self.request.user, case=case, **data)

    def perform_service_update(
        self, offer: Offer, data: dict[str, Any], reason: str, version: int | None
    ) -> Offer:
        data.pop("case", None)
        return services.offer_update(
            actor=self.request.user,
            offer=offer,
            fields=data,
            reason=reason,
            expected_version=version,
        )


class DeclaredSpecSerializer(TrackedSerializer):
    offer: serializers.PrimaryKeyRelatedField[Offer] = serializers.PrimaryKeyRelatedField(
        read_only=True
    )
    # true, false, or null where the vendor does not say (not a choice of words).
    tokens_scoped = serializers.BooleanField(
        allow_null=True,
        required=False,
        help_text="Whether the vendor states its API tokens can be limited to some models or "
        "operations (null: not stated); then the endpoint security gate requires the probe "
        "of a token without the permission.",
    )
    spec_status = serializers.SerializerMethodField()

    class Meta:
        model = DeclaredSpec
        fields = [
            "offer",
            *services.SPEC_FIELDS,
            "spec_status",
            "updated_at",
            "version",
            "change_reason",
        ]
        read_only_fields = ["updated_at"]

    @extend_schema_field(SpecStatusSerializer)
    def get_spec_status(self, spec: DeclaredSpec) -> dict:
        return SpecStatusSerializer(spec_status_for(spec.offer)).data


class DeclaredSpecViewSet(
    TrackedViewSetMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Declared specs, addressed by their offer's id (one spec per offer)."""

    serializer_class = DeclaredSpecSerializer
    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "offers.view_declaredspec",
        "PUT": "offers.change_declaredspec",
        "PATCH": "offers.change_declaredspec",
    }
    lookup_field = "offer"
    filterset_fields = ["offer__case"]

    def get_queryset(self) -> QuerySet[DeclaredSpec]:
        return DeclaredSpec.objects.select_related("offer", "offer__vendor").order_by("offer_id")

    def perform_service_update(
        self, spec: DeclaredSpec, data: dict[str, Any], reason: str, version: int | None
    ) -> DeclaredSpec:
        return services.declared_spec_update(
            actor=self.request.user,
            spec=spec,
            fields=data,
            reason=reason,
            expected_version=version,
        )


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("offers", OfferViewSet, basename="offer")
    router.register("declared-specs", DeclaredSpecViewSet, basename="declared-spec")
    return []
