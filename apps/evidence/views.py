"""Browser pages: a case's evidence and comparison, one bundle, raw download, harness tokens."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_get_for
from apps.core.access import role_required
from apps.core.downloads import stored_file_response
from apps.core.forms import apply_service_errors
from apps.core.lists import filtered_page
from apps.core.services import SERVICE_ERRORS
from apps.evidence import baselines, harness_command, inventory, services, zipapp
from apps.evidence.acceptance import correctness_verified
from apps.evidence.charts import load_charts
from apps.evidence.filters import BundleListFilter, TokenListFilter, UploadListFilter
from apps.evidence.forms import BaselinePinForm, BaselineUnpinForm, HarnessTokenForm, RevokeForm
from apps.evidence.models import EvidenceBundle, HarnessToken
from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, WARN
from apps.evidence.selectors import (
    UNFINISHED_PER_PAGE,
    blocking_reasons,
    bundle_get_for,
    bundle_stored_file,
    case_bundle_rows,
    case_bundles,
    case_tokens,
    case_uploads_not_stored,
    case_verifications,
    checks_with_sources,
    offers_evidence,
    verification_sources,
)
from apps.evidence.services import IssuedToken
from apps.offers.selectors import offers_of_case
from apps.workloads.selectors import bundle_sets

GROUPS: tuple[str, ...] = ("identity", "versions", "performance", "service", "network", "security")
GROUPS += ("interconnect", "disk")  # inside the node, the local disk
GROUPS += ("training",)  # the reference training step


@role_required("evidence.view_evidencebundle")
def case_evidence(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    bundles = case_bundles(case)
    offers = offers_of_case(case)
    uploads = UploadListFilter(request.GET or None, queryset=case_uploads_not_stored(case))
    page = filtered_page(
        request,
        uploads,
        default=("-received_at",),
        tiebreak="-pk",
        per_page=UNFINISHED_PER_PAGE,
    )
    return render(
        request,
        "evidence/case_evidence.html",
        {
            "case": case,
            "bundles": bundles,
            "baselines": baselines.case_baselines(case),
            "rows": offers_evidence(offers, bundles, case_verifications(case)),
            "filters": uploads,
            "page": page,
            # The section stays, with its filters, when they match none of the uploads.
            "uploads_filtered": any(request.GET.get(name) for name in ("q", "state")),
        },
    )


@role_required("evidence.view_evidencebundle")
def case_bundle_list(request: HttpRequest, pk: int) -> HttpResponse:
    """Every bundle of the case, filtered and sorted as the URL says, newest first by default."""
    case = case_get_for(request.user, pk)
    filters = BundleListFilter(request.GET or None, queryset=case_bundle_rows(case), case=case)
    page = filtered_page(request, filters, default=("-received_at",), tiebreak="-pk")
    return render(
        request, "evidence/bundle_list.html", {"case": case, "filters": filters, "page": page}
    )


@role_required("evidence.view_evidencebundle")
def bundle_detail(request: HttpRequest, pk: int) -> HttpResponse:
    bundle = bundle_get_for(request.user, pk)
    verification = getattr(bundle, "verification", None)
    checks = checks_with_sources(verification)
    for check in checks:  # a check recorded without its group: the one its key names
        check.setdefault("group", str(check.get("key", "")).split(".", 1)[0])
    groups = [(g, [c for c in checks if c["group"] == g]) for g in GROUPS]
    groups += [(g, [c for c in checks if c["group"] == g]) for g in _other_groups(checks)]
    counts = {s: sum(1 for c in checks if c["status"] == s) for s in (PASS, WARN, FAIL)}
    counts[NOT_MEASURED] = sum(1 for c in checks if c["status"] == NOT_MEASURED)
    return render(
        request,
        "evidence/bundle_detail.html",
        {
            "bundle": bundle,
            "case": bundle.case,
            "verification": verification,
            "groups": [(g, rows) for g, rows in groups if rows],
            "counts": counts,
            "charts": load_charts(bundle.summary.get("cells") or []),
            "summary": bundle.summary,
            "correctness_verified": correctness_verified(bundle),
            "inventory_rows": inventory.page_rows(checks),
            "sources": verification_sources(verification),
            "blocked": blocking_reasons(verification),
            "against": baselines.comparison_for_bundle(bundle),
            "workload_sets": bundle_sets(bundle),
            "versions": software_rows(bundle.summary.get("software")),
        },
    )


# The versions the environment step reads, as the evidence page lists them.
VERSION_ROWS = (
    ("python", "Python"),
    ("torch", "PyTorch"),
    ("vllm", "vLLM"),
    ("sglang", "SGLang"),
    ("nccl", "NCCL"),
    ("cuda_runtime", gettext_lazy("CUDA runtime")),
    ("cudnn", "cuDNN"),
)


def software_rows(software: object) -> list[tuple[str, str, bool]]:
    """(name, the version or "", whether it is the image digest) for the page; empty where
    the bundle read no software."""
    if not isinstance(software, dict):
        return []
    rows = [(str(label), str(software.get(key) or ""), False) for key, label in VERSION_ROWS]
    rows.append((str(_("Container image")), str(software.get("image_digest") or ""), True))
    return rows


def _pin_offers(bundle: EvidenceBundle) -> list:
    """The offers a run may be the baseline of: its own, or any of the case's for a run
    not tied to one (the team's own hardware)."""
    if bundle.offer_id is not None:
        return [bundle.offer]
    return list(offers_of_case(bundle.case))


@role_required("evidence.add_baseline")
def baseline_pin(request: HttpRequest, pk: int) -> HttpResponse:
    bundle = bundle_get_for(request.user, pk)
    offers = _pin_offers(bundle)
    initial = {"offer": bundle.offer_id} if bundle.offer_id else {}
    form = BaselinePinForm(request.POST or None, offers=offers, initial=initial)
    if request.method == "POST" and form.is_valid():
        chosen = form.cleaned_data["offer"]
        offer = next((o for o in offers if o.pk == chosen), None)
        try:
            baselines.baseline_pin(
                actor=request.user, bundle=bundle, offer=offer, reason=form.cleaned_data["reason"]
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Baseline pinned."))
            return redirect("evidence:detail", pk=bundle.pk)
    return render(
        request,
        "evidence/baseline_pin.html",
        {"bundle": bundle, "case": bundle.case, "form": form},
    )


@role_required("evidence.change_baseline")
def baseline_unpin(request: HttpRequest, pk: int) -> HttpResponse:
    baseline = baselines.baseline_get_for(request.user, pk)
    case_get_for(request.user, baseline.case_id, offer_count=False)
    form = BaselineUnpinForm(request.POST or None, initial={"version": baseline.version})
    if request.method == "POST" and form.is_valid():
        try:
            baselines.baseline_unpin(
                actor=request.user,
                baseline=baseline,
                reason=form.cleaned_data["reason"],
                expected_version=form.cleaned_data["version"],
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Baseline unpinned."))
            return redirect("evidence:case", pk=baseline.case_id)
    return render(
        request,
        "evidence/baseline_unpin.html",
        {"baseline": baseline, "case": baseline.case, "form": form},
    )


def _other_groups(checks: list[dict]) -> list[str]:
    """Groups of checks this page does not list by name, so none is left out."""
    return sorted({c["group"] for c in checks} - set(GROUPS))


@role_required("evidence.view_evidencebundle")
def bundle_raw(request: HttpRequest, pk: int) -> HttpResponse | FileResponse:
    return stored_file_response(request, bundle_stored_file(bundle_get_for(request.user, pk)))


@role_required("evidence.view_evidencebundle")
def harness_zipapp(request: HttpRequest) -> HttpResponse:
    data, digest = zipapp.build()
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="diligence-harness.pyz"'
    response["X-Content-SHA256"] = digest
    return response


def harness_commands(
    request: HttpRequest, *, case: ProcurementCase, issued: IssuedToken, form: HarnessTokenForm
) -> dict:
    """The whole run with the case's settings, and the reference recording before it."""
    data = form.cleaned_data
    settings = harness_command.run_settings(
        case=case,
        offer=issued.record.offer,
        upload_url=request.build_absolute_uri(reverse("evidence-upload")),
        token=issued.token,
        nonce=issued.record.nonce,
        endpoint=data.get("endpoint") or "",
        model=(data.get("model") or "").strip(),
    )
    return {
        "command": harness_command.run_command(settings),
        "reference_command": harness_command.reference_command(settings),
        "gateway_command": harness_command.gateway_command(settings),
        "serve_command": harness_command.serve_command(settings),
        "peer_command": harness_command.peer_command(settings),
        "run_settings": settings,
    }


@role_required("evidence.view_harnesstoken")
def harness_tokens(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    offers = case.offers.select_related("vendor")
    form = HarnessTokenForm(request.POST or None, offers=offers)
    issued, commands = None, {}
    if request.method == "POST":
        if not request.user.has_perm("evidence.add_harnesstoken"):
            raise PermissionDenied
        if form.is_valid():
            try:
                issued = services.harness_token_create(
                    actor=request.user,
                    case=case,
                    offer=form.cleaned_data["offer"],
                    ttl_hours=form.cleaned_data["ttl_hours"],
                    label=form.cleaned_data["label"],
                )
            except ValidationError as error:
                apply_service_errors(form, error)
            else:
                commands = harness_commands(request, case=case, issued=issued, form=form)
                form = HarnessTokenForm(offers=offers)
    filters = TokenListFilter(request.GET or None, queryset=case_tokens(case), case=case)
    context = {
        "case": case,
        "form": form,
        "filters": filters,
        "page": filtered_page(request, filters, default=("-created_at",), tiebreak="-pk"),
        "issued": issued,
        "revoke_form": RevokeForm(),
        "zipapp_url": request.build_absolute_uri(reverse("evidence:zipapp")),
    }
    context.update(commands)
    response = render(request, "evidence/harness_tokens.html", context)
    if issued:
        response["Cache-Control"] = "no-store"  # the token is shown once; never cache it
    return response


@require_POST
@role_required("evidence.change_harnesstoken")
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(HarnessToken.objects.select_related("case"), pk=pk)
    case = case_get_for(request.user, token.case_id)
    form = RevokeForm(request.POST)
    if form.is_valid():
        try:
            services.harness_token_revoke(
                actor=request.user, token=token, reason=form.cleaned_data["change_reason"]
            )
        except ValidationError as error:
            messages.error(request, "; ".join(error.messages))
        else:
            messages.success(request, _("Token %(prefix)s… revoked.") % {"prefix": token.prefix})
    else:
        messages.error(request, _("Say why the token is revoked."))
    return redirect("evidence:tokens", pk=case.pk)
