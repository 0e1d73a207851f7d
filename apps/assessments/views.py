"""Browser pages for data-export self-assessments."""

import json
import posixpath

from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.assessments import services, spreadsheet
from apps.assessments.forms import AssessmentForm, SignOffForm, initial_for, sign_off_initial
from apps.assessments.models import MAX_ATTACHMENT_BYTES, DataExportAssessment
from apps.assessments.questions import QUESTIONS_BY_KEY
from apps.assessments.report import build_report, labelled_facts, report_markdown
from apps.assessments.rules import default_review_by
from apps.assessments.selectors import (
    assessment_get_for,
    assessment_summary,
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
    assessment = assessment_get_for(request.user, pk)
    summary = assessment_summary(assessment)
    return render(
        request,
        "assessments/assessment_detail.html",
        {"assessment": assessment, "case": assessment.case, "summary": summary},
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
