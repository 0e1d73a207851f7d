"""REST API: a case's sets (list, statistics, download, upload) and the harness's fetch."""

import tempfile
from tempfile import SpooledTemporaryFile

from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db.models import QuerySet
from django.http import FileResponse, HttpRequest, HttpResponse
from django.template.defaultfilters import filesizeformat
from django.urls import URLPattern, path
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.utils.mediatypes import media_type_matches
from rest_framework.views import APIView

from apps.cases.selectors import case_get_for
from apps.core.downloads import stored_file_api_response
from apps.core.parsers import UnreadBodyParser
from apps.core.permissions import RolePermission
from apps.core.uploads import MULTIPART_SLACK_BYTES, api_declared_over, refused_unread
from apps.evidence.api import HarnessTokenOnly
from apps.evidence.authentication import HarnessTokenAuthentication
from apps.evidence.models import HarnessToken
from apps.workloads import services
from apps.workloads.models import SetKind, WorkloadSet
from apps.workloads.selectors import harness_set, set_stored_file

CHUNK_BYTES = 256 * 1024
# Past this size a body being received is kept on disk, never in memory.
SPOOL_MEMORY_BYTES = 1024 * 1024


class WorkloadSetSerializer(serializers.ModelSerializer):
    uploaded_by: serializers.Field = serializers.StringRelatedField()

    class Meta:
        model = WorkloadSet
        fields = [
            "id",
            "case",
            "kind",
            "name",
            "set_version",
            "sha256",
            "size_bytes",
            "item_count",
            "statistics",
            "uploaded_by",
            "created_at",
        ]
        read_only_fields = fields


class WorkloadSetViewSet(viewsets.ReadOnlyModelViewSet):
    """A case's prompt and core sample sets: digests and statistics; ``raw/`` the lines."""

    serializer_class = WorkloadSetSerializer
    permission_classes = [RolePermission]
    required_permissions = {"GET": "workloads.view_workloadset"}
    filterset_fields = ["case", "kind", "sha256"]

    def get_queryset(self) -> QuerySet[WorkloadSet]:
        return WorkloadSet.objects.select_related("uploaded_by").order_by("case_id", "kind", "pk")

    @extend_schema(responses={(200, "application/x-ndjson"): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"])
    def raw(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> FileResponse:
        return stored_file_api_response(request, set_stored_file(self.get_object()))


def _spooled_body(request: Request, limit: int) -> SpooledTemporaryFile[bytes] | None:
    """The body, read in chunks into a spool (on disk past 1 MiB); None when over ``limit``."""
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY_BYTES)  # noqa: SIM115 - returned
    size = 0
    while chunk := request._request.read(CHUNK_BYTES):
        size += len(chunk)
        if size > limit:
            spool.close()
            return None
        spool.write(chunk)
    spool.seek(0)
    return spool


def _refusal(error: ValidationError) -> Response:
    body: dict = {"detail": " ".join(error.messages)}
    if isinstance(error, services.SetRefusedError):
        body["total"] = error.total
        body["refusals"] = [{"line": r.line, "reason": r.reason} for r in error.refusals]
    return Response(body, status=status.HTTP_400_BAD_REQUEST)


class SetBodyParser(UnreadBodyParser):
    """Any body but a multipart form is the set itself, which the view reads as it comes.

    A session client's CSRF check parses the body before the view runs: without a parser
    for its type that is a 415, and a JSON parser would consume the set (a JSONL file of
    more than one line is not one JSON document). This one reads nothing.
    """

    media_type = "*/*"


class WorkloadSetFormSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="The JSONL set")
    kind = serializers.ChoiceField(choices=SetKind.values, required=False)
    name = serializers.CharField(required=False, max_length=100)


class CaseSetUploadView(APIView):
    """POST a JSONL set as the body: ``?kind=prompts|samples&name=…``; or as a multipart
    form's ``file`` (``kind`` and ``name`` as fields or in the query), as a page sends it.
    Token and session clients alike; a session client sends its CSRF token."""

    permission_classes = [RolePermission]
    required_permissions = {"POST": "workloads.add_workloadset"}
    parser_classes = [MultiPartParser, SetBodyParser]

    @extend_schema(
        request={
            "application/x-ndjson": OpenApiTypes.BINARY,
            "text/plain": str,
            "multipart/form-data": WorkloadSetFormSerializer,
        },
        parameters=[
            OpenApiParameter("kind", str, enum=SetKind.values),
            OpenApiParameter("name", str),
        ],
        responses={
            201: WorkloadSetSerializer,
            400: OpenApiResponse(description="Refused: every line's reason; nothing stored"),
            413: OpenApiResponse(description="Larger than WORKLOAD_SET_MAX_BYTES"),
        },
    )
    def post(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk, offer_count=False)
        limit = services.set_max_bytes()
        form = media_type_matches("multipart/form-data", request.content_type)
        body: UploadedFile | SpooledTemporaryFile[bytes] | None
        if form:
            attached: UploadedFile | None = request.FILES.get("file")
            if attached is None:
                return Response(
                    {"file": [_("Attach the set as the form's 'file'.")]},
                    status=status.HTTP_400_BAD_REQUEST,
                )
            body, too_large = attached, (attached.size or 0) > limit
        else:
            body = _spooled_body(request, limit)
            too_large = body is None
        if body is None or too_large:
            return Response(
                {
                    "detail": _("The set is larger than %(limit)s.")
                    % {"limit": filesizeformat(limit)}
                },
                status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            )

        fields = request.POST if form else {}

        def given(name: str) -> str:
            return str(fields.get(name) or request.query_params.get(name) or "")

        try:
            with body:
                workload_set = services.workload_set_upload(
                    actor=request.user,
                    case=case,
                    kind=given("kind"),
                    name=given("name")[:100],
                    upload=body,
                )
        except ValidationError as error:
            return _refusal(error)
        except PermissionDenied as error:
            return Response({"detail": str(error)}, status=status.HTTP_403_FORBIDDEN)
        return Response(WorkloadSetSerializer(workload_set).data, status=status.HTTP_201_CREATED)


class HarnessSetView(APIView):
    """The harness fetches one set of its token's case, read-only: by digest, else the set
    the case's acceptance plan requires, else the newest of that kind."""

    authentication_classes = [
        HarnessTokenAuthentication,
        TokenAuthentication,
        SessionAuthentication,
    ]
    permission_classes = [HarnessTokenOnly]

    @extend_schema(
        parameters=[
            OpenApiParameter("kind", str, enum=SetKind.values, required=True),
            OpenApiParameter("sha256", str, description="The set's SHA-256; default: see above"),
        ],
        responses={
            (200, "application/x-ndjson"): OpenApiTypes.BINARY,
            404: OpenApiResponse(description="The token's case holds no such set"),
        },
        description="The set's exact bytes; `X-Content-SHA256` is their digest.",
    )
    def get(self, request: Request) -> FileResponse:
        assert isinstance(request.auth, HarnessToken)  # HarnessTokenOnly lets no other in
        kind = request.query_params.get("kind")

        sha256 = request.query_params.get("sha256") or None
        if kind not in SetKind.values:
            raise NotFound("No such kind of set: prompts or samples.")
        workload_set = harness_set(request.auth.case, kind, sha256)
        if workload_set is None:
            raise NotFound("The token's case holds no such set.")
        return stored_file_api_response(request, set_stored_file(workload_set))


def _declared_over(request: HttpRequest) -> HttpResponse | None:
    """A set sent as the body is refused when its declared length is over the limit; one in
    a multipart form gets room for the form's envelope too."""
    form = (request.content_type or "").startswith("multipart/")
    slack = MULTIPART_SLACK_BYTES if form else 0
    return api_declared_over(services.set_max_bytes, slack_bytes=slack)(request)


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("workload-sets", WorkloadSetViewSet, basename="workload-set")
    return [
        path(
            "cases/<int:case_pk>/workload-sets/",
            # Refused from the declared length, before anything (the CSRF check, the multipart
            # parser) reads it.
            refused_unread(_declared_over)(CaseSetUploadView.as_view()),
            name="workload-set-upload",
        ),
        path("harness/sets/", HarnessSetView.as_view(), name="harness-set"),
    ]
