"""The vendors' reassessments: those due, open, lapsed and completed; procurement starts one
early by hand (docs/rules/reassessment.md)."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from apps.cases.selectors import case_ids_for
from apps.casework import reassessments
from apps.casework.models import ReassessmentState
from apps.core.access import role_required
from apps.core.services import StateConflict
from apps.vendors import reassessment as rules
from apps.vendors.models import Vendor, VendorTier

# The completed ones shown: the newest; the API lists them all.
COMPLETED_SHOWN = 50


@role_required("casework.view_reassessment")
@require_safe
def reassessment_list(request: HttpRequest) -> HttpResponse:
    return _page(request)


def _page(request: HttpRequest, *, status: int = 200) -> HttpResponse:
    today = timezone.localdate()
    visible = set(case_ids_for(request.user).values_list("pk", flat=True))
    records = reassessments.reassessment_list_for(request.user)
    open_ones = [
        {
            "r": r,
            "state": reassessments.state_of(r, today),
            "lapses_on": rules.lapses_on(timezone.localdate(r.started_at)),
        }
        for r in records.filter(completed_at__isnull=True)
    ]
    completed = records.filter(completed_at__isnull=False).order_by("-completed_at", "-pk")
    context = {
        "today": today,
        "due": [
            {"d": d, "tier": VendorTier(d.vendor.tier).label}
            for d in reassessments.schedule()
            if d.offer.case_id in visible
        ],
        "open": open_ones,
        "completed": [{"r": r} for r in completed[:COMPLETED_SHOWN]],
        "grace_days": rules.GRACE_DAYS,
        "lapsed": ReassessmentState.LAPSED,
    }
    return render(request, "casework/reassessments.html", context, status=status)


@require_POST
@role_required("casework.start_reassessment")
def reassessment_start(request: HttpRequest, pk: int) -> HttpResponse:
    vendor = get_object_or_404(Vendor, pk=pk)
    try:
        reassessments.reassessment_start_early(actor=request.user, vendor=vendor)
    except StateConflict as error:
        messages.error(request, " ".join(error.messages))
        return _page(request, status=409)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return _page(request, status=400)
    messages.success(request, _("The reassessment of %(vendor)s started.") % {"vendor": vendor})
    return redirect("cases:reassessments")
