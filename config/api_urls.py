"""Routes of the REST API, version 1.

Apps beyond the foundation register their own routes: each module in
``API_EXTENSIONS`` exposes ``register(router) -> list[URLPattern]``.
"""

from django.urls import path
from rest_framework.permissions import IsAuthenticated
from rest_framework.routers import APIRootView, DefaultRouter

from apps.cases.api import CaseViewSet
from apps.core.extensions import present_modules
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

API_EXTENSIONS = (
    "apps.contracts.api",
    "apps.assessments.api",
    "apps.access.api",
    "apps.evidence.api",
    "apps.packets.api",
    "apps.audit.api",
    "apps.approvals.api",
    "apps.costs.api",
    "apps.acceptance.api",
)
extra_paths = []
for _module in present_modules(API_EXTENSIONS):
    extra_paths += _module.register(router)

urlpatterns = [
    *extra_paths,
    path("sizing/", SizingCalculateView.as_view(), name="sizing-calculate"),
    path("sizing/presets/", SizingPresetsView.as_view(), name="sizing-presets"),
    path("cases/<int:case_pk>/compute-demand/", ComputeDemandView.as_view(), name="compute-demand"),
    path("cases/<int:case_pk>/comparison/", ComparisonView.as_view(), name="comparison"),
    *router.urls,
]
