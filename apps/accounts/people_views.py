"""The administrators' pages: people and their roles, invitations, deactivation, and the
tokens an identity provider provisions with. Administrators only (``roles_required``);
everyone else is answered 403.

The page an invitee opens from their e-mail is public: the link's secret is the key.
"""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _

from apps.accounts import people as service
from apps.accounts.forms import (
    InviteForm,
    ProvisioningTokenForm,
    ReasonForm,
    RolesForm,
    SetPasswordForm,
)
from apps.accounts.models import AccountInvitation, ProvisioningToken
from apps.core.access import AuthenticatedHttpRequest, roles_required
from apps.core.roles import Role
from apps.core.services import StateConflict

PAGE_SIZE = 50


def _refusal(error: ValidationError) -> str:
    return " ".join(str(m) for m in error.messages)


@roles_required(Role.ADMIN)
def people_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Everyone, with their roles, whether active, last sign-in and two-factor state;
    filtered by role (who holds what) and by active."""
    role = request.GET.get("role", "")
    role = role if role in Role.values else ""
    active = request.GET.get("active", "")
    active = active if active in ("yes", "no") else ""
    page = Paginator(service.people(role=role, active=active), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    rows = [(person, service.roles_held(person)) for person in page]
    holders = dict(
        get_user_model()
        .objects.filter(is_active=True, groups__name__in=Role.values)
        .values_list("groups__name")
        .annotate(n=Count("pk", distinct=True))
    )
    # A superuser outside the group is an administrator too.
    holders[Role.ADMIN] = service.people(role=Role.ADMIN, active="yes").count()
    return render(
        request,
        "accounts/people/list.html",
        {
            "page": page,
            "rows": [(p, [Role(r).label for r in held]) for p, held in rows],
            "role": role,
            "active": active,
            "roles": [(key, label, holders.get(key, 0)) for key, label in Role.choices],
        },
    )


def _person_page(
    request: HttpRequest,
    person,
    *,
    roles_form: RolesForm | None = None,
    reason_form: ReasonForm | None = None,
    status: int = 200,
) -> HttpResponse:
    held = service.roles_held(person)
    return render(
        request,
        "accounts/people/person.html",
        {
            "person": person,
            "held": [Role(r).label for r in held],
            "has_authenticator": service.has_authenticator(person),
            "roles_form": roles_form or RolesForm(initial={"roles": held}),
            "reason_form": reason_form or ReasonForm(),
            "events": person.account_events.select_related("actor")[:100],
            "invitations": person.account_invitations.all()[:20],
            "is_self": person.pk == request.user.pk,
        },
        status=status,
    )


@roles_required(Role.ADMIN)
def person(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    return _person_page(request, get_object_or_404(get_user_model(), pk=pk))


@roles_required(Role.ADMIN)
def person_roles(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    someone = get_object_or_404(get_user_model(), pk=pk)
    if request.method != "POST":
        return redirect("accounts:person", pk=pk)
    form = RolesForm(request.POST)
    if form.is_valid():
        try:
            service.roles_set(
                actor=request.user,
                user=someone,
                roles=form.cleaned_data["roles"],
                reason=form.cleaned_data["reason"],
            )
        except StateConflict as error:
            form.add_error(None, _refusal(error))
            return _person_page(request, someone, roles_form=form, status=409)
        except ValidationError as error:
            form.add_error(None, _refusal(error))
        else:
            messages.success(request, _("Roles saved."))
            return redirect("accounts:person", pk=pk)
    return _person_page(request, someone, roles_form=form, status=400)


def _switch(request: AuthenticatedHttpRequest, pk: int, action) -> HttpResponse:
    someone = get_object_or_404(get_user_model(), pk=pk)
    if request.method != "POST":
        return redirect("accounts:person", pk=pk)
    form = ReasonForm(request.POST)
    if form.is_valid():
        try:
            action(actor=request.user, user=someone, reason=form.cleaned_data["reason"])
        except StateConflict as error:
            form.add_error(None, _refusal(error))
            return _person_page(request, someone, reason_form=form, status=409)
        except ValidationError as error:
            form.add_error(None, _refusal(error))
        else:
            if action is service.deactivate:
                messages.success(
                    request,
                    _("The account is deactivated: its sessions ended and its tokens revoked."),
                )
            else:
                messages.success(request, _("The account is active again."))
            return redirect("accounts:person", pk=pk)
    return _person_page(request, someone, reason_form=form, status=400)


@roles_required(Role.ADMIN)
def person_deactivate(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    return _switch(request, pk, service.deactivate)


@roles_required(Role.ADMIN)
def person_reactivate(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    return _switch(request, pk, service.reactivate)


@roles_required(Role.ADMIN)
def invite(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = InviteForm(request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                invitation, _secret = service.invite(actor=request.user, **form.cleaned_data)
            except ValidationError as error:
                if hasattr(error, "error_dict"):
                    for field, errors in error.message_dict.items():
                        form.add_error(field if field in form.fields else None, errors)
                else:
                    form.add_error(None, _refusal(error))
            except service.EmailNotSent:
                form.add_error(
                    None,
                    _("The e-mail could not be sent, so no invitation was made. Try again later."),
                )
                status = 502
            else:
                messages.success(
                    request,
                    _("Invitation sent to %(email)s.") % {"email": invitation.email},
                )
                return redirect("accounts:person", pk=invitation.user_id)
    return render(request, "accounts/people/invite.html", {"form": form}, status=status)


@roles_required(Role.ADMIN)
def invitations(request: AuthenticatedHttpRequest) -> HttpResponse:
    page = Paginator(
        AccountInvitation.objects.select_related("user", "invited_by"), PAGE_SIZE
    ).get_page(request.GET.get("page"))
    return render(request, "accounts/people/invitations.html", {"page": page})


@roles_required(Role.ADMIN)
def invitation_withdraw(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    invitation = get_object_or_404(AccountInvitation, pk=pk)
    if request.method == "POST":
        try:
            service.invitation_withdraw(actor=request.user, invitation=invitation)
        except StateConflict as error:
            messages.error(request, _refusal(error))
        else:
            messages.success(request, _("The invitation is withdrawn: its link no longer works."))
    return redirect("accounts:invitations")


def invitation_accept(request: HttpRequest, secret: str) -> HttpResponse:
    """Public: the invitee sets their password with the link from their e-mail, once."""
    try:
        invitation = service.invitation_of(secret)
    except service.InvitationInvalid as error:
        return render(
            request,
            "accounts/people/invitation_invalid.html",
            {"message": error.message},
            status=error.status,
        )
    form = SetPasswordForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            service.invitation_accept(secret=secret, password=form.cleaned_data["password1"])
        except service.InvitationInvalid as error:
            return render(
                request,
                "accounts/people/invitation_invalid.html",
                {"message": error.message},
                status=error.status,
            )
        except ValidationError as error:
            form.add_error("password1", error)
        else:
            messages.success(request, _("Your password is set: sign in with it."))
            return redirect("login")
    return render(
        request,
        "accounts/people/invitation_accept.html",
        {"form": form, "invitation": invitation},
        status=400 if form.errors else 200,
    )


@roles_required(Role.ADMIN)
def provisioning(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The tokens identity providers provision people with (SCIM); a new one is shown once."""
    form = ProvisioningTokenForm(request.POST if request.method == "POST" else None)
    issued = None
    status = 200
    if request.method == "POST":
        if form.is_valid():
            issued = service.provisioning_token_create(
                actor=request.user, label=form.cleaned_data["label"]
            )
            form = ProvisioningTokenForm()
        else:
            status = 400
    return render(
        request,
        "accounts/people/provisioning.html",
        {
            "form": form,
            "issued": issued,
            "tokens": ProvisioningToken.objects.select_related("created_by")[:100],
            "scim_url": settings.SITE_URL + "/scim/v2/",
        },
        status=status,
    )


@roles_required(Role.ADMIN)
def provisioning_revoke(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(ProvisioningToken, pk=pk)
    if request.method == "POST":
        try:
            service.provisioning_token_revoke(actor=request.user, token=token)
        except StateConflict as error:
            messages.error(request, _refusal(error))
        else:
            messages.success(request, _("The token is revoked."))
    return redirect("accounts:provisioning")
