"""Routes of the REST API, version 1.

Every app mounts its routes the same way: its ``api`` module, listed here,
has ``register(router) -> list[URLPattern]``, which registers its viewsets on
the router and returns its other paths.
"""

from rest_framework.permissions import IsAuthenticated
from rest_framework.routers import APIRootView, DefaultRouter

from apps.acceptance import api as acceptance_api
from apps.access import api as access_api
from apps.approvals import api as approvals_api
from apps.assessments import api as assessments_api
from apps.audit import api as audit_api
from apps.cases import api as cases_api
from apps.casework import api as casework_api
from apps.contracts import api as contracts_api
from apps.costs import api as costs_api
from apps.evidence import api as evidence_api
from apps.offers import api as offers_api
from apps.packets import api as packets_api
from apps.portal import api as portal_api
from apps.scorecards import api as scorecards_api
from apps.sizing import api as sizing_api
from apps.vendors import api as vendors_api
from apps.workloads import api as workloads_api


class DiligenceAPIRoot(APIRootView):
    """Index of the API for any signed-in user."""

    permission_classes = [IsAuthenticated]


APP_APIS = (
    cases_api,
    vendors_api,
    offers_api,
    scorecards_api,
    sizing_api,
    contracts_api,
    assessments_api,
    access_api,
    evidence_api,
    packets_api,
    audit_api,
    approvals_api,
    costs_api,
    acceptance_api,
    workloads_api,
    portal_api,
    casework_api,
)

router = DefaultRouter()
router.APIRootView = DiligenceAPIRoot
app_paths = []
for app_api in APP_APIS:
    app_paths += app_api.register(router)

urlpatterns = [*app_paths, *router.urls]
