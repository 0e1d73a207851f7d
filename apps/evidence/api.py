"""REST API: the harness upload, the published schema, bundles, verifications and tokens."""

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import FileResponse, HttpRequest, HttpResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, mixins, serializers, status, viewsets
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.views import APIView

from apps.cases.models import ProcurementCase
from apps.core.bounds import CHANGE_REASON_MAX_LENGTH
from apps.core.downloads import stored_file_api_response
from apps.core.permissions import RolePermission
from apps.core.uploads import UploadPolicy, api_refused
from apps.evidence import baseline_api, services
from apps.evidence import bundle as bundle_reader
from apps.evidence.authentication import HarnessTokenAuthentication
from apps.evidence.models import EvidenceBundle, EvidenceUpload, HarnessToken, SpecVerification
from apps.evidence.selectors import bundle_stored_file
from apps.offers.models import Offer


def max_bytes() -> int:
    return settings.EVIDENCE_MAX_BYTES


class HarnessTokenOnly(BasePermission):
    """The upload accepts harness tokens and nothing else; a signed-in user gets 403."""

    message = "Only a harness token may upload evidence (Authorization: Token dlh_…)."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return isinstance(request.auth, HarnessToken)


class SpecVerificationSerializer(serializers.ModelSerializer):
    class Meta:
        model = SpecVerification
        fields = ["id", "bundle", "offer", "verdict", "checks", "headline", "rules_version"]
        fields += ["sources", "findings", "measured_at", "created_at"]


class EvidenceBundleSerializer(serializers.ModelSerializer):
    verdict = serializers.CharField(source="verification.verdict", read_only=True, default=None)
    verification: serializers.PrimaryKeyRelatedField[SpecVerification] = (
        serializers.PrimaryKeyRelatedField(read_only=True)
    )
    token_prefix = serializers.CharField(source="token.prefix", read_only=True, default=None)
    evidence_url = serializers.SerializerMethodField(
        help_text="The bundle's evidence page, where a person reads its verdict"
    )

    class Meta:
        model = EvidenceBundle
        fields = [
            "id",
            "case",
            "offer",
            "token_prefix",
            "sha256",
            "size",
            "format_version",
            "harness_version",
            "bundle_uuid",
            "run_started_at",
            "run_finished_at",
            "received_at",
            "host_id",
            "host_name",
            "gpu_uuids",
            "nonce",
            "client_summary_disagreements",
            "verification",
            "verdict",
            "evidence_url",
        ]

    def get_evidence_url(self, bundle: EvidenceBundle) -> str:
        return evidence_url(bundle.pk, self.context.get("request"))


def evidence_url(bundle_id: int, request: HttpRequest | None) -> str:
    """The bundle's page for people (absolute where the request says where the site is)."""
    location = reverse("evidence:detail", args=[bundle_id])
    return request.build_absolute_uri(location) if request is not None else location


class EvidenceBundleDetailSerializer(EvidenceBundleSerializer):
    class Meta(EvidenceBundleSerializer.Meta):
        fields = [*EvidenceBundleSerializer.Meta.fields, "summary"]


def upload_status(upload: EvidenceUpload, request: HttpRequest) -> dict:
    """Where an upload stands (the 202 answer and its status URL; built by hand, cheaply)."""
    location = reverse("evidence-upload-status", args=[upload.pk])
    verification = getattr(upload.bundle, "verification", None) if upload.bundle_id else None
    return {
        "id": upload.pk,
        "case": upload.case_id,
        "sha256": upload.sha256,
        "size": upload.size,
        "state": upload.state,
        "received_at": upload.received_at.isoformat().replace("+00:00", "Z"),
        "finished_at": (
            upload.finished_at.isoformat().replace("+00:00", "Z") if upload.finished_at else None
        ),
        "bundle": upload.bundle_id,
        "verdict": verification.verdict if verification else None,
        "evidence_url": evidence_url(upload.bundle_id, request) if upload.bundle_id else None,
        "detail": upload.refusal,
        "field": upload.refusal_field,
        "http_status": upload.refusal_status,
        "status_url": request.build_absolute_uri(location),
    }


UPLOAD_STATUS = inline_serializer(
    "EvidenceUploadStatus",
    {
        "id": serializers.IntegerField(),
        "case": serializers.IntegerField(),
        "sha256": serializers.CharField(),
        "size": serializers.IntegerField(),
        "state": serializers.ChoiceField(choices=EvidenceUpload.State.choices),
        "received_at": serializers.DateTimeField(),
        "finished_at": serializers.DateTimeField(allow_null=True),
        "bundle": serializers.IntegerField(allow_null=True),
        "verdict": serializers.CharField(allow_null=True),
        "evidence_url": serializers.URLField(
            allow_null=True, help_text="The verified bundle's evidence page"
        ),
        "detail": serializers.CharField(help_text="Why it was refused or failed"),
        "field": serializers.CharField(help_text="The part of the bundle refused"),
        "http_status": serializers.IntegerField(
            allow_null=True, help_text="The status a refusal would have had before workers"
        ),
        "status_url": serializers.URLField(),
    },
)


class EvidenceUploadView(APIView):
    """POST a bundle (the exact bytes the harness wrote) with a harness token."""

    authentication_classes = [
        HarnessTokenAuthentication,
        TokenAuthentication,
        SessionAuthentication,
    ]
    permission_classes = [HarnessTokenOnly]

    @extend_schema(
        request={"application/json": OpenApiTypes.OBJECT},
        responses={
            201: EvidenceBundleSerializer,
            200: OpenApiResponse(EvidenceBundleSerializer, "The same bundle, already stored"),
            202: OpenApiResponse(
                UPLOAD_STATUS,
                "Stored and being verified by a worker: poll status_url (also in Location)",
            ),
            400: OpenApiResponse(
                description="Not the schema, digest mismatch, unknown format "
                "version, or a nonce not issued for this token"
            ),
            401: OpenApiResponse(description="No or unknown token"),
            403: OpenApiResponse(description="Expired or revoked token, or not a harness token"),
            413: OpenApiResponse(description="Larger than EVIDENCE_MAX_BYTES"),
        },
        description="Stores the raw bundle byte for byte with its SHA-256; then the server "
        "reads it (format, schema, artifact digests, nonce), recomputes every summary from the "
        "raw events and verifies it against the offer's declared spec, the datasheet and the "
        "case's SLOs. Where that ran before the answer (no worker: the embedded default), the "
        "answer is the bundle (201) or the refusal (4xx); where a worker runs it, the answer is "
        "202 with the upload's status URL, which ends `verified` (with the bundle) or "
        "`refused` (with the reason). Re-sending the same bytes returns what is held.",
    )
    def post(self, request: Request) -> Response | HttpResponse:
        if refusal := BUNDLE_UPLOAD_POLICY.refuse(request, api_refused):
            return refusal
        assert isinstance(request.auth, HarnessToken)  # HarnessTokenOnly lets no other in

        limit = max_bytes()
        raw = request._request.read(limit + 1)  # never more than the limit, whatever was declared
        if len(raw) > limit:
            return _too_large(limit)
        if not raw:
            return Response({"detail": "The body is empty."}, status=status.HTTP_400_BAD_REQUEST)
        try:
            receipt = services.upload_receive(
                token=request.auth,
                raw=raw,
                declared_sha256=request.META.get("HTTP_X_BUNDLE_SHA256"),
            )
        except bundle_reader.BundleRefused as error:
            return _refused(error.message, error.field, error.status)
        upload = receipt.upload
        if receipt.bundle is not None:
            bundle = EvidenceBundle.objects.select_related("verification", "token").get(
                pk=receipt.bundle.pk
            )
            return Response(
                EvidenceBundleSerializer(bundle, context={"request": request}).data,
                status=status.HTTP_201_CREATED if receipt.created else status.HTTP_200_OK,
            )
        if upload.finished:  # read in this process, and refused (or failed)
            return _refused(upload.refusal, upload.refusal_field, upload.refusal_status or 400)
        body = upload_status(upload, request)
        return Response(
            body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["status_url"]}
        )


def _refused(message: str, field: str | None, code: int) -> Response:
    body = {"detail": message}
    if field:
        body["field"] = field
    return Response(body, status=code)


class UploadReader(BasePermission):
    """The harness token that sent an upload, or a person who may read the case's evidence."""

    message = "This upload was sent with another harness token."

    # ``view`` is one that names ``person_permission``, the permission a person needs.
    def has_permission(self, request: Request, view: Any) -> bool:
        if isinstance(request.auth, HarnessToken):
            return True
        user = request.user
        return bool(user and user.is_authenticated and user.has_perm(view.person_permission))

    def has_object_permission(
        self, request: Request, view: APIView, upload: EvidenceUpload
    ) -> bool:
        if isinstance(request.auth, HarnessToken):
            return upload.token_id == request.auth.pk
        return True


class EvidenceUploadStatusView(APIView):
    """Where an upload stands: received (being verified), verified, refused or failed."""

    authentication_classes = EvidenceUploadView.authentication_classes
    permission_classes = [UploadReader]
    person_permission = "evidence.view_evidenceupload"

    @extend_schema(
        responses={
            200: UPLOAD_STATUS,
            404: OpenApiResponse(description="No such upload, or one another token sent"),
        }
    )
    def get(self, request: Request, pk: int) -> Response:
        uploads = EvidenceUpload.objects.select_related("bundle__verification").filter(pk=pk)
        detail = "No such upload."
        if isinstance(request.auth, HarnessToken):
            # Another token's upload is answered as unknown, so ids tell a token nothing.
            uploads = uploads.filter(token=request.auth)
            detail = "No upload with this id was sent with this harness token."
        upload = uploads.first()
        if upload is None:
            raise exceptions.NotFound(detail)
        self.check_object_permissions(request, upload)
        return Response(upload_status(upload, request))


def _too_large_message(limit: int) -> str:
    return f"The bundle is larger than the {limit}-byte limit (EVIDENCE_MAX_BYTES)."


def _too_large(limit: int) -> Response:
    return Response(
        {"detail": _too_large_message(limit)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    )


# The body is the bundle itself: no envelope around it.
BUNDLE_UPLOAD_POLICY = UploadPolicy(max_bytes, envelope_bytes=0, too_large=_too_large_message)


class EvidenceSchemaView(APIView):
    """The published JSON Schema of the bundle format, the same file the harness ships."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request) -> Response:
        return Response(bundle_reader.schema())


class EvidenceBundleViewSet(viewsets.ReadOnlyModelViewSet):
    """Stored bundles with their verdict; ``raw/`` downloads the exact bytes uploaded."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "evidence.view_evidencebundle"}
    filterset_fields = ["case", "offer", "sha256"]

    def get_queryset(self) -> QuerySet[EvidenceBundle]:
        queryset = EvidenceBundle.objects.select_related("verification", "token").order_by(
            "-received_at", "-pk"
        )
        return queryset if self.action != "list" else queryset.defer("summary")

    def get_serializer_class(self) -> type[EvidenceBundleSerializer]:
        if self.action == "retrieve":
            return EvidenceBundleDetailSerializer
        return EvidenceBundleSerializer

    @extend_schema(responses={(200, "application/json"): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"])
    def raw(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> FileResponse:
        bundle = self.get_object()
        return stored_file_api_response(request, bundle_stored_file(bundle), as_attachment=False)

    @extend_schema(responses={200: baseline_api.COMPARISON})
    @action(detail=True, methods=["get"])
    def comparison(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        """The bundle against the pinned baseline of its offer (else of its case)."""
        return Response(baseline_api.comparison_body(self.get_object()))


class SpecVerificationViewSet(viewsets.ReadOnlyModelViewSet):
    """Each upload's verification of its offer, newest first: composed from every bundle of
    the offer then held, each check naming the bundle it comes from (``sources``: the bundle
    of each part; ``findings``: what keeps it from being confirmed). The newest for an offer
    is the offer's verification."""

    serializer_class = SpecVerificationSerializer
    permission_classes = [RolePermission]
    required_permissions = {"GET": "evidence.view_specverification"}
    filterset_fields = ["offer", "verdict", "bundle__case"]

    def get_queryset(self) -> QuerySet[SpecVerification]:
        return SpecVerification.objects.order_by("-created_at", "-pk")


class HarnessTokenSerializer(serializers.ModelSerializer):
    case = serializers.PrimaryKeyRelatedField(queryset=ProcurementCase.objects.all())
    offer = serializers.PrimaryKeyRelatedField(
        queryset=Offer.objects.all(), required=False, allow_null=True
    )
    ttl_hours = serializers.IntegerField(
        write_only=True, required=False, min_value=1, max_value=services.MAX_TOKEN_TTL_HOURS
    )
    state = serializers.SerializerMethodField()
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )

    class Meta:
        model = HarnessToken
        fields = ["id", "case", "offer", "label", "prefix", "nonce", "ttl_hours", "state"]
        fields += ["created_by", "created_at", "expires_at", "revoked_at", "last_used_at"]
        read_only_fields = ["prefix", "nonce", "expires_at", "revoked_at", "last_used_at"]

    def get_state(self, token: HarnessToken) -> str:
        return token.state(timezone.now())


class RevokeTokenSerializer(serializers.Serializer):
    change_reason = serializers.CharField(max_length=CHANGE_REASON_MAX_LENGTH)


class HarnessTokenViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Harness tokens; POST issues one and returns it in clear, once, with its run nonce."""

    serializer_class = HarnessTokenSerializer
    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "evidence.view_harnesstoken",
        "POST": "evidence.add_harnesstoken",
    }
    filterset_fields = ["case", "offer"]

    def get_queryset(self) -> QuerySet[HarnessToken]:
        return HarnessToken.objects.select_related("created_by").order_by("-created_at")

    @extend_schema(
        responses={
            201: inline_serializer(
                "IssuedHarnessToken",
                {
                    "token": serializers.CharField(help_text="Shown once; stored only hashed."),
                    "nonce": serializers.CharField(),
                    "record": HarnessTokenSerializer(),
                },
            )
        }
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = self.get_serializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        issued = services.harness_token_create(
            actor=request.user,
            case=data["case"],
            offer=data.get("offer"),
            ttl_hours=data.get("ttl_hours"),
            label=data.get("label", ""),
        )
        return Response(
            {
                "token": issued.token,
                "nonce": issued.record.nonce,
                "record": HarnessTokenSerializer(issued.record).data,
            },
            status=status.HTTP_201_CREATED,
            headers={"Cache-Control": "no-store"},
        )

    @extend_schema(
        request=RevokeTokenSerializer,
        responses={200: HarnessTokenSerializer},
    )
    @action(
        detail=True, methods=["post"], required_permissions={"POST": "evidence.change_harnesstoken"}
    )
    def revoke(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        token = self.get_object()
        body = request.data
        given = body.get("change_reason") if isinstance(body, dict) else None
        if not (given if isinstance(given, str) else "").strip():
            raise exceptions.ValidationError({"change_reason": ["Say why the token is revoked."]})
        checked = RevokeTokenSerializer(data={"change_reason": given})
        checked.is_valid(raise_exception=True)
        reason = checked.validated_data["change_reason"].strip()
        token = services.harness_token_revoke(actor=request.user, token=token, reason=reason)
        return Response(HarnessTokenSerializer(token).data)


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("evidence-bundles", EvidenceBundleViewSet, basename="evidence-bundle")
    router.register("spec-verifications", SpecVerificationViewSet, basename="spec-verification")
    router.register("harness-tokens", HarnessTokenViewSet, basename="harness-token")
    router.register("baselines", baseline_api.BaselineViewSet, basename="baseline")
    return [
        path("evidence/", EvidenceUploadView.as_view(), name="evidence-upload"),
        path("evidence/schema/", EvidenceSchemaView.as_view(), name="evidence-schema"),
        path(
            "evidence/uploads/<int:pk>/",
            EvidenceUploadStatusView.as_view(),
            name="evidence-upload-status",
        ),
    ]
