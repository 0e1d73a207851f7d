"""Browser pages for data-export self-assessments, and the facts auditors ask for."""

import json
import posixpath
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.db.models import QuerySet
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy

from apps.assessments import services, spreadsheet
from apps.assessments.forms import (
    AssessmentForm,
    AuditFactsForm,
    DatasetForm,
    RemoveForm,
    SignOffForm,
    WeightFileForm,
    audit_facts_initial,
    initial_for,
    sign_off_initial,
)
from apps.assessments.models import (
    MAX_ATTACHMENT_BYTES,
    DataExportAssessment,
    ExportedDataset,
    ModelWeightFile,
)
from apps.assessments.questions import QUESTIONS_BY_KEY
from apps.assessments.report import build_report, labelled_facts, report_markdown
from apps.assessments.rules import default_review_by
from apps.assessments.selectors import (
    assessment_get_for,
    assessment_summary,
    dataset_list_for,
    log_retention_min_days,
    weight_file_list_for,
)
from apps.cases.selectors import case_get_for
from apps.core.access import role_required
from apps.core.downloads import StoredFile, stored_file_response
from apps.core.forms import apply_service_errors
from apps.core.services import SERVICE_ERRORS
from apps.core.spreadsheets import (
    UPLOAD_POLICY,
    SpreadsheetImportForm,
    run_import,
    xlsx_response,
)
from apps.core.uploads import UploadPolicy, refused_unread
from apps.offers.models import Offer

# Every question may carry one attachment; the form's body is bounded by all of them.
FORM_UPLOAD_POLICY = UploadPolicy(
    lambda: MAX_ATTACHMENT_BYTES * len(QUESTIONS_BY_KEY), length_required=True
)


def _form_upload_refusal(request: HttpRequest) -> HttpResponse | None:
    return FORM_UPLOAD_POLICY.refuse(request)


@refused_unread(_form_upload_refusal)  # before the CSRF check reads the body
@role_required("assessments.add_dataexportassessment")
def assessment_create(request: HttpRequest, case_pk: int) -> HttpResponse:
    case = case_get_for(request.user, case_pk)
    offer = None
    if request.GET.get("offer"):
        offer = get_object_or_404(
            Offer.objects.select_related("vendor"), pk=request.GET["offer"], case=case
        )
    # One assessment per case (and per offer): a link to start one where it exists
    # already opens the one there is.
    existing = DataExportAssessment.objects.filter(case=case, offer=offer).first()
    if existing is not None:
        messages.info(request, _("This already has a data-export assessment: here it is."))
        return redirect("assessments:detail", pk=existing.pk)
    initial = {"jurisdiction": offer.vendor.jurisdiction if offer else ""}
    form = AssessmentForm(
        request.POST or None, request.FILES or None, editing=False, initial=initial
    )
    if request.method == "POST" and form.is_valid():
        try:
            assessment = services.assessment_create(
                actor=request.user,
                case=case,
                offer=offer,
                jurisdiction=form.cleaned_data["jurisdiction"],
                conclusion=form.cleaned_data["conclusion"],
                answers=form.answers(),
                attachments=form.attachments(),
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Data-export assessment saved."))
            return redirect("assessments:detail", pk=assessment.pk)
    return render(
        request,
        "assessments/assessment_form.html",
        {"form": form, "case": case, "offer": offer, "title": _("New data-export assessment")},
    )


@role_required("assessments.view_dataexportassessment")
def assessment_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _detail_page(request, assessment_get_for(request.user, pk))


def _detail_page(
    request: HttpRequest,
    assessment: DataExportAssessment,
    *,
    refused: tuple[str, DatasetForm | WeightFileForm] | None = None,
) -> HttpResponse:
    """The assessment; with the small forms that list a dataset or a weight file, one of
    them bound and refused (400) where ``refused`` names it."""
    context: dict = {
        "assessment": assessment,
        "case": assessment.case,
        "summary": assessment_summary(assessment),
    }
    for name, kind in LISTS.items():
        if request.user.has_perm(kind.permission("add")):
            context[f"{name}_form"] = kind.form(prefix=name)
    if refused is not None:
        context[f"{refused[0]}_form"] = refused[1]
    return render(
        request,
        "assessments/assessment_detail.html",
        context,
        status=400 if refused is not None else 200,
    )


# --- The facts auditors ask for (docs/rules/data-export.md#audit-facts) ----------------


class _Kind:
    """A list of an assessment's audit facts as its pages handle it."""

    def __init__(
        self,
        model: type[ExportedDataset | ModelWeightFile],
        form: type[DatasetForm | WeightFileForm],
        rows: Callable[[Any], QuerySet],
        add: Callable[..., Any],
        update: Callable[..., Any],
        remove: Callable[..., Any],
        argument: str,
        title: Any,
        saved: Any,
    ) -> None:
        self.model, self.form, self.rows = model, form, rows
        self.add, self.update, self.remove = add, update, remove
        self.argument, self.title, self.saved = argument, title, saved

    def permission(self, action: str) -> str:
        return f"assessments.{action}_{self.model._meta.model_name}"

    def get(self, request: HttpRequest, pk: int) -> Any:
        return get_object_or_404(self.rows(request.user), pk=pk)


LISTS = {
    "dataset": _Kind(
        ExportedDataset,
        DatasetForm,
        dataset_list_for,
        services.dataset_add,
        services.dataset_update,
        services.dataset_remove,
        "dataset",
        _lazy("Dataset leaving for the rented compute"),
        _lazy("Data inventory saved."),
    ),
    "weight": _Kind(
        ModelWeightFile,
        WeightFileForm,
        weight_file_list_for,
        services.weight_file_add,
        services.weight_file_update,
        services.weight_file_remove,
        "weight_file",
        _lazy("Model-weight file"),
        _lazy("Model-weight files saved."),
    ),
}


def _back(assessment_pk: int) -> HttpResponse:
    return redirect(reverse("assessments:detail", args=[assessment_pk]) + "#audit-facts")


def _listed_add(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    kind = LISTS[name]
    assessment = assessment_get_for(request.user, pk)
    if request.method != "POST":
        return _back(assessment.pk)
    form = kind.form(request.POST, prefix=name)
    if form.is_valid():
        try:
            kind.add(actor=request.user, assessment=assessment, fields=form.values())
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, kind.saved)
            return _back(assessment.pk)
    return _detail_page(request, assessment, refused=(name, form))


def _listed_edit(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    kind = LISTS[name]
    row = kind.get(request, pk)
    assessment = assessment_get_for(request.user, row.assessment_id)
    posted = request.method == "POST"
    form = kind.form(
        request.POST if posted else None,
        instance=row,
        editing=True,
        initial={"version": row.version},
    )
    if posted and form.is_valid():
        try:
            kind.update(
                actor=request.user,
                fields=form.values(),
                reason=form.cleaned_data["change_reason"],
                expected_version=form.cleaned_data["version"],
                **{kind.argument: row},
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, kind.saved)
            return _back(assessment.pk)
    can_remove = request.user.has_perm(kind.permission("delete"))
    return render(
        request,
        "assessments/listed_form.html",
        {
            "form": form,
            "remove_form": RemoveForm(initial={"version": row.version}) if can_remove else None,
            "row": row,
            "name": name,
            "title": kind.title,
            "assessment": assessment,
            "case": assessment.case,
        },
        status=400 if posted else 200,
    )


def _listed_remove(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    kind = LISTS[name]
    row = kind.get(request, pk)
    assessment = assessment_get_for(request.user, row.assessment_id)
    if request.method != "POST":
        return redirect(f"assessments:{name}_edit", pk=row.pk)
    form = RemoveForm(request.POST)
    if form.is_valid():
        try:
            kind.remove(
                actor=request.user,
                reason=form.cleaned_data["change_reason"],
                expected_version=form.cleaned_data["version"],
                **{kind.argument: row},
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Removed: %(row)s.") % {"row": row})
            return _back(assessment.pk)
    edit_form = kind.form(instance=row, editing=True, initial={"version": row.version})
    return render(
        request,
        "assessments/listed_form.html",
        {
            "form": edit_form if request.user.has_perm(kind.permission("change")) else None,
            "remove_form": form,
            "row": row,
            "name": name,
            "title": kind.title,
            "assessment": assessment,
            "case": assessment.case,
        },
        status=400,
    )


@role_required("assessments.add_exporteddataset")
def dataset_add(request: HttpRequest, pk: int) -> HttpResponse:
    return _listed_add(request, pk, "dataset")


@role_required("assessments.change_exporteddataset")
def dataset_edit(request: HttpRequest, pk: int) -> HttpResponse:
    return _listed_edit(request, pk, "dataset")


@role_required("assessments.delete_exporteddataset")
def dataset_remove(request: HttpRequest, pk: int) -> HttpResponse:
    return _listed_remove(request, pk, "dataset")


@role_required("assessments.add_modelweightfile")
def weight_file_add(request: HttpRequest, pk: int) -> HttpResponse:
    return _listed_add(request, pk, "weight")


@role_required("assessments.change_modelweightfile")
def weight_file_edit(request: HttpRequest, pk: int) -> HttpResponse:
    return _listed_edit(request, pk, "weight")


@role_required("assessments.delete_modelweightfile")
def weight_file_remove(request: HttpRequest, pk: int) -> HttpResponse:
    return _listed_remove(request, pk, "weight")


@role_required("assessments.change_dataexportassessment")
def audit_facts_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Encryption at rest and in transit, and log retention; the sign-off stays."""
    assessment = assessment_get_for(request.user, pk)
    posted = request.method == "POST"
    form = AuditFactsForm(
        request.POST if posted else None,
        initial=audit_facts_initial(assessment),
        minimum_days=log_retention_min_days(),
    )
    if posted and form.is_valid():
        try:
            services.audit_facts_save(
                actor=request.user,
                assessment=assessment,
                fields=form.facts(),
                reason=form.cleaned_data["change_reason"],
                expected_version=form.cleaned_data["version"],
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Encryption and log retention saved."))
            return _back(assessment.pk)
    return render(
        request,
        "assessments/audit_facts_form.html",
        {"form": form, "assessment": assessment, "case": assessment.case},
        status=400 if posted else 200,
    )


@refused_unread(_form_upload_refusal)  # before the CSRF check reads the body
@role_required("assessments.change_dataexportassessment")
def assessment_edit(request: HttpRequest, pk: int) -> HttpResponse:
    return _edit_page(request, assessment_get_for(request.user, pk))


def _edit_page(
    request: HttpRequest,
    assessment: DataExportAssessment,
    import_form: SpreadsheetImportForm | None = None,
    status: int = 200,
) -> HttpResponse:
    """The questionnaire form; after a refused import, unbound, with the import's errors."""
    posted = request.method == "POST" and import_form is None
    signed_off = assessment.signed_off_at is not None
    form = AssessmentForm(
        request.POST if posted else None,
        request.FILES if posted else None,
        editing=True,
        signed_off=signed_off,
        initial=initial_for(assessment),
    )
    if posted and form.is_valid():
        try:
            _updated, voided = services.assessment_save(
                actor=request.user,
                assessment=assessment,
                reason=form.cleaned_data["change_reason"],
                answers=form.answers(),
                attachments=form.attachments(),
                conclusion=form.cleaned_data["conclusion"],
                jurisdiction=form.cleaned_data["jurisdiction"],
                expected_version=form.cleaned_data["version"],
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            if voided:
                messages.warning(
                    request,
                    _(
                        "Saved. The sign-off was voided by this edit: "
                        "a legal reviewer must sign off again."
                    ),
                )
            else:
                messages.success(request, _("Data-export assessment saved."))
            return redirect("assessments:detail", pk=assessment.pk)
    return render(
        request,
        "assessments/assessment_form.html",
        {
            "form": form,
            "case": assessment.case,
            "offer": assessment.offer,
            "assessment": assessment,
            "title": _("Edit data-export assessment"),
            "import_form": import_form or SpreadsheetImportForm(),
        },
        status=status,
    )


@role_required("assessments.view_dataexportassessment")
def questionnaire_workbook_download(request: HttpRequest, pk: int) -> HttpResponse:
    assessment = assessment_get_for(request.user, pk)
    content, filename = spreadsheet.questionnaire_workbook(assessment)
    return xlsx_response(content, filename)


@refused_unread(UPLOAD_POLICY.check())  # before the CSRF check reads the body
@role_required("assessments.change_dataexportassessment")
def questionnaire_import(request: HttpRequest, pk: int) -> HttpResponse:
    assessment = assessment_get_for(request.user, pk)
    if request.method != "POST":
        return redirect("assessments:edit", pk=assessment.pk)
    form = SpreadsheetImportForm(request.POST, request.FILES)
    result, status = run_import(
        form,
        lambda upload: spreadsheet.questionnaire_import(
            actor=request.user, assessment=assessment, upload=upload
        ),
    )
    if status is None:
        _updated, voided = result
        if voided:
            messages.warning(
                request,
                _(
                    "Imported. The sign-off was voided by this edit: "
                    "a legal reviewer must sign off again."
                ),
            )
        else:
            messages.success(request, _("Questionnaire imported from the spreadsheet."))
        return redirect("assessments:detail", pk=assessment.pk)
    return _edit_page(request, assessment, import_form=form, status=status)


@role_required("assessments.sign_off_dataexportassessment")
def assessment_sign_off(request: HttpRequest, pk: int) -> HttpResponse:
    assessment = assessment_get_for(request.user, pk)
    summary = assessment_summary(assessment)
    initial = {
        "version": assessment.version,
        "review_by": default_review_by(timezone.localdate()),
        **sign_off_initial(assessment, summary.mechanism),
    }
    form = SignOffForm(
        request.POST or None, initial=initial, mechanism_named=summary.mechanism.named
    )
    if request.method == "POST" and form.is_valid():
        try:
            services.assessment_sign_off(
                actor=request.user,
                assessment=assessment,
                review_by=form.cleaned_data["review_by"],
                expected_version=form.cleaned_data["version"],
                **form.mechanism(),
            )
        except SERVICE_ERRORS as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Signed off."))
            return redirect("assessments:detail", pk=assessment.pk)
    return render(
        request,
        "assessments/sign_off_form.html",
        {"form": form, "assessment": assessment, "case": assessment.case, "summary": summary},
    )


@role_required("assessments.view_dataexportassessment")
def assessment_report(request: HttpRequest, pk: int, fmt: str = "html") -> HttpResponse:
    assessment = assessment_get_for(request.user, pk)
    report = build_report(assessment_summary(assessment))
    filename = f"data-export-self-assessment-{assessment.pk}"
    if fmt == "json":
        response = HttpResponse(
            json.dumps(report, ensure_ascii=False, indent=2),
            content_type="application/json; charset=utf-8",
        )
    elif fmt == "md":
        response = HttpResponse(
            report_markdown(report), content_type="text/markdown; charset=utf-8"
        )
    else:
        return render(
            request,
            "assessments/assessment_report.html",
            {
                "assessment": assessment,
                "case": assessment.case,
                "report": report,
                "facts": labelled_facts(report["sections"][0].get("facts", {})),
            },
        )
    response["Content-Disposition"] = f'attachment; filename="{filename}.{fmt}"'
    return response


@role_required("assessments.view_dataexportassessment")
def attachment_download(request: HttpRequest, pk: int, key: str) -> HttpResponse | FileResponse:
    assessment = assessment_get_for(request.user, pk)
    answer = assessment.answer_map().get(key)
    if answer is None or not answer.attachment:
        raise Http404
    stored = StoredFile(
        case_id=assessment.case_id,
        record=f"Data-export assessment {assessment.pk}, attachment to {key}",
        name=answer.attachment.name,
        sha256=answer.attachment_sha256,
        filename=posixpath.basename(answer.attachment.name),
        storage=answer.attachment.storage,
    )
    return stored_file_response(request, stored)
