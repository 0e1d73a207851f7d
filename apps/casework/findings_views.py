"""The case's findings page: every finding of the register, grouped by offer, with the
acceptances it rests on; an owner accepts a finding, or withdraws an acceptance, here
(docs/rules/findings.md#accepting-a-finding)."""

from dataclasses import dataclass, field
from datetime import timedelta

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.approvals.acceptances import (
    DOCUMENT_POLICY,
    actor_roles,
    finding_accept,
    finding_acceptance_withdraw,
)
from apps.approvals.findings import (
    ACCEPTANCE_DAYS,
    SEVERITY_LABELS,
    AcceptanceFacts,
    Entry,
    Severity,
)
from apps.approvals.forms import AcceptanceWithdrawForm, FindingAcceptForm
from apps.approvals.selectors import (
    acceptance_document,
    case_gates,
    finding_acceptance_list_for,
    register_of,
)
from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_get_for
from apps.casework.findings import AREA_RULES
from apps.core.access import role_required
from apps.core.downloads import stored_file_response
from apps.core.forms import apply_service_errors
from apps.core.second_factor import second_factor_for_writes
from apps.core.services import StateConflict
from apps.core.uploads import refused_unread


@dataclass
class AcceptanceRow:
    acceptance: AcceptanceFacts
    withdraw_form: AcceptanceWithdrawForm | None = None  # None: this reader may not withdraw it


@dataclass
class FindingRow:
    entry: Entry
    anchor: str
    gate: str  # the title of the approval gate it stands in
    acceptances: list[AcceptanceRow] = field(default_factory=list)
    accept_form: FindingAcceptForm | None = None  # None: this reader may not accept it


@dataclass
class OfferGroup:
    title: str
    rows: list[FindingRow]


def _anchor(code: str, offer_id: int | None, key: str) -> str:
    """The finding's place on the page, the same for its identity wherever it is named."""
    return "-".join(["finding", code.replace(".", "-"), str(offer_id or "case"), key])


def _acceptable_roles(entry: Entry, user, held: set[str]) -> list[str]:
    """The awaiting roles this reader holds and may accept the finding as."""
    if entry.rule.severity is not Severity.NEEDS_ACCEPTANCE:
        return []
    if not user.has_perm("approvals.add_findingacceptance"):
        return []
    if any(a.accepted_by_id == user.pk for a in entry.acceptances):
        return []  # a joint decision takes a different person for each owner
    return [role for role in entry.awaiting if role in held]


def _may_withdraw(acceptance: AcceptanceFacts, user, held: set[str]) -> bool:
    return user.has_perm("approvals.change_findingacceptance") and (
        acceptance.accepted_by_id == user.pk or acceptance.role in held
    )


def _groups(
    request: HttpRequest,
    case: ProcurementCase,
    *,
    bound_accept: FindingAcceptForm | None = None,
    bound_withdraw: tuple[int, AcceptanceWithdrawForm] | None = None,
) -> tuple[list[OfferGroup], bool]:
    """The register's entries grouped by offer, the whole case's first, each with the
    forms this reader may use (a form just sent, with its errors, in its place), and
    whether the form just sent found its place."""
    user = request.user
    held = actor_roles(user)
    expires = timezone.localdate() + timedelta(days=ACCEPTANCE_DAYS)
    offers = {offer.pk: offer for offer in case.offers.select_related("vendor").order_by("pk")}
    rows: dict[int | None, list[FindingRow]] = {}
    placed = False
    gathered = case_gates(case)
    gate_titles = {gate.key: gate.title for each in gathered for gate in each.gates}
    for n, entry in enumerate(register_of(gathered)):
        row = FindingRow(
            entry=entry,
            anchor=_anchor(*entry.finding.identity),
            gate=gate_titles.get(entry.rule.gate, ""),
        )
        for acceptance in entry.acceptances:
            form = None
            if _may_withdraw(acceptance, user, held):
                if bound_withdraw is not None and bound_withdraw[0] == acceptance.pk:
                    form, placed = bound_withdraw[1], True
                else:
                    form = AcceptanceWithdrawForm(auto_id=f"id_w{acceptance.pk}_%s")
            row.acceptances.append(AcceptanceRow(acceptance, form))
        roles = _acceptable_roles(entry, user, held)
        if roles:
            code, offer_id, key = entry.finding.identity
            if bound_accept is not None and _identity_of(bound_accept) == entry.finding.identity:
                bound_accept.offer_roles(roles)
                row.accept_form, placed = bound_accept, True
            else:
                row.accept_form = FindingAcceptForm(
                    roles=roles,
                    document=entry.rule.document,
                    auto_id=f"id_f{n}_%s",
                    initial={
                        "code": code,
                        "offer": offer_id,
                        "key": key,
                        "role": roles[0],
                        "expires_on": expires.isoformat(),
                    },
                )
        rows.setdefault(entry.finding.offer_id, []).append(row)
    groups = []
    if None in rows:
        groups.append(OfferGroup(_("The whole case"), rows.pop(None)))
    for pk, offer in offers.items():
        if pk in rows:
            groups.append(OfferGroup(str(offer), rows.pop(pk)))
    return groups, placed


def _identity_of(form: FindingAcceptForm) -> tuple:
    data = form.cleaned_data if form.is_bound and hasattr(form, "cleaned_data") else {}
    return (data.get("code"), data.get("offer"), data.get("key") or "")


# ``?open=<severity>``: only the open findings of that weight raised by the areas' rules,
# the ones the portfolio counts across cases (a gate's own finding is on the approval page).
OPEN_FILTERS = (Severity.BLOCKS, Severity.NEEDS_ACCEPTANCE)


def open_area_finding(entry: Entry, severity: str) -> bool:
    return entry.blocking and entry.rule.severity == severity and entry.rule.code in AREA_RULES


def _only(groups: list[OfferGroup], severity: str) -> list[OfferGroup]:
    kept = [
        OfferGroup(
            group.title, [row for row in group.rows if open_area_finding(row.entry, severity)]
        )
        for group in groups
    ]
    return [group for group in kept if group.rows]


def _page(
    request: HttpRequest,
    case: ProcurementCase,
    *,
    problems: list[str] | None = None,
    status: int = 200,
    **bound,
) -> HttpResponse:
    groups, placed = _groups(request, case, **bound)
    entries = [row.entry for group in groups for row in group.rows]
    only = request.GET.get("open", "")
    only = only if only in OPEN_FILTERS else ""
    if only:
        groups = _only(groups, only)
    return render(
        request,
        "approvals/case_findings.html",
        {
            "case": case,
            "groups": groups,
            "only": str(SEVERITY_LABELS[Severity(only)]).lower() if only else "",
            "open_count": sum(1 for entry in entries if entry.blocking),
            # Shown at the top only where the form sent is no longer on the page.
            "problems": [] if placed else problems or [],
        },
        status=status,
    )


def _messages_of(form: forms.Form) -> list[str]:
    return [str(message) for errors in form.errors.values() for message in errors]


@role_required("approvals.view_findingacceptance")
def case_findings(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk, offer_count=False)
    return _page(request, case)


@refused_unread(DOCUMENT_POLICY.check())  # before the CSRF check reads the body
@role_required("approvals.add_findingacceptance")
@second_factor_for_writes
def case_finding_accept(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk, offer_count=False)
    if request.method != "POST":
        return redirect("approvals:findings", pk=case.pk)
    form = FindingAcceptForm(request.POST, request.FILES, roles=sorted(actor_roles(request.user)))
    if form.is_valid():
        data = form.cleaned_data
        try:
            finding_accept(
                actor=request.user,
                case=case,
                code=data["code"],
                offer_id=data["offer"],
                key=data["key"] or "",
                role=data["role"],
                reason=data["reason"],
                expires_on=data["expires_on"],
                evidence=data.get("evidence"),
            )
        except ValidationError as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Finding accepted."))
            anchor = _anchor(data["code"], data["offer"], data["key"] or "")
            return redirect(reverse("approvals:findings", args=[case.pk]) + f"#{anchor}")
    return _page(request, case, problems=_messages_of(form), bound_accept=form)


@role_required("approvals.change_findingacceptance")
@second_factor_for_writes
def case_acceptance_withdraw(request: HttpRequest, pk: int, acceptance_pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk, offer_count=False)
    acceptance = get_object_or_404(
        finding_acceptance_list_for(request.user).filter(case=case), pk=acceptance_pk
    )
    if request.method != "POST":
        return redirect("approvals:findings", pk=case.pk)
    form = AcceptanceWithdrawForm(request.POST, auto_id=f"id_w{acceptance.pk}_%s")
    status = 200
    if form.is_valid():
        try:
            finding_acceptance_withdraw(
                actor=request.user, acceptance=acceptance, reason=form.cleaned_data["reason"]
            )
        except ValidationError as error:
            apply_service_errors(form, error)
            status = 409 if isinstance(error, StateConflict) else 200
        else:
            messages.success(request, _("Acceptance withdrawn: the finding is open again."))
            anchor = _anchor(acceptance.code, acceptance.offer_id, acceptance.finding_key)
            return redirect(reverse("approvals:findings", args=[case.pk]) + f"#{anchor}")
    return _page(
        request,
        case,
        problems=_messages_of(form),
        status=status,
        bound_withdraw=(acceptance.pk, form),
    )


@role_required("approvals.view_findingacceptance")
def case_acceptance_document(
    request: HttpRequest, pk: int, acceptance_pk: int
) -> HttpResponse | FileResponse:
    case = case_get_for(request.user, pk, offer_count=False)
    acceptance = get_object_or_404(
        finding_acceptance_list_for(request.user).filter(case=case), pk=acceptance_pk
    )
    if not acceptance.evidence_storage_name:
        raise Http404(_("This acceptance has no document."))
    return stored_file_response(request, acceptance_document(acceptance))
