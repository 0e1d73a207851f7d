"""REST API of the questionnaire library and of what vendors answered to it (read only).

Questionnaires with their versions and questions, to every internal role; and, for one
invitation, each questionnaire sent with it, its answers and its score.
"""

from django.contrib.auth.models import User
from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404
from django.urls import URLPattern, path
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter
from rest_framework.views import APIView

from apps.core.permissions import RolePermission
from apps.offers.selectors import offer_list_for
from apps.portal.models import Question, Questionnaire, QuestionnaireVersion, VendorInvitation
from apps.portal.questionnaire_selectors import AnsweredQuestionnaire, answered, sent_list


class QuestionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Question
        fields = [
            "id",
            "position",
            "key",
            "text",
            "help_text",
            "kind",
            "required",
            "options",
            "unit",
            "min_value",
            "max_value",
            "weight",
            "expected_yes",
            "threshold",
            "threshold_direction",
            "date_limit",
            "date_direction",
        ]


class VersionSerializer(serializers.ModelSerializer):
    published_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    questions = QuestionSerializer(many=True, read_only=True)

    class Meta:
        model = QuestionnaireVersion
        fields = [
            "id",
            "questionnaire",
            "number",
            "note",
            "published_at",
            "published_by",
            "questions",
        ]


class VersionSummarySerializer(serializers.ModelSerializer):
    class Meta:
        model = QuestionnaireVersion
        fields = ["id", "number", "note", "published_at"]


class QuestionnaireSerializer(serializers.ModelSerializer):
    owner: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    versions = VersionSummarySerializer(many=True, read_only=True)

    class Meta:
        model = Questionnaire
        fields = ["id", "title", "purpose", "owner", "versions", "created_at"]


class QuestionnaireViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """The questionnaire library: each questionnaire with its versions (drafts included)."""

    serializer_class = QuestionnaireSerializer
    permission_classes = [RolePermission]
    required_permissions = {"GET": "portal.view_questionnaire"}

    def get_queryset(self) -> QuerySet[Questionnaire]:
        return (
            Questionnaire.objects.select_related("owner")
            .prefetch_related(
                Prefetch("versions", queryset=QuestionnaireVersion.objects.order_by("-number"))
            )
            .order_by("title", "pk")
        )


class QuestionnaireVersionViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Versions with their questions, in order; ``?published=1`` for published ones only."""

    serializer_class = VersionSerializer
    permission_classes = [RolePermission]
    required_permissions = {"GET": "portal.view_questionnaireversion"}

    def get_queryset(self) -> QuerySet[QuestionnaireVersion]:
        versions = (
            QuestionnaireVersion.objects.select_related("published_by")
            .prefetch_related(Prefetch("questions", queryset=Question.objects.order_by("position")))
            .order_by("questionnaire_id", "-number")
        )
        if self.request.query_params.get("published") in ("1", "true"):
            versions = versions.filter(published_at__isnull=False)
        return versions


class AnswerRowSerializer(serializers.Serializer):
    key = serializers.CharField(source="question.key")
    question = serializers.CharField(source="question.text")
    kind = serializers.CharField(source="question.kind")
    answer = serializers.CharField()
    file = serializers.CharField(source="document.name", default=None)
    file_sha256 = serializers.CharField(source="document.sha256", default=None)
    expected = serializers.CharField()
    missed = serializers.BooleanField()
    previous = serializers.CharField(allow_null=True)
    changed = serializers.BooleanField()


class AnsweredSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="sent.pk")
    questionnaire = serializers.CharField(source="sent.questionnaire_version.questionnaire.title")
    version = serializers.IntegerField(source="sent.questionnaire_version.number")
    version_id = serializers.IntegerField(source="sent.questionnaire_version.pk")
    submitted_at = serializers.DateTimeField(source="sent.submitted_at", allow_null=True)
    score_percent = serializers.DecimalField(
        source="score.percent", max_digits=5, decimal_places=1, allow_null=True
    )
    score = serializers.CharField(source="score_shown")
    missed = serializers.ListField(child=serializers.CharField(), source="score.missed")
    answers = AnswerRowSerializer(many=True, source="rows")


class InvitationQuestionnairesView(APIView):
    """What the vendor answered to each questionnaire sent with one invitation, scored."""

    permission_classes = [RolePermission]
    required_permissions = {"GET": "portal.view_questionnaireanswer"}

    @extend_schema(
        responses={200: AnsweredSerializer(many=True)},
        summary="An invitation's questionnaires: answers, score and what missed",
    )
    def get(self, request: Request, pk: int) -> Response:
        invitation = get_object_or_404(
            VendorInvitation.objects.filter(offer__in=offer_list_for(request.user)), pk=pk
        )
        items: list[AnsweredQuestionnaire] = [answered(sent) for sent in sent_list(invitation)]
        return Response(AnsweredSerializer(items, many=True).data)


def register(router: BaseRouter) -> list[URLPattern]:
    router.register("questionnaires", QuestionnaireViewSet, basename="questionnaire")
    router.register(
        "questionnaire-versions", QuestionnaireVersionViewSet, basename="questionnaire-version"
    )
    return [
        path(
            "vendor-invitations/<int:pk>/questionnaires/",
            InvitationQuestionnairesView.as_view(),
            name="invitation-questionnaires",
        )
    ]
