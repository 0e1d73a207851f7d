"""REST API: gates per offer, submitting, deciding, and the decisions on record; the
case's findings register, accepting a finding and withdrawing an acceptance
(docs/rules/findings.md#accepting-a-finding)."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import FileResponse
from django.urls import URLPattern, path
from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.views import APIView

from apps.approvals import policies, services
from apps.approvals.acceptances import (
    document_max_bytes,
    finding_accept,
    finding_acceptance_withdraw,
)
from apps.approvals.binding import Change
from apps.approvals.findings import AcceptanceFacts, Entry
from apps.approvals.models import (
    AcceptanceCondition,
    Approval,
    ApprovalChain,
    ChainDecision,
    FindingAcceptance,
)
from apps.approvals.overview import approval_overview, stale_changes_of
from apps.approvals.selectors import (
    acceptance_document,
    approval_list_for,
    case_register,
    finding_acceptance_list_for,
)
from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_get_for
from apps.core.downloads import stored_file_api_response
from apps.core.parsers import JSONParser
from apps.core.permissions import RolePermission
from apps.core.roles import Role
from apps.core.second_factor import require_second_factor
from apps.core.uploads import EVIDENCE_DOCUMENTS, api_declared_over, refused_unread
from apps.offers.models import Offer

if TYPE_CHECKING:
    from rest_framework.permissions import _SupportsHasPermission


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
            "conditions",
            "condition_deadline",
            "condition_met_at",
            "lapsed_at",
            "lapse_reason",
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
    conditions = serializers.ListField(
        child=serializers.ChoiceField(choices=AcceptanceCondition.choices),
        required=False,
        max_length=len(AcceptanceCondition.values),
        help_text="An approval subject to acceptance: what is still to be measured on the "
        "rented machine (hardware identity, performance, soak, correctness).",
    )
    condition_deadline = serializers.DateField(
        required=False,
        allow_null=True,
        help_text="With conditions: the date the acceptance must pass by.",
    )


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


class ChainStartedSerializer(serializers.Serializer):
    """The tech lead approved under an approval policy: the chain that now runs."""

    chain = serializers.IntegerField(source="pk")
    state = serializers.CharField()
    policy = serializers.SerializerMethodField()
    waiting_for = serializers.SerializerMethodField(help_text="The steps that wait now.")

    def get_policy(self, chain: ApprovalChain) -> str:
        return chain.snapshot.get("policy", "")

    def get_waiting_for(self, chain: ApprovalChain) -> list[str]:
        return [step.label for step in policies.chain_state(chain, with_people=False).open_steps]


class CaseDecisionView(APIView):
    """A tech lead approves one offer (every gate held) or rejects, with a comment."""

    permission_classes = [RolePermission]
    required_permissions = {"POST": "approvals.decide_approval"}

    @extend_schema(
        request=DecisionSerializer,
        responses={201: ApprovalSerializer, 202: ChainStartedSerializer},
    )
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
            conditions=body.validated_data.get("conditions") or None,
            condition_deadline=body.validated_data.get("condition_deadline"),
        )
        if isinstance(approval, ApprovalChain):
            # Under an approval policy: the later steps of the chain decide next.
            return Response(ChainStartedSerializer(approval).data, status=status.HTTP_202_ACCEPTED)
        return Response(ApprovalSerializer(approval).data, status=status.HTTP_201_CREATED)


# --- the findings register (docs/rules/findings.md) ------------------------------


class AcceptanceInForceSerializer(serializers.Serializer):
    """One owner's acceptance a finding rests on today."""

    id = serializers.IntegerField(source="pk")
    role = serializers.CharField()
    role_label = serializers.CharField()
    accepted_by = serializers.SerializerMethodField(help_text="The username of who accepted.")
    accepted_by_name = serializers.CharField(source="accepted_by")
    accepted_on = serializers.DateField()
    expires_on = serializers.DateField(help_text="The last day the acceptance is in force.")
    reason = serializers.CharField()

    def get_accepted_by(self, acceptance: AcceptanceFacts) -> str:
        return self.context.get("usernames", {}).get(acceptance.accepted_by_id, "")


class FindingSerializer(serializers.Serializer):
    """One finding of the case's register and where it stands today."""

    code = serializers.CharField(source="rule.code")
    title = serializers.CharField(source="rule.title")
    offer = serializers.IntegerField(
        source="finding.offer_id", allow_null=True, help_text="Null: about the whole case."
    )
    vendor = serializers.SerializerMethodField()
    key = serializers.CharField(
        source="finding.key", help_text="Which of several findings of one rule on one offer."
    )
    subject = serializers.CharField(source="finding.subject")
    severity = serializers.ChoiceField(
        source="rule.severity", choices=["blocks", "needs_acceptance", "informs"]
    )
    severity_label = serializers.CharField(source="rule.severity_label")
    status = serializers.ChoiceField(choices=["open", "accepted", "expired", "informs"])
    status_label = serializers.CharField()
    blocking = serializers.BooleanField(help_text="Whether it stands in the way of approval.")
    owners = serializers.ListField(source="rule.owners", child=serializers.CharField())
    owner_labels = serializers.ListField(source="rule.owner_labels", child=serializers.CharField())
    awaiting = serializers.ListField(
        child=serializers.CharField(), help_text="The owner roles still to accept it."
    )
    awaiting_labels = serializers.ListField(child=serializers.CharField())
    message = serializers.CharField(source="finding.message")
    # The stubs see DRF's Field.source here; the serializer metaclass takes declared
    # fields off the class, so this is a field named "source", shadowing nothing.
    source = serializers.CharField(  # type: ignore[assignment]
        source="rule.source", help_text="The public law, standard or stated need it rests on."
    )
    gate = serializers.CharField(source="rule.gate")
    fix_url = serializers.CharField(source="finding.fix_url", allow_null=True)
    document_required = serializers.CharField(
        source="rule.document",
        help_text="The document each acceptance must attach, in words; empty when none.",
    )
    acceptances = AcceptanceInForceSerializer(many=True, help_text="The acceptances in force.")

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_vendor(self, entry: Entry) -> str | None:
        return self.context.get("vendors", {}).get(entry.finding.offer_id)


def _register_context(case: ProcurementCase, entries: list[Entry]) -> dict[str, Any]:
    """The vendors' names and the acceptors' usernames the register names (2 queries)."""
    acceptor_ids = {a.accepted_by_id for e in entries for a in e.acceptances}
    return {
        "vendors": dict(case.offers.values_list("pk", "vendor__name")),
        "usernames": dict(User.objects.filter(pk__in=acceptor_ids).values_list("pk", "username")),
    }


class CaseFindingsView(APIView):
    """The case's findings register: every finding of every offer, the blocking first,
    with the acceptances it rests on."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "approvals.view_findingacceptance"}

    @extend_schema(responses=FindingSerializer(many=True))
    def get(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        entries = case_register(case)
        context = _register_context(case, entries)
        return Response(FindingSerializer(entries, many=True, context=context).data)


class AcceptanceDocumentSerializer(serializers.Serializer):
    name = serializers.CharField()
    content_type = serializers.CharField()
    size_bytes = serializers.IntegerField()
    sha256 = serializers.CharField()


class FindingAcceptanceSerializer(serializers.ModelSerializer):
    """An acceptance as recorded, withdrawn and expired ones included."""

    accepted_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    withdrawn_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    reason = serializers.CharField(source="justification", read_only=True)
    key = serializers.CharField(source="finding_key", read_only=True)
    withdrawn = serializers.SerializerMethodField()
    expired = serializers.SerializerMethodField(
        help_text="Past its expiry date (it holds up to and including that day)."
    )
    document = serializers.SerializerMethodField(
        help_text="The attached document (``document/`` downloads it); null when none."
    )

    class Meta:
        model = FindingAcceptance
        fields = [
            "id",
            "case",
            "offer",
            "code",
            "key",
            "role",
            "message",
            "facts",
            "reason",
            "accepted_by",
            "accepted_at",
            "expires_on",
            "expired",
            "expired_at",
            "withdrawn",
            "withdrawn_at",
            "withdrawn_by",
            "withdraw_reason",
            "document",
            "version",
        ]
        read_only_fields = fields

    @extend_schema_field(AcceptanceDocumentSerializer(allow_null=True))
    def get_document(self, acceptance: FindingAcceptance) -> dict | None:
        if not acceptance.evidence_storage_name:
            return None
        return {
            "name": acceptance.evidence_name,
            "content_type": acceptance.evidence_content_type,
            "size_bytes": acceptance.evidence_size_bytes,
            "sha256": acceptance.evidence_sha256,
        }

    def get_withdrawn(self, acceptance: FindingAcceptance) -> bool:
        return acceptance.withdrawn_at is not None

    def get_expired(self, acceptance: FindingAcceptance) -> bool:
        return acceptance.expires_on < timezone.localdate()


class FindingAcceptSerializer(serializers.Serializer):
    code = serializers.CharField(max_length=100, help_text="The finding's code.")
    offer = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        help_text="The offer the finding is about; null for a finding about the whole case.",
    )
    key = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    role = serializers.ChoiceField(
        choices=Role.choices, help_text="The owning role you accept it as."
    )
    reason = serializers.CharField(max_length=4000)
    expires_on = serializers.DateField(help_text="The last day the acceptance holds.")
    evidence = serializers.FileField(
        required=False,
        help_text=(
            "The document the finding's rule asks for (its ``document_required``); send the "
            "body as multipart/form-data."
        ),
    )


class FindingAcceptanceWithdrawSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=4000, help_text="Why the acceptance is withdrawn.")


class CaseFindingAcceptView(APIView):
    """An owner accepts, for one of their roles, a finding of the case that needs it."""

    permission_classes = [RolePermission]
    required_permissions = {"POST": "approvals.add_findingacceptance"}
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    @extend_schema(request=FindingAcceptSerializer, responses={201: FindingAcceptanceSerializer})
    def post(self, request: Request, case_pk: int) -> Response:
        # Accepting a finding waives what it names, as a red-flag waiver does.
        require_second_factor(request)
        case = case_get_for(request.user, case_pk)
        body = FindingAcceptSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        acceptance = finding_accept(
            actor=request.user,
            case=case,
            code=data["code"],
            offer_id=data["offer"],
            key=data["key"],
            role=data["role"],
            reason=data["reason"],
            expires_on=data["expires_on"],
            evidence=data.get("evidence"),
        )
        return Response(
            FindingAcceptanceSerializer(acceptance).data, status=status.HTTP_201_CREATED
        )


class FindingAcceptanceViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Every acceptance of a finding, newest first, withdrawn and expired ones included;
    ``withdraw/`` re-opens the finding (by who accepted it or another holder of the role)."""

    serializer_class = FindingAcceptanceSerializer
    permission_classes = [RolePermission]
    required_permissions = {"GET": "approvals.view_findingacceptance"}
    filterset_fields = ["case", "offer", "code", "role"]

    def get_permissions(self) -> Sequence["_SupportsHasPermission"]:
        if self.action == "withdraw":
            self.required_permissions = {"POST": "approvals.change_findingacceptance"}
        return super().get_permissions()

    def get_queryset(self) -> QuerySet[FindingAcceptance]:
        return finding_acceptance_list_for(self.request.user).order_by("-accepted_at", "-pk")

    @extend_schema(
        request=FindingAcceptanceWithdrawSerializer,
        responses={200: FindingAcceptanceSerializer},
    )
    @action(detail=True, methods=["post"])
    def withdraw(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        require_second_factor(request)
        body = FindingAcceptanceWithdrawSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        acceptance = finding_acceptance_withdraw(
            actor=request.user, acceptance=self.get_object(), reason=body.validated_data["reason"]
        )
        return Response(self.get_serializer(self.get_queryset().get(pk=acceptance.pk)).data)

    @extend_schema(
        responses={
            (200, content_type): OpenApiTypes.BINARY
            for content_type in sorted({kind.content_type for kind in EVIDENCE_DOCUMENTS.values()})
        }
    )
    @action(detail=True, methods=["get"])
    def document(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> FileResponse:
        acceptance = self.get_object()
        if not acceptance.evidence_storage_name:
            raise NotFound(_("This acceptance has no document."))
        return stored_file_api_response(request, acceptance_document(acceptance))


class ChainStepDecisionSerializer(serializers.Serializer):
    step = serializers.IntegerField(
        min_value=1, max_value=32_767, help_text="The waiting step's order number."
    )
    decision = serializers.ChoiceField(choices=Approval.Decision.choices)
    comment = serializers.CharField(max_length=4000)


class ChainDecisionSerializer(serializers.ModelSerializer):
    """One decision at a later step of a chain, and where the case stands after it."""

    decided_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    on_behalf_of: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    case_status = serializers.CharField(source="chain.case.status", read_only=True)
    chain_state = serializers.CharField(source="chain.state", read_only=True)

    class Meta:
        model = ChainDecision
        fields = [
            "id",
            "chain",
            "step",
            "decision",
            "decided_by",
            "on_behalf_of",
            "decided_at",
            "comment",
            "chain_state",
            "case_status",
        ]
        read_only_fields = fields


class CaseChainDecisionView(APIView):
    """A decision at a waiting step of the case's approval chain, by a person the step
    waits for (its role's holder, its named person, or their delegate for today); who
    may decide is the service's to say, so anyone who reads approvals may ask."""

    permission_classes = [RolePermission]
    required_permissions = {"POST": "approvals.view_approval"}

    @extend_schema(request=ChainStepDecisionSerializer, responses={201: ChainDecisionSerializer})
    def post(self, request: Request, case_pk: int) -> Response:
        require_second_factor(request)
        case = case_get_for(request.user, case_pk)
        body = ChainStepDecisionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        made = services.chain_step_decide(
            actor=request.user,
            case=case,
            step=body.validated_data["step"],
            decision=body.validated_data["decision"],
            comment=body.validated_data["comment"],
        )
        made = ChainDecision.objects.select_related(
            "chain__case", "decided_by", "on_behalf_of"
        ).get(pk=made.pk)
        return Response(ChainDecisionSerializer(made).data, status=status.HTTP_201_CREATED)


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("approvals", ApprovalViewSet, basename="approval")
    router.register("finding-acceptances", FindingAcceptanceViewSet, basename="finding-acceptance")
    return [
        path("cases/<int:case_pk>/findings/", CaseFindingsView.as_view(), name="case-findings"),
        path(
            "cases/<int:case_pk>/findings/accept/",
            # A body over the document limit is refused from its declared length, before
            # DRF's CSRF check or the multipart parser reads it (apps.core.uploads).
            refused_unread(api_declared_over(document_max_bytes))(CaseFindingAcceptView.as_view()),
            name="case-finding-accept",
        ),
        path("cases/<int:case_pk>/gates/", CaseGatesView.as_view(), name="case-gates"),
        path(
            "cases/<int:case_pk>/submit-for-approval/",
            CaseSubmitView.as_view(),
            name="case-submit-for-approval",
        ),
        path("cases/<int:case_pk>/decision/", CaseDecisionView.as_view(), name="case-decision"),
        path(
            "cases/<int:case_pk>/chain-decision/",
            CaseChainDecisionView.as_view(),
            name="case-chain-decision",
        ),
    ]
