"""Pages of the questionnaire library (the organisation's side) and the vendor's page
for one questionnaire sent through its invitation.

Every internal role reads the library; authors (procurement, legal, the tech lead)
start questionnaires, edit drafts and publish. The vendor reaches only the
questionnaires of its own invitation, through the link and its code.
"""

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.core.access import role_required
from apps.core.forms import apply_service_errors, stale_edit_message
from apps.core.services import ConcurrentEditError, StateConflict
from apps.core.uploads import refused_unread
from apps.portal import access
from apps.portal.models import QuestionnaireVersion
from apps.portal.questionnaire_forms import (
    AnswersForm,
    PublishForm,
    QuestionForm,
    QuestionnaireForm,
)
from apps.portal.questionnaire_selectors import (
    answered,
    draft_of,
    kept_values,
    library_rows,
    previous_answers,
    previous_of,
    question_of_draft,
    questionnaire_get,
    questions_of,
    sent_of_invitation,
)
from apps.portal.services import proposals
from apps.portal.services import questionnaires as services

# --- The library --------------------------------------------------------------------------


@role_required("portal.view_questionnaire")
def questionnaire_index(request: HttpRequest) -> HttpResponse:
    return render(request, "portal/questionnaires/list.html", {"rows": library_rows()})


@role_required("portal.add_questionnaire")
def questionnaire_create(request: HttpRequest) -> HttpResponse:
    form = QuestionnaireForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                draft = services.questionnaire_create(actor=request.user, **form.cleaned_data)
            except ValidationError as error:
                apply_service_errors(form, error)
            else:
                messages.success(request, _("Questionnaire started: add its questions."))
                return redirect("portal:questionnaire", draft.questionnaire_id)
        status = 400
    return render(request, "portal/questionnaires/create.html", {"form": form}, status=status)


def _detail_page(
    request: HttpRequest,
    pk: int,
    *,
    question_form: QuestionForm | None = None,
    publish_form: PublishForm | None = None,
    problem: str = "",
    status: int = 200,
) -> HttpResponse:
    questionnaire = questionnaire_get(pk)
    draft = draft_of(questionnaire)
    return render(
        request,
        "portal/questionnaires/detail.html",
        {
            "questionnaire": questionnaire,
            "versions": [v for v in questionnaire.versions.all() if v.is_published],
            "draft": draft,
            "draft_questions": questions_of(draft) if draft else [],
            "question_form": question_form or QuestionForm(),
            "publish_form": publish_form or PublishForm(),
            "problem": problem,
        },
        status=status,
    )


@role_required("portal.view_questionnaire")
def questionnaire_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _detail_page(request, pk)


@role_required("portal.add_questionnaireversion")
@require_POST
def draft_start(request: HttpRequest, pk: int) -> HttpResponse:
    questionnaire = questionnaire_get(pk)
    draft = services.draft_start(actor=request.user, questionnaire=questionnaire)
    messages.success(
        request,
        _("Draft of version %(number)d open: change it, then publish.") % {"number": draft.number},
    )
    return redirect("portal:questionnaire", pk)


def _open_draft(pk: int) -> QuestionnaireVersion:
    draft = draft_of(questionnaire_get(pk))
    if draft is None:
        raise StateConflict(_("There is no draft: start one to change the questions."))
    return draft


def _refusal(error: Exception) -> tuple[str, int]:
    if isinstance(error, ConcurrentEditError):
        return stale_edit_message(error.current.version, error.expected_version), 409
    status = 409 if isinstance(error, StateConflict) else 400
    return " ".join(getattr(error, "messages", [str(error)])), status


@role_required("portal.add_question")
@require_POST
def question_add(request: HttpRequest, pk: int) -> HttpResponse:
    form = QuestionForm(request.POST)
    if not form.is_valid():
        return _detail_page(request, pk, question_form=form, status=400)
    try:
        draft = _open_draft(pk)
        services.question_save(actor=request.user, version=draft, fields=form.cleaned_data)
    except StateConflict as error:
        problem, status = _refusal(error)
        return _detail_page(request, pk, question_form=form, problem=problem, status=status)
    except ValidationError as error:
        apply_service_errors(form, error)
        return _detail_page(request, pk, question_form=form, status=400)
    messages.success(request, _("Question added."))
    return redirect("portal:questionnaire", pk)


@role_required("portal.change_question")
def question_edit(request: HttpRequest, pk: int, question_pk: int) -> HttpResponse:
    questionnaire = questionnaire_get(pk)
    draft = draft_of(questionnaire)
    if draft is None:
        return _detail_page(
            request,
            pk,
            problem=_("There is no draft: start one to change the questions."),
            status=409,
        )
    question = question_of_draft(draft, question_pk)
    status = 200
    problem = ""
    if request.method == "POST":
        form = QuestionForm(request.POST)
        if form.is_valid():
            try:
                services.question_save(
                    actor=request.user,
                    version=draft,
                    question=question,
                    fields=form.cleaned_data,
                    expected_version=form.cleaned_data["version"],
                )
            except (ValidationError, ConcurrentEditError) as error:
                problem, status = _refusal(error)
                if isinstance(error, ValidationError) and not isinstance(error, StateConflict):
                    apply_service_errors(form, error)
                    problem = ""
            else:
                messages.success(request, _("Question changed."))
                return redirect("portal:questionnaire", pk)
        else:
            status = 400
    else:
        form = QuestionForm.of(question)
    return render(
        request,
        "portal/questionnaires/question_edit.html",
        {
            "questionnaire": questionnaire,
            "draft": draft,
            "question": question,
            "form": form,
            "problem": problem,
        },
        status=status,
    )


@role_required("portal.change_question")
@require_POST
def question_remove(request: HttpRequest, pk: int, question_pk: int) -> HttpResponse:
    try:
        draft = _open_draft(pk)
        question = question_of_draft(draft, question_pk)
        services.question_remove(actor=request.user, question=question)
    except StateConflict as error:
        problem, status = _refusal(error)
        return _detail_page(request, pk, problem=problem, status=status)
    messages.success(request, _("Question removed."))
    return redirect("portal:questionnaire", pk)


@role_required("portal.change_questionnaireversion")
@require_POST
def version_publish(request: HttpRequest, pk: int) -> HttpResponse:
    form = PublishForm(request.POST)
    if not form.is_valid():
        return _detail_page(request, pk, publish_form=form, status=400)
    try:
        draft = _open_draft(pk)
        published = services.version_publish(
            actor=request.user, version=draft, note=form.cleaned_data["note"]
        )
    except ValidationError as error:
        problem, status = _refusal(error)
        return _detail_page(request, pk, publish_form=form, problem=problem, status=status)
    messages.success(
        request,
        _("Version %(number)d published: it can now be sent to vendors.")
        % {"number": published.number},
    )
    return redirect("portal:questionnaire", pk)


@role_required("portal.view_questionnaireversion")
def version_detail(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    questionnaire = questionnaire_get(pk)
    version = get_object_or_404(
        QuestionnaireVersion.objects.select_related("published_by"),
        questionnaire=questionnaire,
        number=number,
    )
    return render(
        request,
        "portal/questionnaires/version.html",
        {"questionnaire": questionnaire, "version": version, "questions": questions_of(version)},
    )


# --- The vendor's side --------------------------------------------------------------------


def _upload_refused(request: HttpRequest, message: str, *, status: int) -> HttpResponse:
    """A refused upload, answered before the link is looked at: it names no invitation."""
    return render(
        request,
        "portal/vendor/upload_refused.html",
        {"message": message, "organisation_name": settings.ORGANISATION_NAME},
        status=status,
    )


@refused_unread(proposals.DOCUMENT_POLICY.check(_upload_refused))  # before the CSRF check
@access.portal_required
def questionnaire_answer(request: access.PortalRequest, token: str, pk: int) -> HttpResponse:
    """One questionnaire of the invitation: answer, save, submit; once submitted, read."""
    invitation = request.invitation
    sent = sent_of_invitation(invitation, pk)
    questions = questions_of(sent.questionnaire_version)
    status = 200
    carried: dict[str, str] = {}
    if request.method == "POST" and sent.submitted_at is None:
        form = AnswersForm(request.POST, request.FILES, questions=questions)
        submit = "submit" in request.POST
        try:
            services.answers_save(
                invitation=invitation,
                sent=sent,
                typed=form.typed(),
                files=form.uploads(),
                submit=submit,
            )
        except ValidationError as error:
            form.is_valid()  # bound: its errors show beside each field
            apply_service_errors(form, error)
            status = 409 if isinstance(error, StateConflict) else 400
        else:
            if submit:
                messages.success(request, _("Answers submitted. Thank you."))
            else:
                messages.success(request, _("Answers saved. Submit them when they are complete."))
            return redirect("portal:questionnaire-answer", token, sent.pk)
    else:
        initial = kept_values(sent)
        if not initial and sent.submitted_at is None:
            # Nothing answered yet: the vendor's earlier answers, to confirm or change.
            carried = previous_answers(sent)
            initial = carried
        form = AnswersForm(initial=initial, questions=questions)
    previous = previous_of(sent) if carried else None
    return access.portal_render(
        request,
        "portal/vendor/questionnaire.html",
        {
            "sent": sent,
            "form": form,
            "rows": answered(sent).rows,
            "carried": carried,
            "previous": previous,
            "max_bytes": proposals.document_max_bytes(),
        },
        status=status,
    )
