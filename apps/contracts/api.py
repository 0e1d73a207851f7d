"""REST API for clause checklists, red-flag waivers and checklist templates."""

from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import django_filters
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import FileResponse
from django.urls import URLPattern, path
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

from apps.cases.selectors import case_get_for
from apps.contracts import services, terms
from apps.contracts.documents import DOCX, PDF, document_max_bytes
from apps.contracts.models import (
    ChecklistItem,
    ChecklistTemplate,
    ClauseChecklist,
    ContractDocument,
    DocumentKind,
    ItemStatus,
    RedFlagWaiver,
    TemplateItem,
)
from apps.contracts.rules import (
    BlockKind,
    RedFlag,
    Verdict,
    blocking_items,
    flag_label,
    item_verdict,
    waiver_problem,
)
from apps.contracts.selectors import (
    OfferRedFlags,
    case_red_flags,
    checklist_get_for,
    checklist_item_get_for,
    checklist_list_for,
    document_get_for,
    document_list_for,
    document_stored_file,
    item_state,
    offer_terms,
    open_red_flags,
    templates_with_items,
    today,
    waiver_expires_on,
    waiver_list_for,
    waiver_stored_file,
)
from apps.core.api import version_edited
from apps.core.bounds import CHANGE_REASON_MAX_LENGTH, REASON_MAX_LENGTH, TEXT_MAX_LENGTH
from apps.core.downloads import stored_file_api_response
from apps.core.parsers import JSONParser
from apps.core.permissions import RolePermission
from apps.core.second_factor import require_second_factor
from apps.core.uploads import EVIDENCE_DOCUMENTS, FILE_KINDS, api_declared_over, refused_unread
from apps.offers.models import BillingBasis
from apps.offers.selectors import offer_get_for

if TYPE_CHECKING:
    from rest_framework.permissions import _SupportsHasPermission
    from rest_framework.views import AsView, GenericView

STATUS_CHOICES = [("", "not reviewed"), *ItemStatus.choices]


# A pattern rather than an enum: the schema's enum post-processing names
# enums by field, and "status" already names the case status enum.
@extend_schema_field(
    {
        "type": "string",
        "pattern": "^(" + "|".join(ItemStatus.values) + ")?$",
        "description": "One of " + ", ".join(ItemStatus.values) + "; blank: not reviewed. "
        "Missing and needs_negotiation are red flags.",
    }
)
class ItemStatusField(serializers.CharField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_blank=True, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if value not in dict(STATUS_CHOICES):
            raise serializers.ValidationError(
                f"'{value}' is not a status; choose one of "
                + ", ".join(ItemStatus.values)
                + " (or blank for not reviewed)."
            )
        return value


class WaiverEvidenceSerializer(serializers.Serializer):
    name = serializers.CharField()
    content_type = serializers.CharField()
    size_bytes = serializers.IntegerField()
    sha256 = serializers.CharField()


class WaiverSerializer(serializers.ModelSerializer):
    waived_status = ItemStatusField(read_only=True)
    waived_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    reason = serializers.CharField(source="justification", read_only=True)
    expires_on = serializers.SerializerMethodField(
        help_text="The last day the waiver is in force; from the day after it has expired."
    )
    confirmed_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    evidence = serializers.SerializerMethodField(
        help_text="The evidence file's name, type, size and SHA-256, or null."
    )

    class Meta:
        model = RedFlagWaiver
        fields = [
            "id",
            "item",
            "waived_status",
            "reason",
            "waived_by",
            "waived_at",
            "expires_on",
            "confirmed_by",
            "confirmed_at",
            "confirmation_note",
            "evidence",
            "lapsed_at",
            "lapse_note",
        ]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.DATE)
    def get_expires_on(self, waiver: RedFlagWaiver) -> str:
        return waiver_expires_on(waiver).isoformat()

    @extend_schema_field(WaiverEvidenceSerializer(allow_null=True))
    def get_evidence(self, waiver: RedFlagWaiver) -> dict | None:
        if not waiver.evidence_storage_name:
            return None
        return {
            "name": waiver.evidence_name,
            "content_type": waiver.evidence_content_type,
            "size_bytes": waiver.evidence_size_bytes,
            "sha256": waiver.evidence_sha256,
        }


class RedFlagSerializer(serializers.Serializer):
    item_id = serializers.IntegerField()
    number = serializers.IntegerField()
    key = serializers.CharField()
    title = serializers.CharField()
    status = serializers.CharField()
    kind = serializers.ChoiceField(choices=["red_flag", "not_reviewed"])


LABELS_HELP = (
    "Each open red flag as the approval gate names it, with why its waiver does not count "
    "(expired on a date, or awaiting a second legal confirmation)."
)


class ChecklistItemSerializer(serializers.ModelSerializer):
    status = ItemStatusField(read_only=True)
    reviewer: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    verdict = serializers.SerializerMethodField()
    waiver_problem = serializers.SerializerMethodField(
        help_text="Why this red flag's waiver does not count (expired, or awaiting a second "
        "legal confirmation); null when none."
    )
    waivers = WaiverSerializer(many=True, read_only=True)
    document: serializers.PrimaryKeyRelatedField[ContractDocument] = (
        serializers.PrimaryKeyRelatedField(
            read_only=True,
            allow_null=True,
            help_text="The signed contract document version the clause is linked to; null: none.",
        )
    )

    class Meta:
        model = ChecklistItem
        fields = [
            "id",
            "number",
            "key",
            "title",
            "sub_points",
            "guidance",
            "required",
            "high_severity",
            "status",
            "clause_reference",
            "excerpt",
            "note",
            "reviewer",
            "reviewed_at",
            "verdict",
            "waiver_problem",
            "waivers",
            "document",
            "document_page",
            "document_quote",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ChoiceField(choices=[v.value for v in Verdict]))
    def get_verdict(self, item: ChecklistItem) -> str:
        return item_verdict(item_state(item, list(item.waivers.all())), today=today()).value

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_waiver_problem(self, item: ChecklistItem) -> str | None:
        state = item_state(item, list(item.waivers.all()))
        flag = next(iter(blocking_items([state], today=today())), None)
        return waiver_problem(flag) if flag else None


class TermFindingSerializer(serializers.Serializer):
    check = serializers.CharField(
        help_text="Which check: " + ", ".join([*terms.Check, *terms.DateCheck])
    )
    severity = serializers.CharField(help_text="bad: fails what the case needs; warn: decide.")
    term = serializers.CharField(help_text="The term it is about.")
    message = serializers.CharField()


def _terms_input_fields() -> dict[str, serializers.Field]:
    fields: dict[str, serializers.Field] = {}
    for term in terms.TERMS:
        help_text = f"{term.label} (beside the '{term.item_key}' item); null: not stated."
        if term.kind == "percent":
            fields[term.name] = serializers.DecimalField(
                max_digits=6,
                decimal_places=3,
                min_value=Decimal(0),
                max_value=Decimal(100),
                required=False,
                allow_null=True,
                help_text=help_text,
            )
        elif term.kind in ("hours", "days"):
            fields[term.name] = serializers.IntegerField(
                min_value=0,
                max_value=terms.WHOLE_MAX[term.kind],
                required=False,
                allow_null=True,
                help_text=help_text,
            )
        else:
            choices = (
                BillingBasis.values if term.name == "billing_basis" else list(terms.IMAGE_FORMATS)
            )
            fields[term.name] = serializers.CharField(
                required=False,
                allow_null=True,
                allow_blank=True,
                max_length=50,
                help_text=help_text + " One of: " + ", ".join(choices) + ".",
            )
    return fields


# Typed: percentages 0–100, whole hours and days, the formats and billing bases known.
ContractTermsInputSerializer = type(
    "ContractTermsInputSerializer", (serializers.Serializer,), _terms_input_fields()
)


class ContractTermsSerializer(serializers.Serializer):
    values = ContractTermsInputSerializer(help_text="The contract's terms; null: not stated.")
    prepayment_premium = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        allow_null=True,
        help_text="The prepayment ratio over ordinary customers', less one (0.5: 50 %); null "
        "where not computable. Market reports cite 0.3 to 0.5.",
    )
    findings = TermFindingSerializer(many=True)


class ClauseChecklistSerializer(serializers.ModelSerializer):
    case = serializers.IntegerField(source="offer.case_id", read_only=True)
    template_version = serializers.IntegerField(source="template.number", read_only=True)
    items = ChecklistItemSerializer(many=True, read_only=True)
    open_red_flags = serializers.SerializerMethodField()
    open_red_flag_labels = serializers.SerializerMethodField(help_text=LABELS_HELP)
    terms = serializers.SerializerMethodField(
        help_text="The contract's terms, the computed prepayment premium, and how the terms "
        "stand against the case's exit window and availability need."
    )

    class Meta:
        model = ClauseChecklist
        fields = [
            "id",
            "offer",
            "case",
            "template_version",
            "items",
            "open_red_flags",
            "open_red_flag_labels",
            "terms",
            "version",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    @extend_schema_field(RedFlagSerializer(many=True))
    def get_open_red_flags(self, checklist: ClauseChecklist) -> list:
        return [_flag(flag) for flag in open_red_flags(checklist)]

    @extend_schema_field(ContractTermsSerializer)
    def get_terms(self, checklist: ClauseChecklist) -> dict:
        judged = offer_terms(checklist.offer, checklist)
        return {
            "values": {
                name: (str(value) if isinstance(value, Decimal) else value)
                for name, value in vars(judged.values).items()
            },
            "prepayment_premium": None
            if judged.premium is None
            else str(judged.premium.quantize(Decimal("0.000001"))),
            "findings": [
                {
                    "check": f.check.value,
                    "severity": f.severity.value,
                    "term": f.term,
                    "message": f.message,
                }
                for f in judged.findings
            ],
        }

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_open_red_flag_labels(self, checklist: ClauseChecklist) -> list[str]:
        return [
            flag_label(flag)
            for flag in open_red_flags(checklist)
            if flag.kind is BlockKind.RED_FLAG
        ]


class ChecklistFilter(django_filters.FilterSet):
    case = django_filters.NumberFilter(field_name="offer__case", help_text="Procurement case id")

    class Meta:
        model = ClauseChecklist
        fields = ["offer", "case", "template"]


class ChecklistCreateSerializer(serializers.Serializer):
    offer = serializers.IntegerField(help_text="Offer to start the checklist for.")


class ItemChangeSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="An item of this checklist.")
    status = ItemStatusField(required=False)
    clause_reference = serializers.CharField(max_length=200, required=False, allow_blank=True)
    excerpt = serializers.CharField(required=False, allow_blank=True, max_length=TEXT_MAX_LENGTH)
    note = serializers.CharField(required=False, allow_blank=True, max_length=TEXT_MAX_LENGTH)


class ChecklistPatchSerializer(serializers.Serializer):
    items = ItemChangeSerializer(
        many=True, required=False, help_text="Changed items; omitted fields keep theirs."
    )
    terms = ContractTermsInputSerializer(
        required=False, help_text="Changed contract terms; omitted terms keep theirs."
    )
    change_reason = serializers.CharField(
        max_length=CHANGE_REASON_MAX_LENGTH, help_text="Why the checklist is changed."
    )
    version = serializers.IntegerField(
        required=False, help_text="Version the client edited; a stale version is refused with 409."
    )


class ClauseChecklistViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Clause checklists per offer. POST starts one from the latest template; PATCH saves
    many items at once (all or nothing)."""

    serializer_class = ClauseChecklistSerializer
    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "contracts.view_clausechecklist",
        "POST": "contracts.add_clausechecklist",
        "PATCH": "contracts.change_clausechecklist",
    }
    http_method_names = ["get", "post", "patch", "head", "options"]
    filterset_class = ChecklistFilter

    def get_queryset(self) -> QuerySet[ClauseChecklist]:
        return checklist_list_for(self.request.user)

    @extend_schema(request=ChecklistCreateSerializer, responses={201: ClauseChecklistSerializer})
    def create(self, request: Request, format: str | None = None) -> Response:
        body = ChecklistCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        offer = offer_get_for(request.user, body.validated_data["offer"])
        checklist = services.checklist_create(actor=request.user, offer=offer)
        fresh = checklist_get_for(request.user, checklist.pk)
        return Response(self.get_serializer(fresh).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=ChecklistPatchSerializer, responses={200: ClauseChecklistSerializer})
    def partial_update(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        checklist = self.get_object()
        body = ChecklistPatchSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        services.checklist_save(
            actor=request.user,
            checklist=checklist,
            items=[dict(row) for row in data.get("items", [])],
            reason=data["change_reason"],
            expected_version=version_edited(data, editing=True),
            contract_terms=dict(data.get("terms") or {}),
        )
        return Response(self.get_serializer(checklist_get_for(request.user, checklist.pk)).data)


class WaiverCreateSerializer(serializers.Serializer):
    item = serializers.IntegerField(help_text="The checklist item whose red flag is waived.")
    reason = serializers.CharField(
        max_length=REASON_MAX_LENGTH, help_text="Why the red flag is accepted."
    )
    expires_on = serializers.DateField(
        required=False,
        allow_null=True,
        help_text="The last day the waiver is in force: today or later. Omitted: 90 days "
        "from today.",
    )
    evidence = serializers.FileField(
        required=False,
        allow_null=True,
        help_text="An optional evidence file (multipart): "
        + ", ".join(EVIDENCE_DOCUMENTS)
        + "; its type (by name and first bytes) and size are checked.",
    )


class WaiverConfirmSerializer(serializers.Serializer):
    note = serializers.CharField(
        max_length=REASON_MAX_LENGTH,
        help_text="Why the second legal reviewer confirms the waiver.",
    )


class WaiverWithdrawSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=250, help_text="Why the waiver is withdrawn.")


class RedFlagWaiverViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Recorded waivers of red flags, current, expired and lapsed. POST waives one red flag
    (JSON, or multipart with an evidence file); ``confirm/`` is a second legal reviewer's
    confirmation of a high-severity item's waiver; ``withdraw/`` ends a waiver;
    ``evidence/`` downloads its evidence file, checked against its SHA-256."""

    serializer_class = WaiverSerializer
    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "contracts.view_redflagwaiver",
        "POST": "contracts.add_redflagwaiver",
    }
    parser_classes = [JSONParser, MultiPartParser, FormParser]
    filterset_fields = {"item": ["exact"], "item__checklist": ["exact"]}

    @classmethod
    def as_view(
        cls, actions: dict[str, Any] | None = None, **initkwargs: Any
    ) -> "AsView[GenericView]":
        # A body over the evidence limit is refused from its declared length, before
        # DRF's CSRF check or the multipart parser reads it (apps.core.uploads).
        view = super().as_view(actions, **initkwargs)
        return refused_unread(api_declared_over(services.evidence_max_bytes))(view)

    def get_permissions(self) -> Sequence["_SupportsHasPermission"]:
        if self.action == "confirm":
            self.required_permissions = {"POST": "contracts.confirm_redflagwaiver"}
        elif self.action == "withdraw":
            self.required_permissions = {"POST": "contracts.withdraw_redflagwaiver"}
        return super().get_permissions()

    def get_queryset(self) -> QuerySet[RedFlagWaiver]:
        return waiver_list_for(self.request.user).order_by("pk")

    @extend_schema(
        request={
            "application/json": WaiverCreateSerializer,
            "multipart/form-data": WaiverCreateSerializer,
        },
        responses={201: WaiverSerializer},
    )
    def create(self, request: Request, format: str | None = None) -> Response:
        require_second_factor(request)
        body = WaiverCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        item = checklist_item_get_for(request.user, body.validated_data["item"])
        waiver = services.red_flag_waive(
            actor=request.user,
            item=item,
            reason=body.validated_data["reason"],
            expires_on=body.validated_data.get("expires_on"),
            evidence=body.validated_data.get("evidence"),
        )
        return Response(self.get_serializer(waiver).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=WaiverConfirmSerializer, responses={200: WaiverSerializer})
    @action(detail=True, methods=["post"])
    def confirm(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        require_second_factor(request)
        body = WaiverConfirmSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        waiver = services.red_flag_waiver_confirm(
            actor=request.user, waiver=self.get_object(), note=body.validated_data["note"]
        )
        return Response(self.get_serializer(self.get_queryset().get(pk=waiver.pk)).data)

    @extend_schema(request=WaiverWithdrawSerializer, responses={200: WaiverSerializer})
    @action(detail=True, methods=["post"])
    def withdraw(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        require_second_factor(request)
        body = WaiverWithdrawSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        waiver = services.red_flag_waiver_withdraw(
            actor=request.user, waiver=self.get_object(), reason=body.validated_data["reason"]
        )
        return Response(self.get_serializer(self.get_queryset().get(pk=waiver.pk)).data)

    @extend_schema(
        responses={
            (200, content_type): OpenApiTypes.BINARY
            for content_type in sorted({kind.content_type for kind in EVIDENCE_DOCUMENTS.values()})
        }
    )
    @action(detail=True, methods=["get"])
    def evidence(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> FileResponse:

        waiver = self.get_object()
        if not waiver.evidence_storage_name:
            raise NotFound("This waiver has no evidence file.")
        return stored_file_api_response(request, waiver_stored_file(waiver))


class TemplateItemSerializer(serializers.ModelSerializer):
    key = serializers.SlugField(max_length=50)
    sub_points = serializers.ListField(
        child=serializers.CharField(max_length=TEXT_MAX_LENGTH), required=False
    )
    # The stubs see DRF's Field.required here; the serializer metaclass takes declared
    # fields off the class, so this is a field named "required", shadowing nothing.
    required = serializers.BooleanField(required=False, default=True)  # type: ignore[assignment]
    high_severity = serializers.BooleanField(
        required=False,
        default=False,
        help_text="A waiver of this item counts only once a second legal reviewer confirms it.",
    )

    class Meta:
        model = TemplateItem
        fields = [
            "number",
            "key",
            "title",
            "sub_points",
            "guidance",
            "required",
            "high_severity",
            "title_zh",
            "sub_points_zh",
            "guidance_zh",
        ]
        read_only_fields = ["number"]

    def to_representation(self, instance: TemplateItem) -> dict[str, Any]:
        data = super().to_representation(instance)
        # Items published before severities existed hold NULL there: not high-severity.
        data["high_severity"] = bool(data.get("high_severity"))
        return data


class ChecklistTemplateSerializer(serializers.ModelSerializer):
    published_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    items = TemplateItemSerializer(many=True)
    note = serializers.CharField(
        max_length=CHANGE_REASON_MAX_LENGTH, help_text="Why this version is published."
    )

    class Meta:
        model = ChecklistTemplate
        fields = ["id", "number", "note", "published_by", "items", "created_at"]
        read_only_fields = ["number", "created_at"]


class ChecklistTemplateViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Published template versions; POST publishes the next version with its own items."""

    serializer_class = ChecklistTemplateSerializer
    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "contracts.view_checklisttemplate",
        "POST": "contracts.add_checklisttemplate",
    }

    def get_queryset(self) -> QuerySet[ChecklistTemplate]:
        return templates_with_items().order_by("-number")

    def perform_create(self, serializer: serializers.BaseSerializer) -> None:
        data = serializer.validated_data
        serializer.instance = services.checklist_template_publish(
            actor=self.request.user,
            items=[dict(item) for item in data["items"]],
            note=data["note"],
        )


class OfferRedFlagsSerializer(serializers.Serializer):
    offer = serializers.IntegerField()
    vendor = serializers.CharField()
    checklist = serializers.IntegerField(allow_null=True)
    blocks_approval = serializers.BooleanField()
    open_red_flags = RedFlagSerializer(many=True)
    open_red_flag_labels = serializers.ListField(
        child=serializers.CharField(), help_text=LABELS_HELP
    )
    waived = RedFlagSerializer(many=True)


class CaseRedFlagsView(APIView):
    """Per offer of a case: whether its checklist blocks approval, and which items."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "contracts.view_clausechecklist"}

    @extend_schema(responses={200: OfferRedFlagsSerializer(many=True)})
    def get(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        return Response([_offer_entry(entry) for entry in case_red_flags(case)])


def _flag(flag: RedFlag) -> dict:
    return {
        "item_id": flag.item_id,
        "number": flag.number,
        "key": flag.key,
        "title": flag.title,
        "status": flag.status,
        "kind": flag.kind.value,
    }


def _offer_entry(entry: OfferRedFlags) -> dict:
    waived = [row for row in entry.rows if row.verdict is Verdict.WAIVED]
    return {
        "offer": entry.offer.pk,
        "vendor": str(entry.offer.vendor),
        "checklist": entry.checklist.pk if entry.checklist else None,
        "blocks_approval": entry.blocks_approval,
        "open_red_flags": [_flag(flag) for flag in entry.open],
        "open_red_flag_labels": entry.open_labels,
        "waived": [
            {
                "item_id": row.item.pk,
                "number": row.item.number,
                "key": row.item.key,
                "title": row.item.title,
                "status": row.item.status,
                "kind": "red_flag",
            }
            for row in waived
        ],
    }


class ContractDocumentSerializer(serializers.ModelSerializer):
    uploaded_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    name_shown = serializers.CharField(
        source="__str__", read_only=True, help_text="How pages name the version: MSA v2."
    )

    class Meta:
        model = ContractDocument
        fields = [
            "id",
            "offer",
            "kind",
            "number",
            "name_shown",
            "name",
            "content_type",
            "size_bytes",
            "sha256",
            "page_count",
            "uploaded_by",
            "created_at",
        ]
        read_only_fields = fields


class ContractDocumentUploadSerializer(serializers.Serializer):
    offer = serializers.IntegerField(help_text="The offer whose signed contract this is.")
    kind = serializers.ChoiceField(choices=DocumentKind.choices)
    file = serializers.FileField(
        help_text="The signed document (multipart): a PDF or a DOCX, judged by its content."
    )


class ContractDocumentViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Signed contract documents of the offers the caller may see, every version. POST
    (multipart) stores the next version of its kind; ``file/`` downloads it, checked
    against its SHA-256. Never replaced, never deleted."""

    serializer_class = ContractDocumentSerializer
    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "contracts.view_contractdocument",
        "POST": "contracts.add_contractdocument",
    }
    parser_classes = [MultiPartParser, FormParser]
    filterset_fields = {"offer": ["exact"], "kind": ["exact"], "offer__case": ["exact"]}

    @classmethod
    def as_view(
        cls, actions: dict[str, Any] | None = None, **initkwargs: Any
    ) -> "AsView[GenericView]":
        # Refused from its declared length before the multipart parser reads it.
        view = super().as_view(actions, **initkwargs)
        return refused_unread(api_declared_over(document_max_bytes))(view)

    def get_queryset(self) -> QuerySet[ContractDocument]:
        return document_list_for(self.request.user).order_by("offer_id", "kind", "-number")

    @extend_schema(
        request={"multipart/form-data": ContractDocumentUploadSerializer},
        responses={201: ContractDocumentSerializer},
    )
    def create(self, request: Request, format: str | None = None) -> Response:
        body = ContractDocumentUploadSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        offer = offer_get_for(request.user, body.validated_data["offer"])
        document = services.contract_document_upload(
            actor=request.user,
            offer=offer,
            kind=body.validated_data["kind"],
            upload=body.validated_data["file"],
        )
        fresh = document_get_for(request.user, document.pk)
        return Response(self.get_serializer(fresh).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        responses={
            (200, FILE_KINDS[extension].content_type): OpenApiTypes.BINARY
            for extension in (PDF, DOCX)
        }
    )
    @action(detail=True, methods=["get"])
    def file(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> FileResponse:
        return stored_file_api_response(request, document_stored_file(self.get_object()))


class ClauseLinkSerializer(serializers.Serializer):
    document = serializers.IntegerField(
        allow_null=True,
        min_value=1,
        max_value=2**31 - 1,
        help_text="A contract document version of the same offer; null unlinks.",
    )
    page = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=100_000,
        help_text="A page of the PDF.",
    )
    quote = serializers.CharField(
        required=False, allow_blank=True, max_length=TEXT_MAX_LENGTH, help_text="Words quoted."
    )
    version = serializers.IntegerField(
        required=False, help_text="Version the client edited; a stale version is refused with 409."
    )


class ClauseLinkView(APIView):
    """Link one checklist item to the page and words of a stored contract document."""

    permission_classes = [RolePermission]
    required_permissions = {"POST": "contracts.change_checklistitem"}

    @extend_schema(request=ClauseLinkSerializer, responses={200: ChecklistItemSerializer})
    def post(self, request: Request, pk: int, format: str | None = None) -> Response:
        item = checklist_item_get_for(request.user, pk)
        body = ClauseLinkSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        document = document_get_for(request.user, data["document"]) if data["document"] else None
        services.checklist_item_link(
            actor=request.user,
            item=item,
            document=document,
            page=data.get("page"),
            quote=data.get("quote", ""),
            expected_version=data.get("version"),
        )
        fresh = checklist_item_get_for(request.user, pk)
        return Response(ChecklistItemSerializer(fresh).data)


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("clause-checklists", ClauseChecklistViewSet, basename="clause-checklist")
    router.register("red-flag-waivers", RedFlagWaiverViewSet, basename="red-flag-waiver")
    router.register("checklist-templates", ChecklistTemplateViewSet, basename="checklist-template")
    router.register("contract-documents", ContractDocumentViewSet, basename="contract-document")
    return [
        path(
            "clause-checklist-items/<int:pk>/link/",
            ClauseLinkView.as_view(),
            name="clause-checklist-item-link",
        ),
        path(
            "cases/<int:case_pk>/clause-red-flags/",
            CaseRedFlagsView.as_view(),
            name="case-clause-red-flags",
        ),
    ]
