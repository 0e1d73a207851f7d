"""Audit endpoints: chain status and verification, and a case's timeline as JSON."""

from django.urls import URLPattern, path
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from apps.audit.forms import TimelineFilterForm
from apps.audit.models import ChainVerification
from apps.audit.selectors import chain_status
from apps.audit.sources import case_sources_for
from apps.audit.tasks import verify_audit_chain_task
from apps.audit.timeline import BadCursor, CaseTimeline, Cursor
from apps.cases.selectors import case_get_for
from apps.core.permissions import RolePermission


class AuditChainStatusSerializer(serializers.Serializer):
    head_seq = serializers.IntegerField()
    head_hash = serializers.CharField()
    verified = serializers.BooleanField(allow_null=True)
    verified_at = serializers.DateTimeField(allow_null=True)
    verified_head_seq = serializers.IntegerField(allow_null=True)
    verified_head_hash = serializers.CharField(allow_null=True)
    problem_count = serializers.IntegerField()
    first_problem = serializers.CharField()


class AuditChainVerificationSerializer(serializers.ModelSerializer):
    class Meta:
        model = ChainVerification
        fields = [
            "id",
            "started_at",
            "finished_at",
            "intact",
            "rows_checked",
            "head_seq",
            "head_hash",
            "problem_count",
            "first_problem",
        ]


class AuditChangeSerializer(serializers.Serializer):
    field = serializers.CharField()
    old = serializers.CharField(allow_null=True)
    new = serializers.CharField(allow_null=True)


class AuditTimelineEntrySerializer(serializers.Serializer):
    when = serializers.DateTimeField()
    record_type = serializers.CharField()
    record_id = serializers.IntegerField()
    record = serializers.CharField()
    history_id = serializers.IntegerField()
    action = serializers.ChoiceField(choices=["created", "changed", "deleted"])
    user = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    changes = AuditChangeSerializer(many=True)


class AuditTimelinePageSerializer(serializers.Serializer):
    next = serializers.URLField(
        allow_null=True,
        help_text="The next (older) page, its cursor in the address; null on the last page.",
    )
    results = AuditTimelineEntrySerializer(many=True)


class ChainStatusView(APIView):
    permission_classes = [RolePermission]
    required_permissions = {"GET": "audit.view_chainverification"}

    @extend_schema(responses=AuditChainStatusSerializer, summary="Chain head and last verification")
    def get(self, request: Request) -> Response:
        return Response(chain_status().as_dict())


class ChainVerifyView(APIView):
    permission_classes = [RolePermission]
    required_permissions = {"POST": "audit.verify_chain"}

    @extend_schema(
        request=None,
        responses=AuditChainVerificationSerializer,
        summary="Verify the whole chain now (runs the task; eager in the embedded default)",
    )
    def post(self, request: Request) -> Response:
        result = verify_audit_chain_task.delay(requested_by_pk=request.user.pk)
        if not result.ready():
            return Response({"task_id": result.id}, status=202)
        return Response(
            # Run here (eager): its result is at hand, whatever a worker of this process did.
            AuditChainVerificationSerializer(
                ChainVerification.objects.get(pk=result.get(disable_sync_subtasks=False))
            ).data
        )


PAGE_SIZE = 50
MAX_PAGE_SIZE = 200


def _page_size(request: Request) -> int:
    """``page_size`` from the address, kept between 1 and the largest page; the default
    where it is not a number, as a DRF page number pagination does."""
    try:
        wanted = int(request.query_params.get("page_size", PAGE_SIZE))
    except ValueError:
        return PAGE_SIZE
    return min(max(wanted, 1), MAX_PAGE_SIZE)


class CaseTimelineView(APIView):
    """Paged by a cursor (the last row of the page before), never by number: a page
    costs the same however long the history, and rows written meanwhile move no row
    from one page to the next."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "cases.view_procurementcase"}

    @extend_schema(
        parameters=[
            OpenApiParameter("user", int, description="only changes by this user id"),
            OpenApiParameter("since", str, description="from this date (YYYY-MM-DD)"),
            OpenApiParameter("until", str, description="until this date, inclusive"),
            OpenApiParameter(
                "record_type", str, many=True, description="app_label.model, repeatable"
            ),
            OpenApiParameter(
                "area",
                str,
                many=True,
                description="every record type of an area (app label: contracts, evidence, "
                "approvals, access...), repeatable; added to record_type",
            ),
            OpenApiParameter(
                "cursor",
                str,
                description="where the page starts: taken as is from the previous page's "
                "next link; left out for the newest page",
            ),
            OpenApiParameter(
                "page_size", int, description=f"1 to {MAX_PAGE_SIZE}, {PAGE_SIZE} if left out"
            ),
        ],
        responses={
            200: AuditTimelinePageSerializer,
            400: OpenApiResponse(description="a filter or the cursor does not read"),
        },
        summary="A case's audit timeline with field diffs, newest first, paged by a cursor",
    )
    def get(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        sources = case_sources_for(request.user)
        form = TimelineFilterForm(request.query_params, sources=sources)
        if not form.is_valid():
            return Response(form.errors.get_json_data(), status=400)
        cursor = None
        if text := request.query_params.get("cursor"):
            try:
                cursor = Cursor.read(text)
            except BadCursor:
                return Response(
                    {
                        "cursor": [
                            {
                                "message": gettext(
                                    "This cursor does not read: take it as is from a page's "
                                    "next link, or leave it out for the newest page."
                                ),
                                "code": "invalid",
                            }
                        ]
                    },
                    status=400,
                )
        timeline = CaseTimeline(case.pk, sources, form.timeline_filter())
        page = timeline.page_after(cursor, _page_size(request))
        following = None
        if page.next_cursor is not None:
            following = replace_query_param(
                request.build_absolute_uri(), "cursor", page.next_cursor.text()
            )
        return Response({"next": following, "results": [entry.as_dict() for entry in page.entries]})


def register(router: BaseRouter) -> list[URLPattern]:
    return [
        path("audit/chain/", ChainStatusView.as_view(), name="audit-chain"),
        path("audit/chain/verify/", ChainVerifyView.as_view(), name="audit-chain-verify"),
        path("cases/<int:case_pk>/timeline/", CaseTimelineView.as_view(), name="case-timeline"),
    ]
