"""REST API for the sizing calculator, a case's compute demand and its requirement spec."""

from decimal import Decimal
from typing import Any

from django.db import models
from django.shortcuts import get_object_or_404
from django.urls import URLPattern, path
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.views import APIView

from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_get_for
from apps.core.api import version_edited
from apps.core.permissions import RolePermission
from apps.offers.models import Offer
from apps.offers.selectors import offers_of_case
from apps.sizing import selectors, services
from apps.sizing.calculator import InferenceSizing, SizingInputError
from apps.sizing.inputs import HOURS_MAX, INPUT_MAX, demand_fields, size_from
from apps.sizing.models import (
    DTYPE_CHOICES,
    TOLERANCE_VALIDATORS,
    ComputeDemand,
    RequirementSpec,
)
from apps.sizing.presets import PRESETS
from apps.sizing.requirement import SPEC_FIELDS, RequirementCheck
from apps.sizing.training import TrainingSizing


def _whole_number(name: str) -> serializers.IntegerField:
    return serializers.IntegerField(required=False, min_value=1, max_value=INPUT_MAX[name])


class SizingInputSerializer(serializers.Serializer):
    # docs/rules/sizing.md (the docstring below is shown in the API's schema).
    """Calculator inputs; the same fields a compute demand stores."""

    mode = serializers.ChoiceField(choices=ComputeDemand.Mode.choices, default="inference")
    model_preset = serializers.ChoiceField(
        choices=[""] + sorted(PRESETS), required=False, allow_blank=True
    )
    model_name = serializers.CharField(required=False, allow_blank=True, max_length=100)
    parameters = _whole_number("parameters")
    layers = _whole_number("layers")
    hidden_size = _whole_number("hidden_size")
    attention_heads = _whole_number("attention_heads")
    kv_heads = _whole_number("kv_heads")
    head_dim = _whole_number("head_dim")
    weight_dtype = serializers.ChoiceField(choices=DTYPE_CHOICES)
    card_memory_gib = serializers.DecimalField(max_digits=7, decimal_places=2, min_value=1)
    reserve_pct = serializers.DecimalField(
        max_digits=4, decimal_places=1, min_value=10, max_value=20, default=Decimal(15)
    )
    kv_dtype = serializers.ChoiceField(choices=DTYPE_CHOICES, required=False)
    context_tokens = _whole_number("context_tokens")
    target_concurrency = _whole_number("target_concurrency")
    tensor_parallel = _whole_number("tensor_parallel")
    micro_batch_sequences = _whole_number("micro_batch_sequences")
    sequence_tokens = _whole_number("sequence_tokens")
    optimizer = serializers.ChoiceField(
        choices=["adamw", "sgd_momentum", "adafactor"], required=False
    )
    gradient_checkpointing = serializers.BooleanField(required=False, default=False)
    data_parallel_replicas = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=INPUT_MAX["data_parallel_replicas"],
        help_text="Training: replicas trained side by side; blank means one.",
    )
    checkpoints_kept = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=INPUT_MAX["checkpoints_kept"],
        help_text="Training: checkpoints kept on local disk; blank means two.",
    )
    hours_needed = serializers.DecimalField(
        max_digits=10,
        decimal_places=1,
        min_value=Decimal("0.1"),
        max_value=HOURS_MAX,
        required=False,
        allow_null=True,
        help_text="Hours the capacity is needed; prices the capacity in the comparison.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        try:
            self.result = size_from(attrs)
        except SizingInputError as error:
            raise serializers.ValidationError({error.field: [error.message]}) from None
        return attrs


class DemandWriteSerializer(SizingInputSerializer):
    version = serializers.IntegerField(required=False)
    change_reason = serializers.CharField(required=False, allow_blank=True, max_length=500)


def result_payload(result: InferenceSizing | TrainingSizing) -> dict:
    """Every field of the result, bytes as integers plus GiB for reading."""
    payload = {
        name: value
        for name, value in vars(result).items()
        if name != "inputs" and not name.startswith("_")
    }
    payload["warnings"] = list(result.warnings)
    payload["in_gib"] = {k: str(v) for k, v in result.in_gib.items()}
    payload["kv_share"] = str(payload["kv_share"]) if "kv_share" in payload else None
    return payload


class SizingCalculateView(APIView):
    """Compute a sizing without saving it."""

    permission_classes = [RolePermission]
    required_permissions = {"POST": "sizing.view_computedemand"}

    @extend_schema(request=SizingInputSerializer, responses={200: dict})
    def post(self, request: Request) -> Response:
        body = SizingInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return Response({"inputs": request.data, "result": result_payload(body.result)})


class PresetSerializer(serializers.Serializer):
    key = serializers.CharField()
    name = serializers.CharField()
    parameters = serializers.IntegerField()
    layers = serializers.IntegerField()
    hidden_size = serializers.IntegerField()
    attention_heads = serializers.IntegerField()
    kv_heads = serializers.IntegerField()
    head_dim = serializers.IntegerField()
    attention = serializers.CharField()
    is_moe = serializers.BooleanField()
    active_parameters = serializers.IntegerField(allow_null=True)
    # The stubs see DRF's Field.source here; the serializer metaclass takes declared
    # fields off the class, so this is a field named "source", shadowing nothing.
    source = serializers.CharField()  # type: ignore[assignment]


class SizingPresetsView(APIView):
    """Model presets with their published architecture numbers."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "sizing.view_computedemand"}

    @extend_schema(responses={200: PresetSerializer(many=True)})
    def get(self, request: Request) -> Response:
        return Response(
            [
                {
                    "key": p.key,
                    "name": p.name,
                    "parameters": p.parameters,
                    "layers": p.layers,
                    "hidden_size": p.hidden_size,
                    "attention_heads": p.attention_heads,
                    "kv_heads": p.kv_heads,
                    "head_dim": p.head_dim,
                    "attention": p.attention,
                    "is_moe": p.is_moe,
                    "active_parameters": p.active_parameters,
                    "source": p.source,
                }
                for p in PRESETS.values()
            ]
        )


def _replacing(fields: dict) -> dict:
    """The whole demand a PUT sends: a field left out is cleared to its default.

    Merged into the saved demand instead, a custom model sent without ``model_preset``
    was stored, and sized, as the preset saved before it.
    """
    return {
        name: fields[name] if name in fields else _default_of(name)
        for name in services.DEMAND_FIELDS
    }


def _default_of(name: str) -> Any:
    field = ComputeDemand._meta.get_field(name)
    assert isinstance(field, models.Field)  # a column of the demand, not a reverse relation
    return field.get_default()


class ComputeDemandView(APIView):
    """A case's saved compute demand, with its result recomputed.

    PUT sends the whole demand: a field left out is cleared (a custom model needs no
    ``model_preset``, and is sized from its own numbers).
    """

    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "sizing.view_computedemand",
        "PUT": "sizing.change_computedemand",
    }

    @extend_schema(responses={200: dict})
    def get(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        demand = get_object_or_404(ComputeDemand, case=case)
        return Response(self._payload(demand))

    @extend_schema(request=DemandWriteSerializer, responses={200: dict})
    def put(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        body = DemandWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        reason = data.pop("change_reason", "")
        existing = ComputeDemand.objects.filter(case=case).exists()
        if existing and not reason.strip():
            raise serializers.ValidationError({"change_reason": [_("Say why the demand changes.")]})
        version = version_edited(data, editing=existing)
        data.pop("version", None)
        demand = services.compute_demand_save(
            actor=request.user,
            case=case,
            fields=_replacing(data),
            reason=reason,
            expected_version=version,
        )
        return Response(
            self._payload(demand),
            status=status.HTTP_200_OK if existing else status.HTTP_201_CREATED,
        )

    def _payload(self, demand: ComputeDemand) -> dict:
        fields = demand_fields(demand)
        return {
            "case": demand.case_id,
            "version": demand.version,
            "inputs": {k: (str(v) if v is not None else None) for k, v in fields.items()},
            "result": result_payload(size_from(fields)),
        }


class RequirementSpecWriteSerializer(serializers.ModelSerializer):
    """The whole requirement spec: every item is a floor; one left out is cleared, and a
    tolerance left out is 0."""

    tolerance_pct = serializers.IntegerField(
        required=False,
        validators=list(TOLERANCE_VALIDATORS),  # the page's words for a share out of range
        help_text=(
            "Percent, 0–50: an offer short of a numeric figure by at most this share needs "
            "the tech lead's acceptance instead of blocking."
        ),
    )

    version = serializers.IntegerField(
        required=False,
        help_text="Version edited: required to change a saved spec (missing: 428; stale: 409).",
    )
    change_reason = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=500,
        help_text="Why the spec changes (required to change a saved spec).",
    )

    class Meta:
        model = RequirementSpec
        fields = [*SPEC_FIELDS, "version", "change_reason"]


def _check_payload(offer: Offer, check: RequirementCheck | None) -> dict:
    assert check is not None  # a saved requirement checks every offer
    return {
        "offer": offer.pk,
        "vendor": str(offer.vendor),
        "meets": check.meets,
        "shortfalls": check.shortfalls,
        "within_tolerance": check.within_tolerance,
        "items": [
            {
                "field": item.field,
                "label": item.label,
                "required": item.required,
                "declared": item.offered,
                "verdict": str(item.verdict),
                "shortfall": item.shortfall,
            }
            for item in check.checks
        ],
    }


class RequirementSpecView(APIView):
    """A case's requirement spec, where each item came from, and every offer checked against it.

    PUT sends the whole spec: an item left out is cleared (no floor). The sizing's
    values are listed under ``items`` (``sizing_value``) to fill a spec from.
    """

    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "sizing.view_requirementspec",
        "PUT": "sizing.change_requirementspec",
    }

    @extend_schema(responses={200: dict})
    def get(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        requirement = get_object_or_404(RequirementSpec, case=case)
        return Response(self._payload(case, requirement))

    @extend_schema(request=RequirementSpecWriteSerializer, responses={200: dict, 201: dict})
    def put(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        body = RequirementSpecWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        reason = data.pop("change_reason", "")
        existing = RequirementSpec.objects.filter(case=case).exists()
        if existing and not reason.strip():
            raise serializers.ValidationError(
                {"change_reason": [_("Say why the requirement spec changes.")]}
            )
        version = version_edited(data, editing=existing)
        data.pop("version", None)
        fields = {name: data.get(name, _requirement_default(name)) for name in SPEC_FIELDS}
        requirement = services.requirement_spec_save(
            actor=request.user,
            case=case,
            fields=fields,
            reason=reason,
            expected_version=version,
        )
        return Response(
            self._payload(case, requirement),
            status=status.HTTP_200_OK if existing else status.HTTP_201_CREATED,
        )

    def _payload(self, case: ProcurementCase, requirement: RequirementSpec) -> dict:
        derivation = selectors.requirement_derivation(selectors.demand_of(case))
        return {
            "case": case.pk,
            "version": requirement.version,
            **{
                name: _raw(value)
                for name, value in selectors.requirement_values(requirement).items()
            },
            "items": [
                {
                    "field": item.field,
                    "label": item.label,
                    "value": _raw(item.value),
                    "from_sizing": item.from_sizing,
                    "sizing_value": _raw(item.sizing_value),
                    "sizing_reason": item.reason,
                }
                for item in selectors.requirement_items(requirement, derivation)
            ],
            "offers": [
                _check_payload(offer, selectors.requirement_check_for(requirement, offer))
                for offer in offers_of_case(case)
            ],
        }


def _raw(value: Any) -> Any:
    """Decimals as strings, as DRF gives them elsewhere; blank choices as ""."""
    return str(value) if isinstance(value, Decimal) else value


def _requirement_default(name: str) -> Any:
    field = RequirementSpec._meta.get_field(name)
    assert isinstance(field, models.Field)
    if field.has_default():
        return field.get_default()
    return "" if isinstance(field, models.CharField) else None


def register(router: BaseRouter) -> list[URLPattern]:
    return [
        path("sizing/", SizingCalculateView.as_view(), name="sizing-calculate"),
        path("sizing/presets/", SizingPresetsView.as_view(), name="sizing-presets"),
        path(
            "cases/<int:case_pk>/compute-demand/",
            ComputeDemandView.as_view(),
            name="compute-demand",
        ),
        path(
            "cases/<int:case_pk>/requirement-spec/",
            RequirementSpecView.as_view(),
            name="requirement-spec",
        ),
    ]
