"""Audit endpoints: chain status and verification, and a case's timeline as JSON."""

from collections.abc import Sequence
from typing import cast

from django.urls import URLPattern, path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.views import APIView

from apps.audit.forms import TimelineFilterForm
from apps.audit.models import ChainVerification
from apps.audit.selectors import chain_status
from apps.audit.sources import case_history_sources
from apps.audit.tasks import verify_audit_chain_task
from apps.audit.timeline import Timeline, TimelineEntry
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
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
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


class TimelinePagination(PageNumberPagination):
    page_size = 50
    max_page_size = 200
    page_size_query_param = "page_size"


class CaseTimelineView(APIView):
    permission_classes = [RolePermission]
    required_permissions = {"GET": "cases.view_procurementcase"}
    pagination_class = TimelinePagination

    @extend_schema(
        parameters=[
            OpenApiParameter("user", int, description="only changes by this user id"),
            OpenApiParameter("since", str, description="from this date (YYYY-MM-DD)"),
            OpenApiParameter("until", str, description="until this date, inclusive"),
            OpenApiParameter(
                "record_type", str, many=True, description="app_label.model, repeatable"
            ),
            OpenApiParameter("page", int),
            OpenApiParameter("page_size", int),
        ],
        responses=AuditTimelinePageSerializer,
        summary="A case's audit timeline with field diffs, newest first",
    )
    def get(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        parts = case_history_sources(case, actor=request.user)
        form = TimelineFilterForm(request.query_params, sources=[s for s, _qs in parts])
        if not form.is_valid():
            return Response(form.errors.get_json_data(), status=400)
        paginator = self.pagination_class()
        # DRF's stub asks for a QuerySet or Sequence; its paginator only slices and
        # counts (Django's Paginator), which Timeline does lazily.
        timeline = cast(Sequence[TimelineEntry], Timeline(parts, form.timeline_filter()))
        page = paginator.paginate_queryset(timeline, request, view=self)
        assert page is not None  # TimelinePagination sets a page size: every request is paged
        return paginator.get_paginated_response([entry.as_dict() for entry in page])


def register(router: BaseRouter) -> list[URLPattern]:
    return [
        path("audit/chain/", ChainStatusView.as_view(), name="audit-chain"),
        path("audit/chain/verify/", ChainVerifyView.as_view(), name="audit-chain-verify"),
        path("cases/<int:case_pk>/timeline/", CaseTimelineView.as_view(), name="case-timeline"),
    ]
