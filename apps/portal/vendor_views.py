"""The vendor's pages after the code: answer each section, reply to questions, upload papers.

Every record is looked up through ``request.invitation``; an id from the request
that is not the invitation's own answers 404.
"""

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from apps.core.forms import apply_service_errors
from apps.core.services import StateConflict
from apps.core.uploads import refused_unread
from apps.portal import access, proposals
from apps.portal.models import ClaimSection, Proposal, ProposalStatus
from apps.portal.proposals import reference_field
from apps.portal.vendor_forms import DatasheetForm, DocumentForm, ReplyForm, SectionForm
from apps.portal.vendor_selectors import datasheet_card, datasheet_values, section_rows


def _upload_refused(request, message: str, *, status: int) -> HttpResponse:
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
def section(request: HttpRequest, token: str, section: str) -> HttpResponse:
    """One section's claims, with the vendor's answers and how each one stands."""
    section = _section_of(section)
    invitation = request.invitation  # type: ignore[attr-defined]
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


def _datasheet_filled(request, rows, card) -> tuple[SectionForm, int]:
    """The answers as typed, with the card's datasheet figures in their fields; nothing saved."""
    typed = request.POST.dict()
    if card is None:
        messages.error(request, _("Choose a card model to fill from its datasheet."))
        return SectionForm(rows=rows, initial=typed), 400
    editable = {row.key for row in rows if row.editable}
    filled = {name: v for name, v in datasheet_values(card).items() if name in editable}
    messages.info(
        request, _("Filled from the datasheet. Check the figures, then send your answers.")
    )
    return SectionForm(rows=rows, initial=typed | filled), 200


def _section_page(
    request, section, rows, form, card_form, card, *, status=200, refused_reply=None
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
def reply(request: HttpRequest, token: str, section: str, pk: int) -> HttpResponse:
    """The vendor answers a reviewer's question on one of its own answers."""
    section = _section_of(section)
    invitation = request.invitation  # type: ignore[attr-defined]
    try:
        proposal = invitation.proposals.get(pk=pk, section=section)
    except Proposal.DoesNotExist:
        raise Http404(_("There is no such answer.")) from None
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


def _reply_form(row, refused_reply) -> ReplyForm | None:
    """The reply form of a questioned answer: the refused one as typed, else a blank one."""
    if not row.questioned or row.proposal is None:
        return None
    if refused_reply is not None and refused_reply[0] == row.proposal.pk:
        return refused_reply[1]
    return ReplyForm(prefix=f"reply-{row.proposal.pk}")


@refused_unread(proposals.DOCUMENT_POLICY.check(_upload_refused))  # before the CSRF check
@access.portal_required
def documents(request: HttpRequest, token: str) -> HttpResponse:
    """The vendor's documents, and a form to upload one more."""
    invitation = request.invitation  # type: ignore[attr-defined]
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
            "documents": list(invitation.documents.all()),
            "max_bytes": proposals.document_max_bytes(),
        },
        status=status,
    )
