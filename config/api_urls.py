"""Routes of the REST API, version 1."""

from django.urls import path
from rest_framework.permissions import IsAuthenticated
from rest_framework.routers import APIRootView, DefaultRouter

from apps.cases.api import CaseViewSet
from apps.offers.api import DeclaredSpecViewSet, OfferViewSet
from apps.scorecards.api import ComparisonView, CriteriaSetViewSet, ScorecardViewSet
from apps.sizing.api import ComputeDemandView, SizingCalculateView, SizingPresetsView
from apps.vendors.api import VendorViewSet


class DiligenceAPIRoot(APIRootView):
    """Index of the API for any signed-in user."""

    permission_classes = [IsAuthenticated]


router = DefaultRouter()
router.APIRootView = DiligenceAPIRoot
router.register("cases", CaseViewSet, basename="case")
router.register("vendors", VendorViewSet, basename="vendor")
router.register("offers", OfferViewSet, basename="offer")
router.register("declared-specs", DeclaredSpecViewSet, basename="declared-spec")
router.register("criteria-sets", CriteriaSetViewSet, basename="criteria-set")
router.register("scorecards", ScorecardViewSet, basename="scorecard")

urlpatterns = [
    path("sizing/", SizingCalculateView.as_view(), name="sizing-calculate"),
    path("sizing/presets/", SizingPresetsView.as_view(), name="sizing-presets"),
    path("cases/<int:case_pk>/compute-demand/", ComputeDemandView.as_view(), name="compute-demand"),
    path("cases/<int:case_pk>/comparison/", ComparisonView.as_view(), name="comparison"),
    *router.urls,
]
