"""Browser pages: scoring an offer, publishing criteria, comparing offers."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_get_for, offer_minimum_status
from apps.core.access import AuthenticatedHttpRequest, role_required
from apps.core.forms import apply_service_errors
from apps.core.services import SERVICE_ERRORS
from apps.core.spreadsheets import (
    UPLOAD_POLICY,
    SpreadsheetImportForm,
    run_import,
    xlsx_response,
)
from apps.core.uploads import refused_unread
from apps.offers.models import Offer
from apps.offers.selectors import offer_get_for
from apps.scorecards import services, spreadsheet
from apps.scorecards.charts import stacked_bars
from apps.scorecards.forms import CriteriaFormSet, CriteriaNoteForm, ScorecardForm
from apps.scorecards.models import Scorecard
from apps.scorecards.scoring import DEFAULT_CRITERIA
from apps.scorecards.selectors import (
    CaseComparison,
    case_comparison,
    default_criteria,
    preset_latest,
    presets_by_workload,
)


@role_required("scorecards.view_scorecard")
def comparison(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    result = case_comparison(case)
    names = {row.offer.pk: str(row.offer.vendor) for row in result.rows}
    return render(
        request,
        "scorecards/comparison.html",
        {
            "case": case,
            "comparison": result,
            "chart": stacked_bars(result.rows, result.criteria),
            "offer_names": names,
            "matrix": _criteria_matrix(result),
            "changed_scenarios": [
                (scenario, names.get(scenario.leader) if scenario.leader else None)
                for scenario in result.sensitivity.scenarios
                if scenario.leader_changed
            ],
            "offer_minimum": offer_minimum_status(
                offer_count=len(result.rows), waiver=case.offer_minimum_waiver
            ),
        },
    )


@role_required("scorecards.add_scorecard")
def scorecard_edit(request: AuthenticatedHttpRequest, offer_pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, offer_pk)
    return _scorecard_page(request, offer)


def _scorecard_page(
    request: AuthenticatedHttpRequest,
    offer: Offer,
    import_form: SpreadsheetImportForm | None = None,
    status: int = 200,
) -> HttpResponse:
    """The scorecard form; after a refused import, unbound, with the import's errors."""
    posted = request.POST if request.method == "POST" and import_form is None else None
    current = offer.case.criteria_sets.order_by("-revision").first()
    criteria = current.as_criteria() if current else default_criteria(offer.case)
    existing = None
    if current is not None:
        existing = (
            Scorecard.objects.filter(offer=offer, reviewer=request.user, criteria_set=current)
            .prefetch_related("entries")
            .first()
        )
    initial: dict[str, int | str | None] = {"version": existing.version if existing else None}
    if existing:
        for entry in existing.entries.all():
            initial[f"score_{entry.criterion_key}"] = (
                "" if entry.score is None else str(entry.score)
            )
            initial[f"comment_{entry.criterion_key}"] = entry.comment
    form = ScorecardForm(posted, criteria=criteria, editing=existing is not None, initial=initial)
    if posted is not None and form.is_valid():
        try:
            services.scorecard_save(
                actor=request.user,
                offer=offer,
                scores=form.scores(),
                reason=form.cleaned_data.get("change_reason", ""),
                expected_version=form.cleaned_data.get("version"),
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Scorecard saved."))
            return redirect("scorecards:comparison", pk=offer.case_id)
    return render(
        request,
        "scorecards/scorecard_form.html",
        {
            "form": form,
            "offer": offer,
            "case": offer.case,
            "criteria_set": current,
            "import_form": import_form or SpreadsheetImportForm(),
        },
        status=status,
    )


@role_required("scorecards.view_scorecard")
def scorecard_workbook_download(request: HttpRequest, offer_pk: int) -> HttpResponse:
    """A reviewer's scorecard as XLSX: one's own, or ``?reviewer=<id>``'s on this offer."""
    offer = offer_get_for(request.user, offer_pk)
    reviewer = request.user
    if request.GET.get("reviewer"):
        try:
            reviewer_pk = int(request.GET["reviewer"])
        except ValueError:
            raise Http404 from None
        if reviewer_pk != request.user.pk:
            card = Scorecard.objects.filter(offer=offer, reviewer_id=reviewer_pk).first()
            if card is None:
                raise Http404
            reviewer = card.reviewer
    content, filename = spreadsheet.scorecard_workbook(offer, reviewer)
    return xlsx_response(content, filename)


@refused_unread(UPLOAD_POLICY.check())  # before the CSRF check reads the body
@role_required("scorecards.add_scorecard")
def scorecard_import(request: AuthenticatedHttpRequest, offer_pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, offer_pk)
    if request.method != "POST":
        return redirect("scorecards:scorecard", offer_pk=offer.pk)
    form = SpreadsheetImportForm(request.POST, request.FILES)
    _result, status = run_import(
        form,
        lambda upload: spreadsheet.scorecard_import(actor=request.user, offer=offer, upload=upload),
    )
    if status is None:
        messages.success(request, _("Scorecard imported from the spreadsheet."))
        return redirect("scorecards:comparison", pk=offer.case_id)
    return _scorecard_page(request, offer, import_form=form, status=status)


@role_required("scorecards.add_criteriaset")
def criteria_edit(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    current = case.criteria_sets.order_by("-revision").first()
    criteria = current.as_criteria() if current else default_criteria(case)
    initial = [{"key": c.key, "label": c.label, "weight": c.weight} for c in criteria]
    formset = CriteriaFormSet(request.POST or None, initial=initial, prefix="criteria")
    note_form = CriteriaNoteForm(request.POST or None)
    if request.method == "POST" and formset.is_valid() and note_form.is_valid():
        rows = [
            f.cleaned_data
            for f in formset.forms
            if f.cleaned_data and not f.cleaned_data.get("DELETE")
        ]
        try:
            services.criteria_set_publish(
                actor=request.user, case=case, criteria=rows, note=note_form.cleaned_data["note"]
            )
        except ValidationError as error:
            apply_service_errors(note_form, error)
        else:
            messages.success(request, _("New criteria revision published."))
            return redirect("scorecards:comparison", pk=case.pk)
    return render(
        request,
        "scorecards/criteria_form.html",
        {"case": case, "formset": formset, "note_form": note_form, "current": current},
    )


def _criteria_matrix(result: CaseComparison) -> list[tuple]:
    """Rows of (criterion, [cell per offer]) for the side-by-side table."""
    matrix = []
    for criterion in result.criteria:
        cells = []
        for row in result.rows:
            mean = row.score.criterion_means.get(criterion.key)
            points = None if mean is None else criterion.weight * mean / 5
            cells.append(
                {
                    "mean": mean,
                    "points": points,
                    "unanswered": row.score.criterion_unanswered.get(criterion.key, 0),
                }
            )
        matrix.append((criterion, cells))
    return matrix


@role_required("scorecards.add_criteriapreset")
def presets(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Each workload kind's criteria preset: the newest version, and every earlier one."""
    return render(
        request,
        "scorecards/presets.html",
        {"kinds": presets_by_workload(), "defaults": DEFAULT_CRITERIA},
    )


@role_required("scorecards.add_criteriapreset")
def preset_publish(request: AuthenticatedHttpRequest, workload: str) -> HttpResponse:
    """Publish the next version of one workload kind's preset, starting from the newest."""
    labels = dict(ProcurementCase.Workload.choices)
    if workload not in labels:
        raise Http404
    latest = preset_latest(workload)
    criteria = latest.as_criteria() if latest else DEFAULT_CRITERIA
    initial = [{"key": c.key, "label": c.label, "weight": c.weight} for c in criteria]
    formset = CriteriaFormSet(request.POST or None, initial=initial, prefix="criteria")
    note_form = CriteriaNoteForm(request.POST or None)
    note_form.fields["note"].label = _("Why publish a new version?")
    note_form.fields["note"].help_text = _(
        "Cases that already have criteria keep theirs; new cases of this kind start from it."
    )
    if request.method == "POST" and formset.is_valid() and note_form.is_valid():
        rows = [
            f.cleaned_data
            for f in formset.forms
            if f.cleaned_data and not f.cleaned_data.get("DELETE")
        ]
        try:
            preset = services.criteria_preset_publish(
                actor=request.user,
                workload=workload,
                criteria=rows,
                note=note_form.cleaned_data["note"],
            )
        except ValidationError as error:
            apply_service_errors(note_form, error)
        else:
            messages.success(
                request,
                _("Version %(n)s of the %(kind)s preset is published.")
                % {"n": preset.number, "kind": labels[workload]},
            )
            return redirect("scorecards:presets")
    return render(
        request,
        "scorecards/preset_form.html",
        {
            "workload_label": labels[workload],
            "latest": latest,
            "formset": formset,
            "note_form": note_form,
        },
        status=400 if request.method == "POST" else 200,
    )
