"""The portal's pages: the vendor's, reached only through its invitation's link, and the
organisation's, where an offer's invitations and the vendor's answers are managed.

On the vendor's side every record is looked up through ``request.invitation``; on the
organisation's, through the offer.
"""

from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from apps.core.access import MissingPermission, role_required
from apps.core.downloads import stored_file_response
from apps.core.forms import apply_service_errors, stale_edit_message
from apps.core.services import ConcurrentEditError, StateConflict
from apps.core.uploads import refused_unread
from apps.evidence.datasheet import Sku
from apps.offers.models import Offer
from apps.offers.selectors import offer_get_for
from apps.portal import access
from apps.portal.forms import (
    DatasheetForm,
    DocumentDecisionForm,
    DocumentForm,
    InvitationForm,
    ProposalDecisionForm,
    ReplyForm,
    RevokeForm,
    SectionForm,
    SectionRowForm,
)
from apps.portal.models import ClaimSection, InvitationState, ProposalStatus
from apps.portal.questionnaire_selectors import answered_of_offer, sent_list
from apps.portal.selectors import (
    AnswerRow,
    AnswerSection,
    ClaimRow,
    answers_of,
    datasheet_answers,
    datasheet_card,
    datasheet_values,
    document_of_offer,
    document_stored_file,
    documents_of,
    invitation_documents,
    invitation_of_offer,
    invitations_of,
    offer_claims,
    plan_measurements,
    proposal_of_invitation,
    proposal_of_offer,
    section_rows,
    sections_of,
)
from apps.portal.services import codes, proposals, review
from apps.portal.services.invitations import EmailNotSent, invitation_create, invitation_revoke
from apps.portal.services.proposals import reference_field

# --- The vendor's side ------------------------------------------------------------------


def start(request: HttpRequest, token: str) -> HttpResponse:
    """Where the e-mailed link lands: ask for a code, then type it.

    Open to anyone holding the link (there is no account); it shows the vendor's and
    the organisation's names only, and nothing of the offer until the code is typed.
    """
    invitation = access.invitation_for_link(token)
    if invitation is None or invitation.state != InvitationState.OPEN:
        response = access.refused(request, invitation)
        add_never_cache_headers(response)
        return response
    if access.signed_in(request, invitation) and request.method == "GET":
        return redirect("portal:home", token)
    status = 200
    if request.method == "POST":
        if "send" in request.POST:
            try:
                codes.code_send(invitation=invitation)
            except ValidationError as error:
                messages.error(request, " ".join(error.messages))
                status = 429
            except EmailNotSent:
                messages.error(request, _("The code could not be e-mailed. Try again shortly."))
                status = 503
            else:
                messages.success(
                    request,
                    _("A code is on its way to %(email)s.") % {"email": _masked(invitation.email)},
                )
                return redirect("portal:start", token)
        elif codes.code_check(invitation=invitation, code=request.POST.get("code", "")[:20]):
            access.sign_in(request, invitation)
            return redirect("portal:home", token)
        else:
            messages.error(
                request,
                _("That code is wrong, used or expired. Ask for a new one if it keeps failing."),
            )
            status = 400
    response = render(
        request,
        "portal/start.html",
        {
            "invitation": invitation,
            "vendor": invitation.offer.vendor,
            "masked": _masked(invitation.email),
            "organisation_name": settings.ORGANISATION_NAME,
        },
        status=status,
    )
    add_never_cache_headers(response)
    return response


def _masked(email: str) -> str:
    """``li.wei@vendor.example`` → ``l•••••@vendor.example``: enough to recognise, not to read."""
    local, _at, domain = email.partition("@")
    return f"{local[:1]}{'•' * max(len(local) - 1, 1)}@{domain}"


@require_POST
@access.portal_required
def sign_out(request: HttpRequest, token: str) -> HttpResponse:
    access.sign_out(request)
    messages.success(request, _("Signed out. The link asks for a new code next time."))
    return redirect("portal:start", token)


@access.portal_required
def home(request: access.PortalRequest, token: str) -> HttpResponse:
    """The vendor's overview: what is asked, what was answered, and how each answer stands."""
    invitation = request.invitation
    return access.portal_render(
        request,
        "portal/home.html",
        {"sections": sections_of(invitation), "questionnaires": sent_list(invitation)},
    )


def _upload_refused(request: HttpRequest, message: str, *, status: int) -> HttpResponse:
    """A refused upload, on a page of the portal's own. It is answered before the link is
    looked at, so it names no invitation and no offer."""
    return render(
        request,
        "portal/vendor/upload_refused.html",
        {"message": message, "organisation_name": settings.ORGANISATION_NAME},
        status=status,
    )


def _section_of(key: str) -> str:
    # The sections' addresses are their keys: spec, commercial, clause, exit.
    if key not in ClaimSection.values:
        raise Http404(_("There is no such section."))
    return key


def _status_of(error: ValidationError) -> int:
    return 409 if isinstance(error, StateConflict) else 400


@access.portal_required
def section(request: access.PortalRequest, token: str, section: str) -> HttpResponse:
    """One section's claims, with the vendor's answers and how each one stands."""
    section = _section_of(section)
    invitation = request.invitation
    rows = section_rows(invitation, section)
    card_form = DatasheetForm(request.POST or request.GET or None)
    card_key = card_form.cleaned_data["card"] if card_form.is_valid() else ""
    card = None
    if section == ClaimSection.SPEC:
        card = datasheet_card(card_key, invitation.offer.accelerator_model)
        if card is not None and not card_form.is_bound:
            card_form = DatasheetForm(initial={"card": card.key})  # the offer's own card
    status = 200
    if request.method == "POST" and "fill" in request.POST and section == ClaimSection.SPEC:
        form, status = _datasheet_filled(request, rows, card)
    elif request.method == "POST":
        form = SectionForm(request.POST, rows=rows)
        if form.is_valid():
            try:
                saved = proposals.proposals_submit(
                    invitation=invitation,
                    section=section,
                    answers=form.answers(),
                    references=form.references(),
                )
            except ValidationError as error:
                apply_service_errors(form, error)
                status = _status_of(error)
            else:
                if saved:
                    sent = ngettext(
                        "%(count)d answer sent for review.",
                        "%(count)d answers sent for review.",
                        len(saved),
                    )
                    messages.success(request, sent % {"count": len(saved)})
                else:
                    messages.info(request, _("Nothing new to send: no answer changed."))
                return redirect("portal:section", token, section)
        else:
            status = 400
    else:
        form = SectionForm(rows=rows)
    return _section_page(request, section, rows, form, card_form, card, status=status)


def _datasheet_filled(
    request: HttpRequest, rows: list[ClaimRow], card: Sku | None
) -> tuple[SectionForm, int]:
    """The answers as typed, with the card's datasheet figures in their fields; nothing saved."""
    typed = request.POST.dict()
    if card is None:
        messages.error(request, _("Choose a card model to fill from its datasheet."))
        return SectionForm(rows=rows, initial=typed), 400
    filled = datasheet_answers(card, rows)
    messages.info(
        request, _("Filled from the datasheet. Check the figures, then send your answers.")
    )
    return SectionForm(rows=rows, initial=typed | filled), 200


def _section_page(
    request: HttpRequest,
    section: str,
    rows: list[ClaimRow],
    form: SectionForm,
    card_form: DatasheetForm,
    card: Sku | None,
    *,
    status: int = 200,
    refused_reply: tuple[int, ReplyForm] | None = None,
) -> HttpResponse:
    hints = datasheet_values(card) if card is not None else {}
    shown = []
    for row in rows:
        hint = hints.get(row.key, "")
        shown.append(
            {
                "row": row,
                "field": form[row.key] if row.editable else None,
                "reference": form[reference_field(row.key)]
                if row.editable and row.claim is None
                else None,
                "hint": row.shown(hint) if hint else "",
                "reply_form": _reply_form(row, refused_reply),
            }
        )
    return access.portal_render(
        request,
        "portal/vendor/section.html",
        {
            "section": section,
            "section_label": ClaimSection(section).label,
            "rows": shown,
            "form": form,
            "can_send": any(row.editable for row in rows),
            "card_form": card_form if section == ClaimSection.SPEC else None,
            "card": card,
            "statuses": ProposalStatus,
        },
        status=status,
    )


@require_POST
@access.portal_required
def reply(request: access.PortalRequest, token: str, section: str, pk: int) -> HttpResponse:
    """The vendor answers a reviewer's question on one of its own answers."""
    section = _section_of(section)
    invitation = request.invitation
    proposal = proposal_of_invitation(invitation, pk, section)
    form = ReplyForm(request.POST, prefix=f"reply-{proposal.pk}")
    status = 400
    if form.is_valid():
        try:
            proposals.proposal_reply(
                invitation=invitation,
                proposal=proposal,
                reply=form.cleaned_data["reply"],
                value=form.cleaned_data["value"],
            )
        except ValidationError as error:
            apply_service_errors(form, error)
            status = _status_of(error)
        else:
            messages.success(request, _("Your reply was sent for review."))
            return redirect("portal:section", token, section)
    rows = section_rows(invitation, section)
    return _section_page(
        request,
        section,
        rows,
        SectionForm(rows=rows),
        DatasheetForm(),
        None,
        status=status,
        refused_reply=(proposal.pk, form),
    )


def _reply_form(row: ClaimRow, refused_reply: tuple[int, ReplyForm] | None) -> ReplyForm | None:
    """The reply form of a questioned answer: the refused one as typed, else a blank one."""
    if not row.questioned or row.proposal is None:
        return None
    if refused_reply is not None and refused_reply[0] == row.proposal.pk:
        return refused_reply[1]
    return ReplyForm(prefix=f"reply-{row.proposal.pk}")


@refused_unread(proposals.DOCUMENT_POLICY.check(_upload_refused))  # before the CSRF check
@access.portal_required
def documents(request: access.PortalRequest, token: str) -> HttpResponse:
    """The vendor's documents, and a form to upload one more."""
    invitation = request.invitation
    form = DocumentForm(request.POST or None, request.FILES or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                proposals.document_upload(
                    invitation=invitation,
                    kind=form.cleaned_data["kind"],
                    description=form.cleaned_data["description"],
                    upload=form.cleaned_data["file"],
                )
            except ValidationError as error:
                apply_service_errors(form, error)
                status = _status_of(error)
            else:
                messages.success(request, _("Document uploaded. It is reviewed like your answers."))
                return redirect("portal:documents", token)
        else:
            status = 400
    return access.portal_render(
        request,
        "portal/vendor/documents.html",
        {
            "form": form,
            "documents": invitation_documents(invitation),
            "max_bytes": proposals.document_max_bytes(),
        },
        status=status,
    )


# --- The organisation's side ------------------------------------------------------------


def _invitations_page(
    request: HttpRequest,
    offer: Offer,
    *,
    form: InvitationForm | None = None,
    problem: str = "",
    status: int = 200,
) -> HttpResponse:
    return render(
        request,
        "portal/staff/invitations.html",
        {
            "offer": offer,
            "case": offer.case,
            "invitations": invitations_of(offer),
            "form": form or InvitationForm(contacts=_contacts(offer)),
            "revoke_form": RevokeForm(),
            "problem": problem,
        },
        status=status,
    )


def _contacts(offer: Offer) -> QuerySet:
    """The vendor's active contacts, kept once on the vendor and offered to each invitation."""
    return offer.vendor.contact_people.filter(active=True).order_by("name", "pk")


@role_required("portal.view_vendorinvitation")
def invitations(request: HttpRequest, offer_pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, offer_pk)
    if request.method != "POST":
        return _invitations_page(request, offer)
    if not request.user.has_perm("portal.add_vendorinvitation"):
        raise MissingPermission("portal.add_vendorinvitation")
    form = InvitationForm(request.POST, contacts=_contacts(offer))
    if form.is_valid():
        try:
            invitation_create(actor=request.user, offer=offer, **form.cleaned_data)
        except EmailNotSent:
            form.add_error(
                None,
                _(
                    "The invitation e-mail could not be sent, so nothing was kept. "
                    "Check the address and try again later."
                ),
            )
        except ValidationError as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Invitation sent to %(email)s.") % form.cleaned_data)
            return redirect("portal:invitations", offer_pk=offer.pk)
    return _invitations_page(request, offer, form=form)


@role_required("portal.change_vendorinvitation")
@require_POST
def invitation_revoke_view(request: HttpRequest, offer_pk: int, pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, offer_pk)
    invitation = invitation_of_offer(offer, pk)
    form = RevokeForm(request.POST)
    if not form.is_valid():
        return _invitations_page(
            request, offer, problem=_("Say why the invitation is revoked."), status=400
        )
    try:
        invitation_revoke(
            actor=request.user, invitation=invitation, reason=form.cleaned_data["reason"]
        )
    except StateConflict as error:
        return _invitations_page(request, offer, problem=" ".join(error.messages), status=409)
    messages.success(
        request,
        _(
            "Invitation revoked: its link no longer opens anything, and the answers and "
            "documents it brought that were still awaiting review are closed."
        ),
    )
    return redirect("portal:invitations", offer_pk=offer.pk)


@dataclass
class ReviewSection:
    """A section of the answers page: its rows, each with its row of the section's form
    where the reader may decide it."""

    key: str
    label: str
    rows: list[tuple[AnswerRow, SectionRowForm | None]]

    @property
    def decidable(self) -> bool:
        return any(form is not None for _row, form in self.rows)


def _row_form(row: AnswerRow, data: QueryDict | None = None) -> SectionRowForm | None:
    if not row.can_decide:
        return None
    proposal = row.proposal
    return SectionRowForm(
        data,
        prefix=f"p{proposal.pk}",
        initial={"version": proposal.version},
        open_invitation=proposal.invitation.state == InvitationState.OPEN,
    )


def _review_sections(
    sections: list[AnswerSection], *, posted: str = "", data: QueryDict | None = None
) -> list[ReviewSection]:
    """The page's sections, the one just posted (``posted``) with the reader's entries."""
    return [
        ReviewSection(
            section.key,
            section.label,
            [
                (row, _row_form(row, data if section.key == posted else None))
                for row in section.rows
            ],
        )
        for section in sections
    ]


def _answers_page(
    request: HttpRequest,
    offer: Offer,
    *,
    problems: list[str] | None = None,
    status: int = 200,
    sections: list[ReviewSection] | None = None,
    checklist_missing: bool = False,
) -> HttpResponse:
    if sections is None:
        sections = _review_sections(answers_of(offer, actor=request.user))
    return render(
        request,
        "portal/staff/answers.html",
        {
            "offer": offer,
            "case": offer.case,
            "sections": sections,
            "documents": documents_of(offer),
            "questionnaires": answered_of_offer(offer),
            "problems": problems or [],
            "checklist_missing": checklist_missing,
            "document_form": DocumentDecisionForm(),
        },
        status=status,
    )


@role_required("portal.view_proposal")
def answers(request: HttpRequest, offer_pk: int) -> HttpResponse:
    return _answers_page(request, offer_get_for(request.user, offer_pk))


def _form_problems(form: Form) -> list[str]:
    return [str(message) for messages_ in form.errors.values() for message in messages_]


def _refusal(error: Exception) -> tuple[list[str], int]:
    """What a refused decision says, and the page's status: 409 when someone came first."""
    if isinstance(error, ConcurrentEditError):
        return [stale_edit_message(error.current.version, error.expected_version)], 409
    if isinstance(error, StateConflict):
        return list(error.messages), 409
    if isinstance(error, EmailNotSent):
        return [_("The question could not be e-mailed, so nothing was changed.")], 400
    return list(getattr(error, "messages", [str(error)])), 400


@role_required("portal.change_proposal")
@require_POST
def proposal_decide(request: HttpRequest, offer_pk: int, pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, offer_pk)
    proposal = proposal_of_offer(offer, pk)
    form = ProposalDecisionForm(request.POST)
    if not form.is_valid():
        return _answers_page(request, offer, problems=_form_problems(form), status=400)
    data = form.cleaned_data
    try:
        review.proposal_decide(
            actor=request.user,
            proposal=proposal,
            decision=data["decision"],
            note=data["note"],
            value=data["value"],
            expected_version=data["version"],
        )
    except (ValidationError, ConcurrentEditError, EmailNotSent) as error:
        refusal, status = _refusal(error)
        return _answers_page(
            request,
            offer,
            problems=refusal,
            status=status,
            checklist_missing=isinstance(error, review.NoChecklist),
        )
    messages.success(request, _("Decision recorded."))
    return _back_to(offer, f"proposal-{proposal.pk}")


def _back_to(offer: Offer, anchor: str) -> HttpResponse:
    """The answers page, scrolled back to where the reader was."""
    return redirect(reverse("portal:answers", args=[offer.pk]) + f"#{anchor}")


@role_required("portal.change_proposal")
@require_POST
def section_decide(request: HttpRequest, offer_pk: int, section: str) -> HttpResponse:
    """One section's review form: a decision per row, or every answer still awaiting
    review accepted as proposed; recorded together, or not at all."""
    offer = offer_get_for(request.user, offer_pk)
    if section not in ClaimSection.values:
        raise Http404(_("No such section."))
    answers = answers_of(offer, actor=request.user)
    sections = _review_sections(answers, posted=section, data=request.POST)
    (current,) = [s for s in sections if s.key == section] or [ReviewSection(section, "", [])]
    if not current.decidable:
        raise PermissionDenied(_("Nothing in this section awaits your decision."))
    accept_all = "accept_all" in request.POST
    rows, problems = [], []
    for row, form in current.rows:
        if form is None:
            continue
        if not form.is_valid():
            problems += [f"{row.label}: {message}" for message in _form_problems(form)]
            continue
        data = form.cleaned_data
        decision = data["decision"]
        if not decision and accept_all and row.proposal.invitation.state == InvitationState.OPEN:
            decision = review.Decision.ACCEPT
        if decision:
            rows.append(
                review.RowDecision(
                    proposal=row.proposal,
                    decision=decision,
                    note=data["note"],
                    value=data["value"],
                    version=data["version"],
                )
            )
    if problems:
        return _answers_page(request, offer, problems=problems, status=400, sections=sections)
    try:
        decided = review.section_decide(actor=request.user, section=section, rows=rows)
    except review.RowRefused as refused:
        refusal, status = _refusal(refused.error)
        return _answers_page(
            request,
            offer,
            problems=[f"{refused.label}: {message}" for message in refusal],
            status=status,
            sections=sections,
            checklist_missing=isinstance(refused.error, review.NoChecklist),
        )
    except ValidationError as error:
        return _answers_page(
            request, offer, problems=list(error.messages), status=400, sections=sections
        )
    messages.success(
        request,
        ngettext("%(count)d decision recorded.", "%(count)d decisions recorded.", len(decided))
        % {"count": len(decided)},
    )
    return _back_to(offer, f"section-{section}")


@role_required("portal.change_vendordocument")
@require_POST
def document_decide(request: HttpRequest, offer_pk: int, pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, offer_pk)
    document = document_of_offer(offer, pk)
    form = DocumentDecisionForm(request.POST)
    if not form.is_valid():
        return _answers_page(request, offer, problems=_form_problems(form), status=400)
    try:
        review.document_decide(
            actor=request.user,
            document=document,
            decision=form.cleaned_data["decision"],
            note=form.cleaned_data["note"],
        )
    except ValidationError as error:
        refusal, status = _refusal(error)
        return _answers_page(request, offer, problems=refusal, status=status)
    messages.success(request, _("Decision recorded."))
    return _back_to(offer, f"document-{document.pk}")


@role_required("portal.view_vendordocument")
def document_download(request: HttpRequest, offer_pk: int, pk: int) -> HttpResponseBase:
    offer = offer_get_for(request.user, offer_pk)
    document = document_of_offer(offer, pk)
    return stored_file_response(request, document_stored_file(offer, document))


@role_required("offers.view_declaredspec")
def claims(request: HttpRequest, offer_pk: int) -> HttpResponse:
    """Each declared claim of the offer: who claimed it and what was measured for it."""
    offer = offer_get_for(request.user, offer_pk)
    rows, verification = offer_claims(offer)
    plan_checks, plan_thresholds = plan_measurements(offer, verification)
    return render(
        request,
        "portal/staff/claims.html",
        {
            "offer": offer,
            "case": offer.case,
            "rows": rows,
            "verification": verification,
            "plan_checks": plan_checks,
            "plan_thresholds": plan_thresholds,
        },
    )
