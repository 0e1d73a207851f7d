"""REST API for data-export self-assessments, the questionnaire and the PRC regime table;
and the facts auditors ask for: the data inventory, the model-weight files, encryption
and log retention (docs/rules/data-export.md#audit-facts)."""

import posixpath
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpResponse
from django.urls import URLPattern, path
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.views import APIView

from apps.assessments import services
from apps.assessments.audit_facts import ENCRYPTION_CHOICES, SENSITIVITY_CHOICES, sha256_error
from apps.assessments.models import (
    MAX_ATTACHMENT_BYTES,
    WEIGHT_FILE_BYTES_MAX,
    DataExportAssessment,
    ExportedDataset,
    ModelWeightFile,
)
from apps.assessments.questions import INDIVIDUALS_MAX, QUESTIONNAIRE_VERSION, QUESTIONS
from apps.assessments.regimes import REGIMES, SOURCES
from apps.assessments.report import build_report
from apps.assessments.rules import MECHANISM_STATUS_CHOICES, answers_errors
from apps.assessments.selectors import (
    AssessmentSummary,
    assessment_list_for,
    assessment_summary,
    dataset_list_for,
    weight_file_list_for,
)
from apps.cases.models import ProcurementCase
from apps.core.api import TrackedSerializer, TrackedViewSetMixin, version_edited
from apps.core.bounds import DAYS_MAX, REASON_MAX_LENGTH
from apps.core.permissions import RolePermission
from apps.core.uploads import api_declared_over
from apps.offers.models import Offer

if TYPE_CHECKING:
    from rest_framework.permissions import _SupportsHasPermission


class AnswerSerializer(serializers.Serializer):
    value = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=30,
        help_text="yes, no, not_applicable or a choice",
    )
    number = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=INDIVIDUALS_MAX,
        help_text="Individuals, or days to exit (at most 3650 days)",
    )
    note = serializers.CharField(required=False, allow_blank=True, max_length=REASON_MAX_LENGTH)
    attachment = serializers.CharField(read_only=True, allow_null=True)


class AnswersField(serializers.DictField):
    """Question key → answer; on write only the keys given change."""

    child = AnswerSerializer()

    def to_representation(self, value: Any) -> dict[str, dict[str, Any]]:
        """``value``: the assessment's answers (their related manager)."""
        return {
            a.question_key: {
                "value": a.value,
                "number": a.number,
                "note": a.note,
                "attachment": posixpath.basename(a.attachment.name or "") if a.attachment else None,
            }
            for a in value.all()
        }


class StateSerializer(serializers.Serializer):
    signed_off = serializers.BooleanField()
    expired = serializers.BooleanField()
    review_by = serializers.DateField(allow_null=True)
    status = serializers.CharField()
    exit_readiness_answered = serializers.BooleanField()
    sign_off_blockers = serializers.ListField(child=serializers.CharField())


class ConstraintSerializer(serializers.Serializer):
    key = serializers.CharField()
    text = serializers.CharField()
    because = serializers.ListField(child=serializers.CharField())


class AidSerializer(serializers.Serializer):
    mechanism = serializers.CharField()
    # The stubs see DRF's Field.label here; the serializer metaclass takes declared
    # fields off the class, so this is a field named "label", shadowing nothing.
    label = serializers.CharField()  # type: ignore[assignment]
    reason = serializers.CharField()
    citation = serializers.CharField(allow_null=True)
    missing = serializers.ListField(child=serializers.CharField())
    regime_key = serializers.CharField()
    disclaimer = serializers.CharField()


class RegimeConclusionSerializer(serializers.Serializer):
    """One regime's conclusion (PRC, EU GDPR, UK GDPR), side by side with the others."""

    regime = serializers.CharField()
    title = serializers.CharField()
    applies = serializers.BooleanField(allow_null=True)
    mechanism = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]
    reason = serializers.CharField()
    citations = serializers.ListField(child=serializers.CharField())
    still_needed = serializers.ListField(child=serializers.CharField())
    scc_module = serializers.IntegerField(allow_null=True)
    assessment_needed = serializers.BooleanField()
    to_do = serializers.ListField(child=serializers.CharField())
    adequacy_as_of = serializers.CharField(allow_null=True)


class TransferRegimesSerializer(serializers.Serializer):
    considered = serializers.CharField()
    disclaimer = serializers.CharField()
    conclusions = RegimeConclusionSerializer(many=True)


class MechanismStatusSerializer(serializers.Serializer):
    """The mechanism the decision aid names and the status stated for it at sign-off."""

    mechanism = serializers.CharField()
    named = serializers.BooleanField(help_text="The aid names a mechanism that needs a status")
    status = serializers.CharField(allow_null=True)
    expected_on = serializers.DateField(allow_null=True)
    reference = serializers.CharField(allow_null=True)
    stated_for = serializers.CharField(allow_null=True)
    applies = serializers.BooleanField(help_text="Stated for the mechanism named now")
    held = serializers.BooleanField(help_text="Approval accepts it: done or not needed")
    text = serializers.CharField(help_text="The words the approval gate and the case page use")


class DatasetSerializer(TrackedSerializer):
    """One dataset that leaves for the rented compute."""

    assessment = serializers.PrimaryKeyRelatedField(queryset=DataExportAssessment.objects.all())
    size_gb = serializers.DecimalField(max_digits=12, decimal_places=2, min_value=0)
    sensitivity = serializers.ChoiceField(
        choices=[choice for choice, _label in SENSITIVITY_CHOICES],
        help_text="public, internal, personal, sensitive_personal or important_data",
    )

    class Meta:
        model = ExportedDataset
        fields = [
            "id",
            "assessment",
            "name",
            "size_gb",
            "data_format",
            "sensitivity",
            "sync_window",
            "created_at",
            "updated_at",
            "version",
            "change_reason",
        ]
        read_only_fields = ["created_at", "updated_at"]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        moved = attrs.get("assessment", getattr(self.instance, "assessment", None))
        if self.instance is not None and moved != self.instance.assessment:
            raise serializers.ValidationError({"assessment": "It cannot move to another one."})
        return attrs


class WeightFileSerializer(TrackedSerializer):
    """One model-weight file deployed, with its SHA-256."""

    assessment = serializers.PrimaryKeyRelatedField(queryset=DataExportAssessment.objects.all())
    sha256 = serializers.CharField(
        max_length=80, help_text="64 hexadecimal characters; stored in lower case."
    )
    size_bytes = serializers.IntegerField(min_value=0, max_value=WEIGHT_FILE_BYTES_MAX)

    class Meta:
        model = ModelWeightFile
        fields = [
            "id",
            "assessment",
            "file_name",
            "sha256",
            "size_bytes",
            "created_at",
            "updated_at",
            "version",
            "change_reason",
        ]
        read_only_fields = ["created_at", "updated_at"]

    def validate_sha256(self, value: str) -> str:
        if error := sha256_error(value):
            raise serializers.ValidationError(error)
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        moved = attrs.get("assessment", getattr(self.instance, "assessment", None))
        if self.instance is not None and moved != self.instance.assessment:
            raise serializers.ValidationError({"assessment": "It cannot move to another one."})
        return attrs


class AuditGapSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="The finding's code in the case's register")
    key = serializers.CharField()
    message = serializers.CharField()


class AuditFactsSerializer(serializers.Serializer):
    """Encryption at rest and in transit, and the days the vendor keeps its logs."""

    encryption_at_rest = serializers.ChoiceField(
        choices=ENCRYPTION_CHOICES,
        required=False,
        allow_null=True,
        help_text="yes (with encryption_at_rest_mechanism), no or not_stated",
    )
    encryption_at_rest_mechanism = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, max_length=300
    )
    encryption_in_transit = serializers.ChoiceField(
        choices=ENCRYPTION_CHOICES,
        required=False,
        allow_null=True,
        help_text="yes (with encryption_in_transit_mechanism), no or not_stated",
    )
    encryption_in_transit_mechanism = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, max_length=300
    )
    log_retention_days = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=DAYS_MAX
    )


class AuditFactsReadSerializer(AuditFactsSerializer):
    log_retention_min_days = serializers.IntegerField(
        help_text="The organisation's minimum (LOG_RETENTION_MIN_DAYS)"
    )
    gaps = AuditGapSerializer(many=True, help_text="Each gap, as the findings register names it")


class AuditFactsWriteSerializer(AuditFactsSerializer):
    """Only the fields given change; the legal sign-off stays."""

    version = serializers.IntegerField(required=False)
    change_reason = serializers.CharField(max_length=500)


class RemoveSerializer(serializers.Serializer):
    change_reason = serializers.CharField(max_length=500, help_text="Why it is removed.")
    version = serializers.IntegerField(required=False)


class AssessmentSerializer(TrackedSerializer):
    case = serializers.PrimaryKeyRelatedField(queryset=ProcurementCase.objects.all())
    offer = serializers.PrimaryKeyRelatedField(
        queryset=Offer.objects.all(), required=False, allow_null=True
    )
    answers = AnswersField(required=False)
    signed_off_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    state = serializers.SerializerMethodField()
    derived_constraints = serializers.SerializerMethodField()
    prc_decision_aid = serializers.SerializerMethodField()
    transfer_regimes = serializers.SerializerMethodField()
    export_contradiction = serializers.SerializerMethodField()
    mechanism_status = serializers.SerializerMethodField()
    datasets = DatasetSerializer(many=True, read_only=True)
    weight_files = WeightFileSerializer(many=True, read_only=True)
    audit_facts = serializers.SerializerMethodField()

    class Meta:
        model = DataExportAssessment
        fields = [
            "id",
            "case",
            "offer",
            "jurisdiction",
            "questionnaire_version",
            "answers",
            "conclusion",
            "state",
            "derived_constraints",
            "prc_decision_aid",
            "transfer_regimes",
            "export_contradiction",
            "mechanism_status",
            "datasets",
            "weight_files",
            "audit_facts",
            "signed_off_by",
            "signed_off_at",
            "review_by",
            "voided_sign_off",
            "created_at",
            "updated_at",
            "version",
            "change_reason",
        ]
        # Uniqueness (one per case, one per offer) is checked by the service, which names it.
        validators: list[Callable[..., object]] = []
        read_only_fields = [
            "questionnaire_version",
            "signed_off_at",
            "review_by",
            "voided_sign_off",
            "created_at",
            "updated_at",
        ]

    def _summary(self, assessment: DataExportAssessment) -> AssessmentSummary:
        # DRF keeps the context dict it was given; the stubs type it as a read-only Mapping.
        cache = self.context.setdefault("summaries", {})  # type: ignore[attr-defined]
        if assessment.pk not in cache:
            cache[assessment.pk] = assessment_summary(assessment)
        return cache[assessment.pk]

    @extend_schema_field(StateSerializer)
    def get_state(self, assessment: DataExportAssessment) -> dict:
        summary = self._summary(assessment)
        return {
            **summary.state._asdict(),
            "status": summary.status,
            "exit_readiness_answered": summary.exit_readiness_answered,
            "sign_off_blockers": summary.blockers,
        }

    @extend_schema_field(ConstraintSerializer(many=True))
    def get_derived_constraints(self, assessment: DataExportAssessment) -> list:
        # many=True builds a ListSerializer; the stubs type the call as the child serializer.
        data = ConstraintSerializer(self._summary(assessment).constraints, many=True).data
        return cast(list[Any], data)

    @extend_schema_field(AidSerializer)
    def get_prc_decision_aid(self, assessment: DataExportAssessment) -> dict:
        aid = self._summary(assessment).aid
        data = AidSerializer(aid).data
        data["citation"] = str(aid.citation) if aid.citation else None
        return data

    @extend_schema_field(TransferRegimesSerializer)
    def get_transfer_regimes(self, assessment: DataExportAssessment) -> dict:
        summary = self._summary(assessment)
        return {
            "considered": summary.regimes_considered,
            "disclaimer": summary.aid.disclaimer,
            "conclusions": [c.as_dict() for c in summary.regimes],
        }

    @extend_schema_field(serializers.CharField())
    def get_export_contradiction(self, assessment: DataExportAssessment) -> str:
        return self._summary(assessment).contradiction

    @extend_schema_field(MechanismStatusSerializer)
    def get_mechanism_status(self, assessment: DataExportAssessment) -> dict:
        check = self._summary(assessment).mechanism
        return {
            "mechanism": check.mechanism,
            "named": check.named,
            "status": check.stated.status,
            "expected_on": check.stated.expected_on,
            "reference": check.stated.reference,
            "stated_for": check.stated.stated_for,
            "applies": check.applies,
            "held": check.held,
            "text": check.text,
        }

    @extend_schema_field(AuditFactsReadSerializer)
    def get_audit_facts(self, assessment: DataExportAssessment) -> dict:
        summary = self._summary(assessment)
        return {
            "encryption_at_rest": assessment.encryption_at_rest,
            "encryption_at_rest_mechanism": assessment.encryption_at_rest_mechanism,
            "encryption_in_transit": assessment.encryption_in_transit,
            "encryption_in_transit_mechanism": assessment.encryption_in_transit_mechanism,
            "log_retention_days": assessment.log_retention_days,
            "log_retention_min_days": summary.log_retention_min_days,
            "gaps": [
                {"code": gap.gap.value, "key": gap.key, "message": gap.message}
                for gap in summary.audit_gaps
            ],
        }

    def validate_answers(self, answers: dict[str, Any]) -> dict[str, Any]:
        errors = answers_errors({key: dict(answer) for key, answer in answers.items()})
        if errors:
            nested: dict = {}
            for key, message in errors.items():
                if key.endswith("__number"):
                    nested.setdefault(key.removesuffix("__number"), {})["number"] = [message]
                else:
                    nested[key] = [message]
            raise serializers.ValidationError(nested)
        return answers

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        if self.instance is not None:
            for name in ("case", "offer"):
                if name in attrs and attrs[name] != getattr(self.instance, name):
                    raise serializers.ValidationError({name: "An assessment cannot move."})
        elif attrs.get("offer") is not None and attrs["offer"].case_id != attrs["case"].pk:
            raise serializers.ValidationError({"offer": "This offer belongs to another case."})
        return attrs


class SignOffSerializer(serializers.Serializer):
    review_by = serializers.DateField(
        required=False, help_text="Defaults to 90 days after today's sign-off."
    )
    version = serializers.IntegerField(required=False)
    mechanism_status = serializers.ChoiceField(
        choices=[choice for choice, _label in MECHANISM_STATUS_CHOICES],
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="Required where the decision aid names a mechanism: not_needed, "
        "in_progress (with mechanism_expected_on) or done (with mechanism_reference).",
    )
    mechanism_expected_on = serializers.DateField(required=False, allow_null=True)
    mechanism_reference = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, max_length=200
    )


class AttachmentSerializer(serializers.Serializer):
    file = serializers.FileField(allow_empty_file=False)
    change_reason = serializers.CharField(max_length=500)
    version = serializers.IntegerField(required=False)


ATTACHMENT_UPLOAD_CHECK = api_declared_over(lambda: MAX_ATTACHMENT_BYTES)


class AssessmentViewSet(
    TrackedViewSetMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    # docs/rules/data-export.md (the docstring below is shown in the API's schema).
    """Data-export self-assessments: answers, derived constraints, decision aid."""

    serializer_class = AssessmentSerializer
    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "assessments.view_dataexportassessment",
        "POST": "assessments.add_dataexportassessment",
        "PUT": "assessments.change_dataexportassessment",
        "PATCH": "assessments.change_dataexportassessment",
    }
    filterset_fields = ["case", "offer"]

    def get_queryset(self) -> QuerySet[DataExportAssessment]:
        return assessment_list_for(self.request.user)

    def get_permissions(self) -> Sequence["_SupportsHasPermission"]:
        if self.action == "sign_off":
            self.required_permissions = {"POST": "assessments.sign_off_dataexportassessment"}
        elif self.action == "attachment":
            self.required_permissions = {"PUT": "assessments.change_dataexportassessment"}
        elif self.action == "audit_facts":
            self.required_permissions = {"PATCH": "assessments.change_dataexportassessment"}
        return super().get_permissions()

    def perform_service_create(self, data: dict[str, Any]) -> DataExportAssessment:
        return services.assessment_create(actor=self.request.user, **data)

    def perform_service_update(
        self,
        assessment: DataExportAssessment,
        data: dict[str, Any],
        reason: str,
        version: int | None,
    ) -> DataExportAssessment:
        data.pop("case", None)
        data.pop("offer", None)
        updated, _voided = services.assessment_save(
            actor=self.request.user,
            assessment=assessment,
            reason=reason,
            expected_version=version,
            **data,
        )
        return updated

    @extend_schema(request=SignOffSerializer, responses=AssessmentSerializer)
    @action(detail=True, methods=["post"], url_path="sign-off")
    def sign_off(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        body = SignOffSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        signed = services.assessment_sign_off(
            actor=request.user,
            assessment=self.get_object(),
            review_by=body.validated_data.get("review_by"),
            expected_version=version_edited(body.validated_data, editing=True),
            mechanism_status=body.validated_data.get("mechanism_status"),
            mechanism_expected_on=body.validated_data.get("mechanism_expected_on"),
            mechanism_reference=body.validated_data.get("mechanism_reference"),
        )
        return Response(self.get_serializer(self.get_queryset().get(pk=signed.pk)).data)

    @extend_schema(request=AttachmentSerializer, responses=AssessmentSerializer)
    @action(
        detail=True,
        methods=["put"],
        url_path=r"attachments/(?P<key>[a-z0-9_]+)",
        parser_classes=[MultiPartParser],
    )
    def attachment(
        self,
        request: Request,
        *,
        pk: str,
        key: str,
        format: str | None = None,
    ) -> Response | HttpResponse:

        # Refused from the declared length, before the parser spools the body to disk.
        if refusal := ATTACHMENT_UPLOAD_CHECK(request):
            return refusal
        body = AttachmentSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.assessment_save(
            actor=request.user,
            assessment=self.get_object(),
            reason=body.validated_data["change_reason"],
            attachments={key: body.validated_data["file"]},
            expected_version=version_edited(body.validated_data, editing=True),
        )
        return Response(self.get_serializer(self.get_queryset().get(pk=pk)).data)

    @extend_schema(request=AuditFactsWriteSerializer, responses=AssessmentSerializer)
    @action(detail=True, methods=["patch"], url_path="audit-facts")
    def audit_facts(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        """Encryption at rest and in transit, and log retention; the sign-off stays."""
        body = AuditFactsWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        reason = data.pop("change_reason")
        version = version_edited(data, editing=True)
        data.pop("version", None)
        assessment = self.get_object()
        services.audit_facts_save(
            actor=request.user,
            assessment=assessment,
            fields=data,
            reason=reason,
            expected_version=version,
        )
        return Response(self.get_serializer(self.get_queryset().get(pk=assessment.pk)).data)

    @extend_schema(responses={200: dict})
    @action(detail=True, methods=["get"])
    def report(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        """The assessment in the sections of the official self-assessment report template."""
        return Response(build_report(assessment_summary(self.get_object())))


class _ListedViewSet(
    TrackedViewSetMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """A list of an assessment's audit facts: added, edited with a reason and the version
    edited, and removed with a reason (``remove/``); each write keeps a history row."""

    permission_classes = [RolePermission]
    filterset_fields = ["assessment"]
    model_name = ""
    add: Callable[..., Any]
    update_row: Callable[..., Any]
    remove_row: Callable[..., Any]
    row_argument = ""

    def get_permissions(self) -> Sequence["_SupportsHasPermission"]:
        name = f"assessments.%s_{self.model_name}"
        if self.action == "remove":
            self.required_permissions = {"POST": name % "delete"}
        else:
            self.required_permissions = {
                "GET": name % "view",
                "POST": name % "add",
                "PUT": name % "change",
                "PATCH": name % "change",
            }
        return super().get_permissions()

    def perform_service_create(self, data: dict[str, Any]) -> Any:
        assessment = data.pop("assessment")
        return type(self).add(actor=self.request.user, assessment=assessment, fields=data)

    def perform_service_update(
        self, row: Any, data: dict[str, Any], reason: str, version: int | None
    ) -> Any:
        data.pop("assessment", None)
        return type(self).update_row(
            actor=self.request.user,
            fields=data,
            reason=reason,
            expected_version=version,
            **{self.row_argument: row},
        )

    @extend_schema(request=RemoveSerializer, responses={204: None})
    @action(detail=True, methods=["post"])
    def remove(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        body = RemoveSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        type(self).remove_row(
            actor=request.user,
            reason=body.validated_data["change_reason"],
            expected_version=version_edited(body.validated_data, editing=True),
            **{self.row_argument: self.get_object()},
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class DatasetViewSet(_ListedViewSet):
    # docs/rules/data-export.md#audit-facts (the docstring below is shown in the API's schema).
    """The data inventory: each dataset leaving for the rented compute, with its size in
    GB, format, sensitivity and sync window."""

    serializer_class = DatasetSerializer
    model_name = "exporteddataset"
    add = staticmethod(services.dataset_add)
    update_row = staticmethod(services.dataset_update)
    remove_row = staticmethod(services.dataset_remove)
    row_argument = "dataset"

    def get_queryset(self) -> QuerySet[ExportedDataset]:
        return dataset_list_for(self.request.user)


class WeightFileViewSet(_ListedViewSet):
    """The model-weight files deployed on the rented compute, each with its SHA-256 and size
    in bytes."""

    serializer_class = WeightFileSerializer
    model_name = "modelweightfile"
    add = staticmethod(services.weight_file_add)
    update_row = staticmethod(services.weight_file_update)
    remove_row = staticmethod(services.weight_file_remove)
    row_argument = "weight_file"

    def get_queryset(self) -> QuerySet[ModelWeightFile]:
        return weight_file_list_for(self.request.user)


class QuestionnaireView(APIView):
    """The default questionnaire: keys, kinds, allowed answers, seed and report section."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "assessments.view_dataexportassessment"}

    @extend_schema(responses={200: dict})
    def get(self, request: Request) -> Response:
        return Response(
            {
                "version": QUESTIONNAIRE_VERSION,
                "questions": [
                    {
                        "key": q.key,
                        "label": str(q.label),
                        "kind": q.kind,
                        "choices": [c for c, _label in q.choices] if q.takes_value else [],
                        "takes_number": q.takes_number,
                        "section": q.section,
                        "source": str(q.source),
                    }
                    for q in QUESTIONS
                ],
            }
        )


class PrcRegimeView(APIView):
    """Thresholds of the PRC cross-border regime with their legal sources (an aid, not advice)."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "assessments.view_dataexportassessment"}

    @extend_schema(responses={200: dict})
    def get(self, request: Request) -> Response:
        return Response(
            {
                "disclaimer": "An aid to the legal reviewer, not a legal opinion.",
                "sources": [
                    {**vars(s), "published": s.published, "effective": s.effective} for s in SOURCES
                ],
                "regimes": [
                    {
                        "key": r.key,
                        "effective": r.effective,
                        "assessment_min_individuals": r.assessment_min_individuals,
                        "assessment_min_sensitive": r.assessment_min_sensitive,
                        "contract_min_individuals": r.contract_min_individuals,
                        "contract_min_sensitive": r.contract_min_sensitive,
                        "citations": {k: str(c) for k, c in r.citations.items()},
                        "note": r.note,
                    }
                    for r in REGIMES
                ],
            }
        )


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("data-export-assessments", AssessmentViewSet, basename="data-export-assessment")
    router.register("data-export-datasets", DatasetViewSet, basename="data-export-dataset")
    router.register(
        "data-export-weight-files", WeightFileViewSet, basename="data-export-weight-file"
    )
    return [
        path("data-export-questions/", QuestionnaireView.as_view(), name="data-export-questions"),
        path("prc-regimes/", PrcRegimeView.as_view(), name="prc-regimes"),
    ]
