"""REST API for vendors."""

from typing import Any

from django.http import HttpResponse
from django.urls import URLPattern
from django.utils import timezone
from django.utils.http import content_disposition_header
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter

from apps.core.api import TrackedSerializer, TrackedViewSetMixin
from apps.core.downloads import StoredFileConflict, changed_message
from apps.core.parsers import JSONParser
from apps.core.permissions import RolePermission
from apps.vendors import services
from apps.vendors.models import Certification, SubProcessor, Vendor, VendorContact
from apps.vendors.rules import certification_state
from apps.vendors.selectors import ReportChanged, certification_report_bytes


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
            "owner",
            "derived_tier",
            "tier_override",
            "tier_override_reason",
            "tier",
            "review_cycle_months",
            "review_cycle",
            "created_at",
            "updated_at",
            "version",
            "change_reason",
        ]
        read_only_fields = [
            "created_at",
            "updated_at",
            "derived_tier",
            "owner",
            "tier_override",
            "tier_override_reason",
            "review_cycle_months",
        ]

    tier = serializers.CharField(read_only=True, help_text="The tier in force.")
    review_cycle = serializers.IntegerField(read_only=True, help_text="Months between reviews.")


class StewardshipSerializer(TrackedSerializer):
    """The owner and review cycle (procurement), and the tier set by hand with its reason
    (procurement or legal; a reason is required when a tier is set)."""

    class Meta:
        model = Vendor
        fields = [
            "owner",
            "tier_override",
            "tier_override_reason",
            "review_cycle_months",
            "version",
            "change_reason",
        ]


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

    @action(
        detail=True,
        methods=["patch"],
        url_path="stewardship",
        serializer_class=StewardshipSerializer,
        required_permissions={"PATCH": "vendors.view_vendor"},
    )
    def stewardship(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        """PATCH the owner, review cycle and tier set by hand (the service checks who)."""
        vendor = self.get_object()
        serializer = StewardshipSerializer(vendor, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        reason = data.pop("change_reason", "")
        version = data.pop("version", None)
        saved = services.vendor_stewardship_save(
            actor=request.user, vendor=vendor, fields=data, reason=reason, expected_version=version
        )
        return Response(VendorSerializer(saved).data)


# --- the vendor's master data ------------------------------------------------------------


class _MasterDataViewSet(
    TrackedViewSetMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    permission_classes = [RolePermission]
    filterset_fields = ["vendor"]
    # The services that add the record and change it, and the change's name for it.
    create_service: Any
    update_service: Any
    record_argument: str

    def perform_service_create(self, data: dict[str, Any]) -> Any:
        return self.create_service(actor=self.request.user, **data)

    def perform_service_update(
        self, record: Any, data: dict[str, Any], reason: str, version: int | None
    ) -> Any:
        return self.update_service(
            actor=self.request.user,
            **{self.record_argument: record},
            fields=data,
            reason=reason,
            expected_version=version,
        )


class _MasterDataSerializer(TrackedSerializer):
    """A record kept once per vendor: its vendor is chosen when it is added, then fixed."""

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        if self.instance is not None:
            fields["vendor"].read_only = True
        return fields


class ContactSerializer(_MasterDataSerializer):
    class Meta:
        model = VendorContact
        fields = [
            "id",
            "vendor",
            *services.CONTACT_FIELDS,
            "created_at",
            "version",
            "change_reason",
        ]
        read_only_fields = ["created_at"]


class ContactViewSet(_MasterDataViewSet):
    queryset = VendorContact.objects.order_by("vendor_id", "name", "pk")
    serializer_class = ContactSerializer
    required_permissions = {
        "GET": "vendors.view_vendorcontact",
        "POST": "vendors.add_vendorcontact",
        "PUT": "vendors.change_vendorcontact",
        "PATCH": "vendors.change_vendorcontact",
    }
    create_service = staticmethod(services.contact_create)
    update_service = staticmethod(services.contact_update)
    record_argument = "contact"


class SubProcessorSerializer(_MasterDataSerializer):
    class Meta:
        model = SubProcessor
        fields = [
            "id",
            "vendor",
            *services.SUB_PROCESSOR_FIELDS,
            "created_at",
            "version",
            "change_reason",
        ]
        read_only_fields = ["created_at"]


class SubProcessorViewSet(_MasterDataViewSet):
    queryset = SubProcessor.objects.order_by("vendor_id", "name", "pk")
    serializer_class = SubProcessorSerializer
    required_permissions = {
        "GET": "vendors.view_subprocessor",
        "POST": "vendors.add_subprocessor",
        "PUT": "vendors.change_subprocessor",
        "PATCH": "vendors.change_subprocessor",
    }
    create_service = staticmethod(services.sub_processor_create)
    update_service = staticmethod(services.sub_processor_update)
    record_argument = "sub_processor"


class CertificationSerializer(_MasterDataSerializer):
    report = serializers.FileField(
        write_only=True, required=False, help_text="The report or certificate, a PDF."
    )
    state = serializers.SerializerMethodField()

    class Meta:
        model = Certification
        fields = [
            "id",
            "vendor",
            *services.CERTIFICATION_FIELDS,
            "report",
            "report_name",
            "report_sha256",
            "report_size_bytes",
            "state",
            "created_at",
            "version",
            "change_reason",
        ]
        read_only_fields = ["created_at", "report_name", "report_sha256", "report_size_bytes"]

    def get_state(self, cert: Certification) -> str:
        """valid, expiring (within 60 days) or expired, as of today."""
        return str(certification_state(cert.expires_on, today=timezone.localdate()))


class CertificationViewSet(_MasterDataViewSet):
    queryset = Certification.objects.order_by("vendor_id", "expires_on", "pk")
    serializer_class = CertificationSerializer
    parser_classes = [JSONParser, MultiPartParser, FormParser]
    required_permissions = {
        "GET": "vendors.view_certification",
        "POST": "vendors.add_certification",
        "PUT": "vendors.change_certification",
        "PATCH": "vendors.change_certification",
    }
    create_service = staticmethod(services.certification_create)
    update_service = staticmethod(services.certification_update)
    record_argument = "certification"

    @action(detail=True, methods=["get"], url_path="report")
    def report(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> HttpResponse:
        """The stored report, checked against its SHA-256 (409 when it no longer matches)."""
        cert = self.get_object()
        try:
            raw = certification_report_bytes(cert)
        except ReportChanged:
            raise StoredFileConflict(changed_message()) from None
        response = HttpResponse(raw, content_type="application/pdf")
        response["Content-Disposition"] = content_disposition_header(True, cert.report_name)
        response["X-Content-SHA256"] = cert.report_sha256
        return response


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("vendors", VendorViewSet, basename="vendor")
    router.register("vendor-contacts", ContactViewSet, basename="vendor-contact")
    router.register("vendor-sub-processors", SubProcessorViewSet, basename="vendor-sub-processor")
    router.register("vendor-certifications", CertificationViewSet, basename="vendor-certification")
    return []
