"""Browser pages: edit a checklist, waive a red flag, compare offers, publish templates."""

import re
from collections.abc import Callable, Sequence
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.cases.selectors import case_get_for
from apps.contracts import services, spreadsheet, terms
from apps.contracts.documents import DOCUMENT_POLICY
from apps.contracts.filters import TemplateListFilter
from apps.contracts.forms import (
    ChecklistItemFormSet,
    ChecklistSaveForm,
    ClauseLinkForm,
    ContractDatesForm,
    ContractDocumentForm,
    ContractTermsForm,
    TemplateItemFormSet,
    TemplatePublishForm,
    WaiverConfirmForm,
    WaiverForm,
    WaiverWithdrawForm,
)
from apps.contracts.models import (
    ChecklistTemplate,
    ClauseChecklist,
    ContractTerms,
    RedFlagWaiver,
)
from apps.contracts.rules import waive_error
from apps.contracts.selectors import (
    ItemRow,
    OfferTerms,
    TermsTable,
    case_checklist_comparison,
    case_contract_terms,
    checklist_item_get_for,
    document_get_for,
    document_groups,
    document_stored_file,
    item_row,
    item_state,
    offer_checklist,
    offer_documents,
    offer_terms,
    template_latest,
    templates_with_items,
    terms_values,
    today,
    waiver_get_for,
    waiver_stored_file,
)
from apps.core.access import role_required
from apps.core.downloads import stored_file_response
from apps.core.forms import apply_service_errors
from apps.core.lists import filtered_page
from apps.core.second_factor import second_factor_for_writes
from apps.core.services import SERVICE_ERRORS, ConcurrentEditError
from apps.core.spreadsheets import (
    UPLOAD_POLICY,
    SpreadsheetImportForm,
    run_import,
    xlsx_response,
)
from apps.core.uploads import refused_unread
from apps.offers.models import Offer
from apps.offers.selectors import offer_get_for

ROW_ERROR = re.compile(r"^items\[(\d+)\]\.(\w+)$")


@role_required("contracts.add_clausechecklist")
@require_POST
def checklist_create(request: HttpRequest, offer_pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, offer_pk)
    try:
        services.checklist_create(actor=request.user, offer=offer)
    except ValidationError as error:
        messages.error(request, "; ".join(error.messages))
        return redirect("offers:detail", pk=offer.pk)
    messages.success(request, _("Clause checklist started. Review each item below."))
    return redirect("contracts:checklist", offer_pk=offer.pk)


@role_required("contracts.change_clausechecklist")
def checklist_edit(request: HttpRequest, offer_pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, offer_pk)
    return _checklist_page(request, offer)


def _checklist_page(
    request: HttpRequest,
    offer: Offer,
    import_form: SpreadsheetImportForm | None = None,
    status: int = 200,
) -> HttpResponse:
    """The checklist form; after a refused import, unbound, with the import's errors."""
    posted = request.POST if request.method == "POST" and import_form is None else None
    state = offer_checklist(offer)
    if state.checklist is None:
        messages.error(request, _("This offer has no clause checklist yet: start one first."))
        return redirect("offers:detail", pk=offer.pk)
    initial = [
        {
            "item_id": row.item.pk,
            "status": row.item.status,
            "clause_reference": row.item.clause_reference,
            "excerpt": row.item.excerpt,
            "note": row.item.note,
        }
        for row in state.rows
    ]
    formset = ChecklistItemFormSet(posted, initial=initial, prefix="items")
    save_form = ChecklistSaveForm(posted, initial={"version": state.checklist.version})
    saved_terms = offer_terms(offer, state.checklist)
    terms_form = ContractTermsForm(
        posted, initial=vars(terms_values(saved_terms.record)), prefix="terms"
    )
    one_item = _posted_item(posted)
    if one_item is not None:
        saved = _save_one_item(request, state.checklist, formset, save_form, one_item)
        if saved is not None:
            # The other rows keep what the reader typed, unsaved, at the checklist's new
            # version: the page shows them as entries, not as refusals.
            formset, save_form, terms_form = _entries_kept(
                formset, save_form, terms_form, version=saved.version
            )
    elif posted is not None and _both_valid(formset, save_form, terms_form):
        try:
            services.checklist_save(
                actor=request.user,
                checklist=state.checklist,
                items=[form.row() for form in formset.forms],
                reason=save_form.cleaned_data["change_reason"],
                expected_version=save_form.cleaned_data.get("version"),
                contract_terms=terms_form.cleaned_data,
            )
        except SERVICE_ERRORS as error:
            _apply_row_errors(formset.forms, save_form, error, terms_form=terms_form)
        else:
            messages.success(request, _("Clause checklist saved."))
            return redirect("offers:detail", pk=offer.pk)
    by_id = {row.item.pk: row for row in state.rows}
    keys = {row.item.key for row in state.rows}
    pairs = []
    for form in formset.forms:
        item_id = _posted_id(form)
        row = by_id.get(item_id) if item_id is not None else None
        beside = [
            terms_form[t.name]
            for t in terms.TERMS
            if row is not None and t.item_key == row.item.key
        ]
        pairs.append((form, row, beside, _findings(saved_terms, row)))
    # Terms whose clause this checklist's template lacks are edited after the table.
    unplaced = [terms_form[t.name] for t in terms.TERMS if t.item_key not in keys]
    unplaced_findings = [
        f for line in saved_terms.lines if line.term.item_key not in keys for f in line.findings
    ]
    return render(
        request,
        "contracts/checklist_form.html",
        {
            "offer": offer,
            "case": offer.case,
            "state": state,
            "formset": formset,
            "save_form": save_form,
            "pairs": pairs,
            "terms_form": terms_form,
            "unplaced_terms": unplaced,
            "unplaced_findings": unplaced_findings,
            "saved_terms": saved_terms,
            "import_form": import_form or SpreadsheetImportForm(),
        },
        status=status,
    )


@role_required("contracts.view_clausechecklist")
def checklist_workbook_download(request: HttpRequest, offer_pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, offer_pk)
    checklist = ClauseChecklist.objects.filter(offer=offer).select_related("offer__vendor").first()
    if checklist is None:
        raise Http404(_("This offer has no clause checklist yet."))
    content, filename = spreadsheet.checklist_workbook(checklist)
    return xlsx_response(content, filename)


@refused_unread(UPLOAD_POLICY.check())  # before the CSRF check reads the body
@role_required("contracts.change_clausechecklist")
def checklist_import(request: HttpRequest, offer_pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, offer_pk)
    checklist = ClauseChecklist.objects.filter(offer=offer).first()
    if request.method != "POST" or checklist is None:
        return redirect("contracts:checklist", offer_pk=offer.pk)
    form = SpreadsheetImportForm(request.POST, request.FILES)
    _result, status = run_import(
        form,
        lambda upload: spreadsheet.checklist_import(
            actor=request.user, checklist=checklist, upload=upload
        ),
    )
    if status is None:
        messages.success(request, _("Clause checklist imported from the spreadsheet."))
        return redirect("offers:detail", pk=offer.pk)
    return _checklist_page(request, offer, import_form=form, status=status)


def _both_valid(*forms: Any) -> bool:
    return all([form.is_valid() for form in forms])  # list: validate every form, show all errors


def _posted_id(form: forms.BaseForm) -> int | None:
    try:
        return int(form["item_id"].value())
    except (TypeError, ValueError):
        return None


def _findings(saved_terms: OfferTerms, row: ItemRow | None) -> list:
    """The checks of the terms that stand beside ``row``'s clause."""
    if row is None:
        return []
    return [f for line in saved_terms.lines_for(row.item.key) for f in line.findings]


def _posted_item(posted: QueryDict | None) -> int | None:
    """The item whose own "Save this item" button was pressed, if one was."""
    if posted is None:
        return None
    try:
        return int(posted.get("save_item", ""))
    except ValueError:
        return None


def _save_one_item(
    request: HttpRequest,
    checklist: ClauseChecklist,
    formset: forms.BaseFormSet,
    save_form: ChecklistSaveForm,
    item_pk: int,
) -> ClauseChecklist | None:
    """Save one row of the checklist on its own, a draft of the whole; the checklist
    after it, or None with the row's (or the save's) errors on the forms."""
    row_form = next((form for form in formset.forms if _posted_id(form) == item_pk), None)
    if row_form is None:
        save_form.add_error(None, _("This item is not on the checklist."))
        return None
    save_form.fields["change_reason"].required = False
    if not (row_form.is_valid() and save_form.is_valid()):
        return None
    reason = save_form.cleaned_data["change_reason"].strip()
    try:
        saved = services.checklist_save(
            actor=request.user,
            checklist=checklist,
            items=[row_form.row()],
            reason=reason or "Saved item by item",
            expected_version=save_form.cleaned_data.get("version"),
        )
    except SERVICE_ERRORS as error:
        _apply_row_errors([row_form], save_form, error)
        return None
    messages.success(request, _("Item saved. The other rows are kept as you typed them, unsaved."))
    return saved


def _entries_kept(
    formset: forms.BaseFormSet,
    save_form: ChecklistSaveForm,
    terms_form: ContractTermsForm,
    *,
    version: int,
) -> tuple[forms.BaseFormSet, ChecklistSaveForm, ContractTermsForm]:
    """Unbound forms holding what the reader typed in every row (saved or not)."""
    rows = [{name: form[name].value() for name in form.fields} for form in formset.forms]
    kept_formset = ChecklistItemFormSet(initial=rows, prefix="items")
    kept_save = ChecklistSaveForm(
        initial={"version": version, "change_reason": save_form["change_reason"].value()}
    )
    kept_terms = ContractTermsForm(
        initial={name: terms_form[name].value() for name in terms_form.fields}, prefix="terms"
    )
    return kept_formset, kept_save, kept_terms


def _apply_row_errors(
    row_forms: Sequence[forms.BaseForm],
    main_form: forms.BaseForm,
    error: Exception,
    *,
    terms_form: forms.BaseForm | None = None,
) -> None:
    """Put ``items[<row>].<field>`` and ``terms.<name>`` errors next to their field; the rest
    on the main form."""
    if not (isinstance(error, ValidationError) and hasattr(error, "error_dict")):
        apply_service_errors(main_form, error)
        return
    rest = {}
    for key, messages_ in error.message_dict.items():
        match = ROW_ERROR.match(key)
        name = key.removeprefix("terms.")
        if terms_form is not None and key.startswith("terms.") and name in terms_form.fields:
            for message in messages_:
                terms_form.add_error(name, message)
        elif match and int(match[1]) < len(row_forms):
            form, field = row_forms[int(match[1])], match[2]
            for message in messages_:
                form.add_error(field if field in form.fields else None, message)
        else:
            rest[key] = messages_
    if rest:
        apply_service_errors(main_form, ValidationError(rest))
    if not main_form.errors:
        main_form.add_error(None, _("Nothing was saved: correct the marked fields."))


@refused_unread(services.EVIDENCE_POLICY.check())  # before the CSRF check reads it
@role_required("contracts.add_redflagwaiver")
@second_factor_for_writes
def item_waive(request: HttpRequest, pk: int) -> HttpResponse:
    item = checklist_item_get_for(request.user, pk)
    offer = offer_get_for(request.user, item.checklist.offer_id)
    waivers = list(item.waivers.all())
    form = WaiverForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.red_flag_waive(
                actor=request.user,
                item=item,
                reason=form.cleaned_data["reason"],
                expires_on=form.cleaned_data.get("expires_on"),
                evidence=form.cleaned_data.get("evidence"),
            )
        except (ValidationError, PermissionDenied) as error:
            _apply_waive_errors(form, error)
        else:
            messages.success(request, _("Red flag waived."))
            return redirect("offers:detail", pk=offer.pk)
    row, _state = item_row(item, waivers, on=today())
    return render(
        request,
        "contracts/waiver_form.html",
        {
            "offer": offer,
            "case": offer.case,
            "item": item,
            "row": row,
            "waivers": waivers,
            "form": form,
            "not_waivable": waive_error(item_state(item, waivers), today=today()),
        },
    )


def _waiver_page(
    request: HttpRequest,
    pk: int,
    form_class: type[forms.Form],
    action: Callable[[RedFlagWaiver, dict[str, Any]], object],
    template: str,
    done: str,
) -> HttpResponse:
    """The confirm and withdraw pages: one waiver, its item, a reason, the service."""
    waiver = waiver_get_for(request.user, pk)
    item = checklist_item_get_for(request.user, waiver.item_id)
    offer = offer_get_for(request.user, item.checklist.offer_id)
    form = form_class(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            action(waiver, form.cleaned_data)
        except (ValidationError, PermissionDenied) as error:
            apply_service_errors(form, _renamed(error, to=next(iter(form.fields))))
        else:
            messages.success(request, done)
            return redirect("offers:detail", pk=offer.pk)
    row, _state = item_row(item, list(item.waivers.all()), on=today())
    return render(
        request,
        template,
        {
            "offer": offer,
            "case": offer.case,
            "item": item,
            "row": row,
            "waiver": waiver,
            "form": form,
        },
    )


@role_required("contracts.confirm_redflagwaiver")
@second_factor_for_writes
def waiver_confirm(request: HttpRequest, pk: int) -> HttpResponse:
    return _waiver_page(
        request,
        pk,
        WaiverConfirmForm,
        lambda waiver, data: services.red_flag_waiver_confirm(
            actor=request.user, waiver=waiver, note=data["note"]
        ),
        "contracts/waiver_confirm.html",
        _("Waiver confirmed."),
    )


@role_required("contracts.withdraw_redflagwaiver")
@second_factor_for_writes
def waiver_withdraw(request: HttpRequest, pk: int) -> HttpResponse:
    return _waiver_page(
        request,
        pk,
        WaiverWithdrawForm,
        lambda waiver, data: services.red_flag_waiver_withdraw(
            actor=request.user, waiver=waiver, reason=data["reason"]
        ),
        "contracts/waiver_withdraw.html",
        _("Waiver withdrawn: the item is judged afresh."),
    )


@role_required("contracts.view_redflagwaiver")
def waiver_evidence(request: HttpRequest, pk: int) -> HttpResponse | FileResponse:
    waiver = waiver_get_for(request.user, pk)  # only a waiver of an offer the user may see
    if not waiver.evidence_storage_name:
        raise Http404(_("This waiver has no evidence file."))
    return stored_file_response(request, waiver_stored_file(waiver))


def _renamed(error: Exception, *, to: str) -> Exception:
    """A service's field errors on the one field of a confirm or withdraw form."""
    if not (isinstance(error, ValidationError) and hasattr(error, "error_dict")):
        return error
    return ValidationError({to: [m for values in error.message_dict.values() for m in values]})


def _apply_waive_errors(form: forms.BaseForm, error: Exception) -> None:

    if isinstance(error, ValidationError) and hasattr(error, "error_dict"):
        error = _rename(error)
    apply_service_errors(form, error)


def _rename(error: ValidationError) -> ValidationError:
    renamed: dict[str, list[str]] = {}
    for key, values in error.message_dict.items():
        if key in ("reason", "justification"):
            target = "reason"
        elif key in ("expires_on", "evidence"):
            target = key
        else:
            target = "__all__"
        renamed.setdefault(target, []).extend(values)
    return ValidationError(renamed)


@role_required("contracts.view_clausechecklist")
def comparison(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    offers, rows = case_checklist_comparison(case)
    return render(
        request,
        "contracts/comparison.html",
        {
            "case": case,
            "offers": offers,
            "rows": rows,
            "terms_table": TermsTable(case_contract_terms(case)),
        },
    )


@role_required("contracts.view_checklisttemplate")
def template_list(request: HttpRequest) -> HttpResponse:
    """Every published version, filtered and sorted as the URL says, newest first by default."""
    templates = templates_with_items().annotate(checklist_count=Count("checklists"))
    filters = TemplateListFilter(request.GET or None, queryset=templates)
    page = filtered_page(request, filters, default=("-number",), tiebreak="-pk")
    latest = ChecklistTemplate.objects.order_by("-number").values_list("number", flat=True)
    return render(
        request,
        "contracts/template_list.html",
        {"page": page, "filters": filters, "latest_number": latest.first()},
    )


@role_required("contracts.add_checklisttemplate")
def template_publish(request: HttpRequest) -> HttpResponse:
    latest = template_latest()
    initial = [
        {
            "key": item.key,
            "title": item.title,
            "sub_points": "\n".join(item.sub_points),
            "guidance": item.guidance,
            "required": item.required,
            "high_severity": bool(item.high_severity),
            "title_zh": item.title_zh or "",
            "sub_points_zh": "\n".join(item.sub_points_zh or []),
            "guidance_zh": item.guidance_zh or "",
        }
        for item in (latest.items.all() if latest else [])
    ]
    formset = TemplateItemFormSet(request.POST or None, initial=initial, prefix="items")
    note_form = TemplatePublishForm(request.POST or None)
    if request.method == "POST" and _both_valid(formset, note_form):
        # Blank extra rows have empty cleaned_data; ticked rows are removed.
        kept = [f for f in formset.forms if f.cleaned_data and not f.cleaned_data.get("DELETE")]
        try:
            template = services.checklist_template_publish(
                actor=request.user,
                items=[f.item() for f in kept],
                note=note_form.cleaned_data["note"],
            )
        except (ValidationError, PermissionDenied) as error:
            _apply_row_errors(kept, note_form, error)
        else:
            messages.success(
                request,
                _("Template version %(n)s published. New checklists use it.")
                % {"n": template.number},
            )
            return redirect("contracts:templates")
    return render(
        request,
        "contracts/template_form.html",
        {"formset": formset, "note_form": note_form, "latest": latest},
    )


# --- signed contract documents, clause links and the contract's dates -------------------


@role_required("contracts.view_contractdocument")
def documents(request: HttpRequest, offer_pk: int) -> HttpResponse:
    """Every version of the offer's signed contract documents, and the contract's dates."""
    offer = offer_get_for(request.user, offer_pk)
    checklist = ClauseChecklist.objects.filter(offer=offer).select_related("terms").first()
    saved_terms = offer_terms(offer, checklist)
    return render(
        request,
        "contracts/documents.html",
        {
            "offer": offer,
            "case": offer.case,
            "groups": document_groups(offer_documents(offer)),
            "checklist": checklist,
            "dates": saved_terms.dates,
            "date_findings": [f for f in saved_terms.findings if f.term in terms.DATE_NAMES],
        },
    )


@refused_unread(DOCUMENT_POLICY.check())  # before the CSRF check reads the body
@role_required("contracts.add_contractdocument")
def document_upload(request: HttpRequest, offer_pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, offer_pk)
    form = ContractDocumentForm(request.POST or None, request.FILES or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                document = services.contract_document_upload(
                    actor=request.user,
                    offer=offer,
                    kind=form.cleaned_data["kind"],
                    upload=form.cleaned_data["file"],
                )
            except SERVICE_ERRORS as error:
                apply_service_errors(form, error)
            else:
                messages.success(request, _("%(doc)s stored.") % {"doc": document})
                return redirect("contracts:documents", offer_pk=offer.pk)
        status = 400
    return render(
        request,
        "contracts/document_upload.html",
        {"offer": offer, "case": offer.case, "form": form},
        status=status,
    )


@role_required("contracts.view_contractdocument")
def document_download(request: HttpRequest, pk: int) -> HttpResponse | FileResponse:
    document = document_get_for(request.user, pk)  # only of an offer the user may see
    # Shown in the browser, so a link to ``#page=N`` opens at the clause.
    return stored_file_response(
        request, document_stored_file(document), as_attachment=not document.is_pdf
    )


@role_required("contracts.change_checklistitem")
def item_link(request: HttpRequest, pk: int) -> HttpResponse:
    item = checklist_item_get_for(request.user, pk)
    offer = offer_get_for(request.user, item.checklist.offer_id)
    choices = offer_documents(offer)
    initial = {
        "document": item.document_id,
        "page": item.document_page,
        "quote": item.document_quote or "",
        "version": item.version,
    }
    form = ClauseLinkForm(request.POST or None, initial=initial, documents=choices)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                services.checklist_item_link(
                    actor=request.user,
                    item=item,
                    document=form.cleaned_data["document"],
                    page=form.cleaned_data["page"],
                    quote=form.cleaned_data["quote"],
                    expected_version=form.cleaned_data.get("version"),
                )
            except SERVICE_ERRORS as error:
                apply_service_errors(form, error)
                status = 409 if isinstance(error, ConcurrentEditError) else 400
            else:
                messages.success(request, _("Clause linked to the signed document."))
                return redirect("contracts:checklist", offer_pk=offer.pk)
        else:
            status = 400
    return render(
        request,
        "contracts/item_link.html",
        {"offer": offer, "case": offer.case, "item": item, "form": form, "documents": choices},
        status=status,
    )


@role_required("contracts.change_contractterms")
def contract_dates(request: HttpRequest, offer_pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, offer_pk)
    checklist = ClauseChecklist.objects.filter(offer=offer).first()
    if checklist is None:
        messages.error(request, _("This offer has no clause checklist yet: start one first."))
        return redirect("offers:detail", pk=offer.pk)
    record = ContractTerms.objects.filter(checklist=checklist).first()
    initial = {name: getattr(record, name, None) for name in terms.DATE_NAMES}
    initial["version"] = record.version if record is not None else 0
    form = ContractDatesForm(request.POST or None, initial=initial)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            fields, reason, version = form.edit_parts()
            try:
                services.contract_dates_save(
                    actor=request.user,
                    checklist=checklist,
                    dates=fields,
                    reason=reason,
                    expected_version=version,
                )
            except SERVICE_ERRORS as error:
                apply_service_errors(form, error)
                status = 409 if isinstance(error, ConcurrentEditError) else 400
            else:
                messages.success(request, _("Contract dates saved."))
                return redirect("contracts:documents", offer_pk=offer.pk)
        else:
            status = 400
    return render(
        request,
        "contracts/contract_dates.html",
        {"offer": offer, "case": offer.case, "form": form},
        status=status,
    )
