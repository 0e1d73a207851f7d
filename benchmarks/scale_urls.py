"""The product's URLs plus the two baselines the scale benchmark measures beside them.

Loaded only by ``benchmarks/scale_settings.py``; production never mounts these.
- ``bench/trivial/``: a signed-in page that renders nothing, through the same
  middleware (sessions, CSRF, CSP, axes, locale) as every real page.
- ``bench/edit-case/<pk>/`` (POST): a tracked write to the case through its service,
  as a reviewer's edit makes (the write computes the case's stored standings again
  once it commits, before it answers).
- ``bench/case-uncached/<pk>/``: the case page, as the load generator asks for it
  right after each such edit: what a reviewer sees after every edit.
- ``bench/case-computed/<pk>/``: the case page with the stored standing turned off:
  every area's rules computed on the request (for comparison only).
- ``bench/store-only/``: takes a harness-token upload and only stores its bytes
  under their SHA-256, with the same authentication and size bound as
  ``POST /api/v1/evidence/``: what an upload costs before any reading of it.
"""

import hashlib
import uuid

from django.contrib.auth.decorators import login_required
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.http import HttpResponse, HttpResponseNotAllowed
from django.test.utils import override_settings
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.cases.models import ProcurementCase
from apps.cases.services import case_update
from apps.casework.views import case_detail
from apps.evidence.api import HarnessTokenOnly, max_bytes
from apps.evidence.authentication import HarnessTokenAuthentication
from config.urls import urlpatterns as product_urlpatterns


@login_required
def trivial(request):
    return HttpResponse("ok", content_type="text/plain")


@csrf_exempt
@login_required
def edit_case(request, pk: int):
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    case = ProcurementCase.objects.get(pk=pk)
    case_update(
        actor=request.user,
        case=case,
        fields={"requirements": f"Benchmark edit {uuid.uuid4().hex}"},
        reason="Benchmark edit",
    )
    return HttpResponse("ok", content_type="text/plain")


def case_uncached(request, pk: int):
    # Asked for right after ``edit_case``: no whole-page cache stands in front of it.
    return case_detail(request, pk)


def case_computed(request, pk: int):
    # gunicorn's sync workers serve one request at a time: the override is this request's.
    with override_settings(CASE_STANDING_STORED=False):
        return case_detail(request, pk)


class StoreOnlyView(APIView):
    authentication_classes = [HarnessTokenAuthentication]
    permission_classes = [HarnessTokenOnly]

    def post(self, request):
        raw = request._request.read(max_bytes() + 1)
        if not raw or len(raw) > max_bytes():
            return Response({"detail": "empty or too large"}, status=status.HTTP_400_BAD_REQUEST)
        sha = hashlib.sha256(raw).hexdigest()
        name = default_storage.save(f"bench-store-only/{sha[:2]}/{sha}.json", ContentFile(raw))
        return Response({"sha256": sha, "stored_as": name}, status=status.HTTP_201_CREATED)


urlpatterns = [
    path("bench/trivial/", trivial, name="bench-trivial"),
    path("bench/edit-case/<int:pk>/", edit_case, name="bench-edit-case"),
    path("bench/case-uncached/<int:pk>/", case_uncached, name="bench-case-uncached"),
    path("bench/case-computed/<int:pk>/", case_computed, name="bench-case-computed"),
    path("bench/store-only/", StoreOnlyView.as_view(), name="bench-store-only"),
    *product_urlpatterns,
]
