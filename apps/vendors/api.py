"""REST API for vendors."""

from typing import Any

from django.urls import URLPattern
from rest_framework import mixins, viewsets
from rest_framework.routers import BaseRouter

from apps.core.api import TrackedSerializer, TrackedViewSetMixin
from apps.core.permissions import RolePermission
from apps.vendors import services
from apps.vendors.models import Vendor


class VendorSerializer(TrackedSerializer):
    class Meta:
        model = Vendor
        fields = [
            "id",
            "name",
            "jurisdiction",
            "regions",
            "contacts",
            "website",
            "created_at",
            "updated_at",
            "version",
            "change_reason",
        ]
        read_only_fields = ["created_at", "updated_at"]


class VendorViewSet(
    TrackedViewSetMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    queryset = Vendor.objects.order_by("name")
    serializer_class = VendorSerializer
    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "vendors.view_vendor",
        "POST": "vendors.add_vendor",
        "PUT": "vendors.change_vendor",
        "PATCH": "vendors.change_vendor",
    }
    filterset_fields = ["jurisdiction"]
    search_fields = ["name", "regions"]
    ordering_fields = ["name", "created_at"]

    def perform_service_create(self, data: dict[str, Any]) -> Vendor:
        return services.vendor_create(actor=self.request.user, **data)

    def perform_service_update(
        self, vendor: Vendor, data: dict[str, Any], reason: str, version: int | None
    ) -> Vendor:
        return services.vendor_update(
            actor=self.request.user,
            vendor=vendor,
            fields=data,
            reason=reason,
            expected_version=version,
        )


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("vendors", VendorViewSet, basename="vendor")
    return []
