"""REST API for criteria sets, scorecards and the offer comparison."""

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

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

from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_get_for
from apps.core.bounds import CHANGE_REASON_MAX_LENGTH
from apps.core.permissions import RolePermission
from apps.offers.models import Offer
from apps.scorecards import services
from apps.scorecards.models import CriteriaSet, Scorecard
from apps.scorecards.scoring import SCORE_MAX, SCORE_MIN
from apps.scorecards.selectors import OfferComparisonRow, case_comparison
from apps.sizing.fit import DemandFit


class CriterionSerializer(serializers.Serializer):
    key = serializers.SlugField(max_length=50)
    # The stubs see DRF's Field.label here; the serializer metaclass takes declared
    # fields off the class, so this is a field named "label", shadowing nothing.
    label = serializers.CharField(max_length=200)  # type: ignore[assignment]
    weight = serializers.IntegerField(min_value=0, max_value=100)


class CriteriaSetSerializer(serializers.ModelSerializer):
    case = serializers.PrimaryKeyRelatedField(queryset=ProcurementCase.objects.all())
    criteria = CriterionSerializer(many=True)
    published_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )

    class Meta:
        model = CriteriaSet
        fields = ["id", "case", "revision", "criteria", "note", "published_by", "created_at"]
        read_only_fields = ["revision", "created_at"]

    def validate_criteria(self, criteria: list[dict[str, Any]]) -> list[dict[str, Any]]:
        total = sum(c["weight"] for c in criteria)
        if total != 100:
            raise serializers.ValidationError(
                _("Weights must sum to 100; they sum to %(total)s.") % {"total": total}
            )
        keys = [c["key"] for c in criteria]
        if len(keys) != len(set(keys)):
            raise serializers.ValidationError(_("Each criterion key must be unique."))
        return criteria


class CriteriaSetViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Published criteria revisions; POST publishes a new revision."""

    serializer_class = CriteriaSetSerializer
    permission_classes = [RolePermission]
    required_permissions = {
        "GET": "scorecards.view_criteriaset",
        "POST": "scorecards.add_criteriaset",
    }
    filterset_fields = ["case"]

    def get_queryset(self) -> QuerySet[CriteriaSet]:
        return CriteriaSet.objects.select_related("published_by").order_by("case_id", "-revision")

    def perform_create(self, serializer: serializers.BaseSerializer) -> None:
        data = serializer.validated_data
        serializer.instance = services.criteria_set_publish(
            actor=self.request.user,
            case=data["case"],
            criteria=[dict(c) for c in data["criteria"]],
            note=data.get("note", ""),
        )


class ScoreValueSerializer(serializers.Serializer):
    score = serializers.IntegerField(min_value=SCORE_MIN, max_value=SCORE_MAX, allow_null=True)
    comment = serializers.CharField(required=False, allow_blank=True, max_length=2000)


class ScoreEntryReadSerializer(serializers.Serializer):
    criterion_key = serializers.CharField()
    score = serializers.IntegerField(allow_null=True)
    comment = serializers.CharField()


class ScorecardSerializer(serializers.ModelSerializer):
    offer = serializers.PrimaryKeyRelatedField(queryset=Offer.objects.all())
    reviewer: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    criteria_revision = serializers.IntegerField(source="criteria_set.revision", read_only=True)
    entries = ScoreEntryReadSerializer(many=True, read_only=True)
    scores = serializers.DictField(
        child=ScoreValueSerializer(),
        write_only=True,
        help_text="Criterion key → {score 0–5 or null, comment}. Omitted criteria count as 0.",
    )
    version = serializers.IntegerField(required=False)
    change_reason = serializers.CharField(
        write_only=True, required=False, allow_blank=True, max_length=CHANGE_REASON_MAX_LENGTH
    )

    class Meta:
        model = Scorecard
        fields = [
            "id",
            "offer",
            "reviewer",
            "criteria_revision",
            "entries",
            "scores",
            "version",
            "change_reason",
            "updated_at",
        ]
        read_only_fields = ["updated_at"]


class ScorecardViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Scorecards; POST saves the caller's own scorecard for an offer (create or revise)."""

    serializer_class = ScorecardSerializer
    permission_classes = [RolePermission]
    required_permissions = {"GET": "scorecards.view_scorecard", "POST": "scorecards.add_scorecard"}
    filterset_fields = {"offer": ["exact"], "offer__case": ["exact"]}

    def get_queryset(self) -> QuerySet[Scorecard]:
        return (
            Scorecard.objects.select_related("reviewer", "criteria_set")
            .prefetch_related("entries")
            .order_by("pk")
        )

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = self.get_serializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        existed = Scorecard.objects.filter(offer=data["offer"], reviewer=request.user.pk).exists()

        if existed and not (data.get("change_reason") or "").strip():
            raise serializers.ValidationError(
                {"change_reason": [_("Say why you are revising your scores.")]}
            )
        card = services.scorecard_save(
            actor=request.user,
            offer=data["offer"],
            scores={k: dict(v) for k, v in data["scores"].items()},
            reason=data.get("change_reason", ""),
            expected_version=data.get("version"),
        )
        card = self.get_queryset().get(pk=card.pk)
        return Response(
            self.get_serializer(card).data,
            status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED,
        )


class ComparisonView(APIView):
    """Every offer of a case side by side: totals, breakdowns, prices, sensitivity."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "scorecards.view_scorecard"}

    @extend_schema(responses={200: dict})
    def get(self, request: Request, case_pk: int) -> Response:
        case = case_get_for(request.user, case_pk)
        result = case_comparison(case)
        return Response(
            {
                "case": case.pk,
                "criteria_revision": result.criteria_set.revision if result.criteria_set else None,
                "criteria": [vars(c) for c in result.criteria],
                "leaders": list(result.leaders),
                "offers": [_row(row) for row in result.rows],
                "sensitivity": {
                    "stable": result.sensitivity.stable,
                    "step": result.sensitivity.step,
                    "changes": [
                        {
                            "criterion": s.criterion_key,
                            "delta": str(s.applied_delta),
                            "leaders": list(s.leaders),
                        }
                        for s in result.sensitivity.scenarios
                        if s.leader_changed
                    ],
                },
            }
        )


def _row(row: OfferComparisonRow) -> dict:
    return {
        "offer": row.offer.pk,
        "vendor": str(row.offer.vendor),
        "total": None if row.score.total is None else str(row.score.total),
        "reviewer_count": row.score.reviewer_count,
        "criterion_means": {
            k: None if v is None else str(v) for k, v in row.score.criterion_means.items()
        },
        "criterion_unanswered": dict(row.score.criterion_unanswered),
        "cost_per_gpu_hour": (
            None if row.price is None else str(row.price.effective_cost_per_gpu_hour)
        ),
        "price_rank": row.price_rank,
        "price_explanation": list(row.price.explanation) if row.price else [row.price_problem],
        "demand_fit": _fit(row.fit),
        "needed_capacity_cost": _needed_cost(row),
    }


def _cents(amount: Decimal) -> str:
    return str(amount.quantize(Decimal("0.01"), ROUND_HALF_UP))


def _fit(fit: DemandFit | None) -> dict | None:
    """How the offer measures up to the compute demand; None without a demand."""
    if fit is None:
        return None
    return {
        "meets": fit.meets_target,
        "mode": fit.mode,
        "gpus_needed": fit.gpus_needed,
        "cards_per_node": fit.cards_per_node,
        "nodes_needed": fit.nodes_needed,
        "gpus_in_whole_nodes": fit.gpus_in_whole_nodes,
        "gpus_offered": fit.gpus_offered,
        "multi_node": fit.multi_node,
        "checkpoint_bytes": fit.checkpoint_bytes,
        "checkpoints_kept": fit.checkpoints_kept,
        "disk_needed_bytes": fit.disk_needed_bytes,
        "disk_offered_bytes": fit.disk_offered_bytes,
        "summary": list(fit.summary),
        "shortfalls": list(fit.shortfalls),
    }


def _needed_cost(row: OfferComparisonRow) -> dict:
    """Whole nodes × hours × the effective GPU-hour price, or why it cannot be said."""
    cost = row.needed_cost
    if cost is None:
        return {"problem": row.needed_cost_problem}
    return {
        "gpus": cost.gpus,
        "cost_per_gpu_hour": str(cost.cost_per_gpu_hour),
        "per_hour": _cents(cost.per_hour),
        "hours": None if cost.hours is None else str(cost.hours),
        "total": None if cost.total is None else _cents(cost.total),
        "currency": row.offer.currency,
        "explanation": list(cost.explanation),
    }


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("criteria-sets", CriteriaSetViewSet, basename="criteria-set")
    router.register("scorecards", ScorecardViewSet, basename="scorecard")
    return [path("cases/<int:case_pk>/comparison/", ComparisonView.as_view(), name="comparison")]
