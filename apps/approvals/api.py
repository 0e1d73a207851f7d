"""REST API: gates per offer, submitting, deciding, and the decisions on record."""

from typing import Any, cast

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.urls import URLPattern, path
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.views import APIView

from apps.approvals import services
from apps.approvals.binding import Change
from apps.approvals.models import Approval
from apps.approvals.overview import approval_overview, stale_changes_of
from apps.approvals.selectors import approval_list_for
from apps.cases.selectors import case_get_for
from apps.core.permissions import RolePermission
from apps.core.second_factor import require_second_factor
from apps.offers.models import Offer


class GateSerializer(serializers.Serializer):
    key = serializers.CharField()
    title = serializers.CharField()
    held = serializers.BooleanField()
    reason = serializers.CharField()
    fix_url = serializers.CharField(allow_null=True)
    waivers = serializers.ListField(child=serializers.CharField())
    basis = serializers.CharField(help_text="The public source or stated need the gate rests on.")


class OfferGatesSerializer(serializers.Serializer):
    offer = serializers.IntegerField(source="offer.pk")
    vendor = serializers.CharField(source="offer.vendor.name")
    all_held = serializers.BooleanField()
    gates = GateSerializer(many=True)


class ChangeSerializer(serializers.Serializer):
    model = serializers.CharField()
    record = serializers.CharField()
    # The stubs see DRF's Field.label here; the serializer metaclass takes declared
    # fields off the class, so this is a field named "label", shadowing nothing.
    label = serializers.CharField()  # type: ignore[assignment]
    when = serializers.DateTimeField(allow_null=True)
    user = serializers.CharField()
    action = serializers.CharField()
    reason = serializers.CharField()


class ApprovalSerializer(serializers.ModelSerializer):
    decided_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    stale = serializers.SerializerMethodField()
    changes = serializers.SerializerMethodField()

    class Meta:
        model = Approval
        fields = [
            "id",
            "case",
            "offer",
            "decision",
            "decided_by",
            "decided_at",
            "comment",
            "gates",
            "bound_state",
            "stale",
            "stale_at",
            "changes",
            "superseded_by",
            "superseded_at",
            "version",
        ]
        read_only_fields = fields

    def get_stale(self, approval: Approval) -> bool:
        return bool(self._changes(approval))

    def _changes(self, approval: Approval) -> list[Change]:
        # DRF keeps the context dict it was given; the stubs type it as a read-only Mapping.
        cache = self.context.setdefault("_changes", {})  # type: ignore[attr-defined]
        if approval.pk not in cache:
            cache[approval.pk] = stale_changes_of(approval)
        return cache[approval.pk]

    def get_changes(self, approval: Approval) -> list[dict]:
        # many=True builds a ListSerializer; the stubs type the call as the child serializer.
        return cast(list[dict[str, Any]], ChangeSerializer(self._changes(approval), many=True).data)


class CaseGatesSerializer(serializers.Serializer):
    case = serializers.IntegerField(source="case.pk")
    status = serializers.CharField(source="case.status")
    offers = OfferGatesSerializer(many=True)
    current = ApprovalSerializer(allow_null=True)
    stale = serializers.BooleanField()
    stale_changes = ChangeSerializer(many=True)


class SubmitSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, max_length=1000)


class DecisionSerializer(serializers.Serializer):
    offer = serializers.IntegerField(
        required=False, allow_null=True, help_text="The offer approved; optional for a rejection."
    )
    decision = serializers.ChoiceField(choices=Approval.Decision.choices)
    comment = serializers.CharField(max_length=4000)


class CaseStatusSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    version = serializers.IntegerField()


class ApprovalViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Every decision on record, newest first; superseded and stale ones included."""

    serializer_class = ApprovalSerializer
    permission_classes = [RolePermission]
    required_permissions = {"GET": "approvals.view_approval"}
    filterset_fields = ["case", "decision"]

    def get_queryset(self) -> QuerySet[Approval]:

        return approval_list_for(self.request.user).order_by("-decided_at", "-pk")


class CaseGatesView(APIView):
    """The gates of every offer of a case, the decision in force and its staleness."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "approvals.view_approval"}

    @extend_schema(responses=CaseGatesSerializer)
    def get(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        return Response(CaseGatesSerializer(approval_overview(case)).data)


class CaseSubmitView(APIView):
    """Evaluating (or rejected) → pending approval; by the case owner or procurement."""

    permission_classes = [RolePermission]
    required_permissions = {"POST": "approvals.submit_approval"}

    @extend_schema(request=SubmitSerializer, responses=CaseStatusSerializer)
    def post(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        body = SubmitSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        case = services.case_submit_for_approval(
            actor=request.user, case=case, note=body.validated_data.get("note", "")
        )
        return Response(CaseStatusSerializer(case).data)


class CaseDecisionView(APIView):
    """A tech lead approves one offer (every gate held) or rejects, with a comment."""

    permission_classes = [RolePermission]
    required_permissions = {"POST": "approvals.decide_approval"}

    @extend_schema(request=DecisionSerializer, responses={201: ApprovalSerializer})
    def post(self, request: Request, case_pk: int) -> Response:
        require_second_factor(request)
        case = case_get_for(request.user, case_pk)
        body = DecisionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        offer_pk = body.validated_data.get("offer")
        offer = None
        if offer_pk is not None:
            offer = Offer.objects.filter(pk=offer_pk, case=case).select_related("vendor").first()
            if offer is None:
                raise serializers.ValidationError({"offer": [_("No such offer on this case.")]})
        approval = services.approval_decide(
            actor=request.user,
            case=case,
            decision=body.validated_data["decision"],
            comment=body.validated_data["comment"],
            offer=offer,
        )
        return Response(ApprovalSerializer(approval).data, status=status.HTTP_201_CREATED)


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("approvals", ApprovalViewSet, basename="approval")
    return [
        path("cases/<int:case_pk>/gates/", CaseGatesView.as_view(), name="case-gates"),
        path(
            "cases/<int:case_pk>/submit-for-approval/",
            CaseSubmitView.as_view(),
            name="case-submit-for-approval",
        ),
        path("cases/<int:case_pk>/decision/", CaseDecisionView.as_view(), name="case-decision"),
    ]
