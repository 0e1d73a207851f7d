"""REST API: a case's packets, requesting a new one (202 + status URL), downloading one.

A "packet" here is any signed document of the case: the whole-case packet or
one of the four deliverables issued on its own (``kind``).
"""

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.http import FileResponse
from django.urls import URLPattern, path, reverse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import renderers, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.views import APIView

from apps.cases.selectors import case_get_for
from apps.core.downloads import stored_file_api_response
from apps.core.permissions import RolePermission
from apps.packets.models import AuditPacket, DocumentKind, PacketRequest, kind_filter
from apps.packets.selectors import (
    packet_get_for,
    packet_request_get_for,
    packet_stored_file,
    packets_of_case,
)
from apps.packets.services import packet_request_create


class AuditPacketSerializer(serializers.ModelSerializer):
    issued_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    download_url = serializers.SerializerMethodField()
    kind = serializers.SerializerMethodField(help_text="What the document is.")

    class Meta:
        model = AuditPacket
        fields = [
            "id",
            "number",
            "kind",
            "case",
            "issued_by",
            "created_at",
            "sha256",
            "size_bytes",
            "page_count",
            "manifest_sha256",
            "signer_subject",
            "signer_certificate_sha256",
            "signed_at",
            "download_url",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ChoiceField(choices=DocumentKind.choices))
    def get_kind(self, packet: AuditPacket) -> str:
        return packet.document_kind.value

    def get_download_url(self, packet: AuditPacket) -> str:
        return self.context["request"].build_absolute_uri(
            reverse("packet-download", kwargs={"pk": packet.pk})
        )


class PacketChapterSerializer(serializers.Serializer):
    title = serializers.CharField(read_only=True)
    pages = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="Pages, once the chapter is laid out."
    )


class PacketRequestSerializer(serializers.ModelSerializer):
    chapters = PacketChapterSerializer(many=True, read_only=True, allow_null=True)
    requested_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    status_url = serializers.SerializerMethodField()
    packet = serializers.SerializerMethodField()
    kind = serializers.SerializerMethodField(help_text="What the document is.")

    class Meta:
        model = PacketRequest
        fields = [
            "id",
            "number",
            "kind",
            "case",
            "requested_by",
            "status",
            "progress_pct",
            "step",
            "chapters",
            "error",
            "language",
            "created_at",
            "status_url",
            "packet",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ChoiceField(choices=DocumentKind.choices))
    def get_kind(self, packet_request: PacketRequest) -> str:
        return packet_request.document_kind.value

    def get_status_url(self, packet_request: PacketRequest) -> str:
        return self.context["request"].build_absolute_uri(
            reverse("packet-request-detail", kwargs={"pk": packet_request.pk})
        )

    @extend_schema_field(AuditPacketSerializer(allow_null=True))
    def get_packet(self, packet_request: PacketRequest) -> dict | None:
        packet = getattr(packet_request, "packet", None)
        if packet is None:
            return None
        return AuditPacketSerializer(packet, context=self.context).data


class PacketRequestCreateSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=DocumentKind.choices,
        required=False,
        help_text="The whole-case packet (default), or one deliverable issued on its own; "
        "a deliverable is issued by the roles that own its area.",
    )
    language = serializers.ChoiceField(
        choices=settings.LANGUAGES,
        required=False,
        help_text="The language the packet is written in; by default the request's language.",
    )


class CasePacketsView(APIView):
    """GET: the packets issued for a case (``?kind=`` for one kind). POST: request a new
    packet or deliverable (202, with a status URL)."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "packets.view_auditpacket", "POST": "packets.add_packetrequest"}

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "kind", str, enum=DocumentKind.values, description="Only documents of this kind."
            )
        ],
        responses={200: AuditPacketSerializer(many=True)},
    )
    def get(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        packets = packets_of_case(case)
        kind = request.query_params.get("kind")
        if kind:
            if kind not in DocumentKind.values:
                raise serializers.ValidationError(
                    {
                        "kind": [
                            _("Documents are of these kinds: %(kinds)s.")
                            % {"kinds": ", ".join(DocumentKind.values)}
                        ]
                    }
                )
            packets = packets.filter(kind_filter(kind, prefix="request__"))
        return Response(
            AuditPacketSerializer(packets, many=True, context={"request": request}).data
        )

    @extend_schema(request=PacketRequestCreateSerializer, responses={202: PacketRequestSerializer})
    def post(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        given = PacketRequestCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        packet_request = packet_request_create(
            actor=request.user,
            case=case,
            language=given.validated_data.get("language"),
            kind=given.validated_data.get("kind"),
        )
        packet_request = packet_request_get_for(request.user, packet_request.pk)
        body = PacketRequestSerializer(packet_request, context={"request": request}).data
        return Response(
            body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["status_url"]}
        )


class PacketRequestView(APIView):
    """Progress of one packet request; once done, the issued packet."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "packets.view_auditpacket"}

    @extend_schema(responses={200: PacketRequestSerializer})
    def get(self, request: Request, pk: int) -> Response:
        packet_request = packet_request_get_for(request.user, pk)
        return Response(PacketRequestSerializer(packet_request, context={"request": request}).data)


class PdfRenderer(renderers.BaseRenderer):
    """Lets a client ask for ``Accept: application/pdf``; the view answers with the file itself."""

    media_type = "application/pdf"
    format = "pdf"
    charset = None
    render_style = "binary"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> str | bytes:
        return data


class PacketDownloadView(APIView):
    """The signed PDF, byte for byte as issued."""

    renderer_classes = [renderers.JSONRenderer, PdfRenderer]
    permission_classes = [RolePermission]
    required_permissions = {"GET": "packets.view_auditpacket"}

    @extend_schema(
        responses={(200, "application/pdf"): OpenApiResponse(response=OpenApiTypes.BINARY)}
    )
    def get(self, request: Request, pk: int) -> FileResponse:
        packet = packet_get_for(request.user, pk)

        return stored_file_api_response(request, packet_stored_file(packet))


def register(router: BaseRouter) -> list[URLPattern]:
    return [
        path("cases/<int:case_pk>/packets/", CasePacketsView.as_view(), name="case-packets"),
        path(
            "packet-requests/<int:pk>/", PacketRequestView.as_view(), name="packet-request-detail"
        ),
        path("packets/<int:pk>/download/", PacketDownloadView.as_view(), name="packet-download"),
    ]
