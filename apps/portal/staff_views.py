"""The organisation's pages of the vendor portal: invitations of an offer and the review
of what the vendor proposed. Every record is reached through its offer."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.core.access import MissingPermission, role_required
from apps.core.downloads import StoredFile, stored_file_response
from apps.core.forms import apply_service_errors, stale_edit_message
from apps.core.services import ConcurrentEditError, StateConflict
from apps.evidence.selectors import latest_verification
from apps.offers.selectors import offer_get_for
from apps.portal import review
from apps.portal.invitations import EmailNotSent, invitation_create, invitation_revoke
from apps.portal.review_selectors import (
    answers_of,
    document_of_offer,
    documents_of,
    invitations_of,
    proposal_of_offer,
    spec_provenance,
)
from apps.portal.staff_forms import (
    DocumentDecisionForm,
    InvitationForm,
    ProposalDecisionForm,
    RevokeForm,
)


def _invitations_page(request, offer, *, form=None, problem: str = "", status: int = 200):
    return render(
        request,
        "portal/staff/invitations.html",
        {
            "offer": offer,
            "case": offer.case,
            "invitations": invitations_of(offer),
            "form": form or InvitationForm(),
            "revoke_form": RevokeForm(),
            "problem": problem,
        },
        status=status,
    )


@role_required("portal.view_vendorinvitation")
def invitations(request, offer_pk: int):
    offer = offer_get_for(request.user, offer_pk)
    if request.method != "POST":
        return _invitations_page(request, offer)
    if not request.user.has_perm("portal.add_vendorinvitation"):
        raise MissingPermission("portal.add_vendorinvitation")
    form = InvitationForm(request.POST)
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
def invitation_revoke_view(request, offer_pk: int, pk: int):
    offer = offer_get_for(request.user, offer_pk)
    invitation = next((i for i in offer.vendor_invitations.filter(pk=pk)), None)
    if invitation is None:
        raise Http404(_("No such invitation for this offer."))
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
    messages.success(request, _("Invitation revoked: its link no longer opens anything."))
    return redirect("portal:invitations", offer_pk=offer.pk)


def _answers_page(request, offer, *, problems=None, status: int = 200):
    return render(
        request,
        "portal/staff/answers.html",
        {
            "offer": offer,
            "case": offer.case,
            "sections": answers_of(offer, actor=request.user),
            "documents": documents_of(offer),
            "problems": problems or [],
            "decision_form": ProposalDecisionForm(),
            "document_form": DocumentDecisionForm(),
        },
        status=status,
    )


@role_required("portal.view_proposal")
def answers(request, offer_pk: int):
    return _answers_page(request, offer_get_for(request.user, offer_pk))


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
def proposal_decide(request, offer_pk: int, pk: int):
    offer = offer_get_for(request.user, offer_pk)
    proposal = proposal_of_offer(offer, pk)
    form = ProposalDecisionForm(request.POST)
    if not form.is_valid():
        problems = [str(message) for messages_ in form.errors.values() for message in messages_]
        return _answers_page(request, offer, problems=problems, status=400)
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
        return _answers_page(request, offer, problems=refusal, status=status)
    messages.success(request, _("Decision recorded."))
    return redirect("portal:answers", offer_pk=offer.pk)


@role_required("portal.change_vendordocument")
@require_POST
def document_decide(request, offer_pk: int, pk: int):
    offer = offer_get_for(request.user, offer_pk)
    document = document_of_offer(offer, pk)
    form = DocumentDecisionForm(request.POST)
    if not form.is_valid():
        problems = [str(message) for messages_ in form.errors.values() for message in messages_]
        return _answers_page(request, offer, problems=problems, status=400)
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
    return redirect("portal:answers", offer_pk=offer.pk)


@role_required("portal.view_vendordocument")
def document_download(request, offer_pk: int, pk: int):
    offer = offer_get_for(request.user, offer_pk)
    document = document_of_offer(offer, pk)
    stored = StoredFile(
        case_id=offer.case_id,
        record=f"Vendor document {document.name} of {offer.vendor}",
        name=document.storage_name,
        sha256=document.sha256,
        filename=document.name,
        content_type=document.content_type or None,
    )
    return stored_file_response(request, stored)


@role_required("offers.view_declaredspec")
def claims(request, offer_pk: int):
    """Each declared claim of the offer: who claimed it and what was measured for it."""
    offer = offer_get_for(request.user, offer_pk)
    spec = getattr(offer, "declared_spec", None)
    verification = latest_verification(offer)
    return render(
        request,
        "portal/staff/claims.html",
        {
            "offer": offer,
            "case": offer.case,
            "rows": spec_provenance(offer, spec, verification),
            "verification": verification,
        },
    )
