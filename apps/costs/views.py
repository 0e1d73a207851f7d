"""Browser pages: a case's costs (budget, import, periods, reconciliation, chart)."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_get_for
from apps.core.access import role_required
from apps.core.forms import apply_service_errors
from apps.core.services import ConcurrentEditError
from apps.core.uploads import declared_over, refused_unread
from apps.costs import services
from apps.costs.bill_rows import MAX_FILE_BYTES, BillFileRefused
from apps.costs.forms import BudgetForm, DailySpendImportForm, ImportForm
from apps.costs.models import CostImport
from apps.costs.selectors import cost_view


def _page(
    request: HttpRequest,
    case: ProcurementCase,
    *,
    budget_form: BudgetForm | None = None,
    import_form: ImportForm | None = None,
    daily_form: DailySpendImportForm | None = None,
    status: int = 200,
) -> HttpResponse:
    view = cost_view(case, with_unit_costs=True)
    user = request.user
    if budget_form is None and user.has_perm("costs.change_budget"):
        budget_form = BudgetForm(
            instance=view.budget,
            initial={"version": view.budget.version if view.budget else None},
            case=case,
            creating=view.budget is None,
        )
    if import_form is None and user.has_perm("costs.add_costimport"):
        import_form = ImportForm()
    if daily_form is None and user.has_perm("costs.add_costimport"):
        daily_form = DailySpendImportForm()
    return render(
        request,
        "costs/case_costs.html",
        {
            "case": case,
            "view": view,
            "budget_form": budget_form,
            "import_form": import_form,
            "daily_form": daily_form,
        },
        status=status,
    )


@role_required("costs.view_budget")
def case_costs(request: HttpRequest, pk: int) -> HttpResponse:
    return _page(request, case_get_for(request.user, pk))


@role_required("costs.change_budget")
@require_POST
def budget_submit(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    budget = getattr(case, "budget", None)
    form = BudgetForm(request.POST, instance=budget, case=case, creating=budget is None)
    status = 400
    if form.is_valid():
        fields, reason, version = form.service_fields()
        try:
            services.budget_save(
                actor=request.user,
                case=case,
                fields=fields,
                reason=reason,
                expected_version=version if budget else None,
            )
        except ConcurrentEditError as error:
            apply_service_errors(form, error)
            status = 409
        except (ValidationError, PermissionDenied) as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Budget saved."))
            return redirect("costs:case", pk=case.pk)
    return _page(request, case, budget_form=form, status=status)


@refused_unread(declared_over(lambda: MAX_FILE_BYTES))  # before the CSRF check reads it
@role_required("costs.add_costimport")
@require_POST
def import_submit(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    form = ImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, case, import_form=form, status=400)
    upload = form.cleaned_data["file"]
    # Checked before a byte is read: the upload handler gives the size.
    if upload.size > MAX_FILE_BYTES:
        form.add_error(
            "file",
            _("The file is %(size)s KiB; at most %(limit)s KiB are taken.")
            % {"size": upload.size // 1024, "limit": MAX_FILE_BYTES // 1024},
        )
        return _page(request, case, import_form=form, status=413)
    try:
        cost_import = services.cost_import_create(
            actor=request.user,
            case=case,
            raw=upload.read(),
            file_name=upload.name,
            source=CostImport.Source.UPLOAD,
            replace=form.cleaned_data["replace"],
            note=form.cleaned_data["note"],
        )
    except BillFileRefused as refusal:
        for problem in refusal.problems:
            form.add_error("file", str(problem))
        return _page(request, case, import_form=form, status=400)
    messages.success(
        request,
        _("Imported %(n)s month(s) from %(name)s (SHA-256 %(sha)s…).")
        % {
            "n": cost_import.row_count,
            "name": cost_import.file_name,
            "sha": cost_import.sha256[:12],
        },
    )
    return redirect("costs:case", pk=case.pk)


@refused_unread(declared_over(lambda: MAX_FILE_BYTES))  # before the CSRF check reads it
@role_required("costs.add_costimport")
@require_POST
def daily_import_submit(request: HttpRequest, pk: int) -> HttpResponse:
    case = case_get_for(request.user, pk)
    form = DailySpendImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, case, daily_form=form, status=400)
    upload = form.cleaned_data["file"]
    if upload.size > MAX_FILE_BYTES:
        form.add_error(
            "file",
            _("The file is %(size)s KiB; at most %(limit)s KiB are taken.")
            % {"size": upload.size // 1024, "limit": MAX_FILE_BYTES // 1024},
        )
        return _page(request, case, daily_form=form, status=413)
    try:
        cost_import = services.spend_import_create(
            actor=request.user,
            case=case,
            raw=upload.read(),
            file_name=upload.name,
            source=CostImport.Source.UPLOAD,
            note=form.cleaned_data["note"],
        )
    except BillFileRefused as refusal:
        for problem in refusal.problems:
            form.add_error("file", str(problem))
        return _page(request, case, daily_form=form, status=400)
    messages.success(
        request,
        _("Imported %(n)s charge(s) of daily spend from %(name)s (SHA-256 %(sha)s…).")
        % {
            "n": cost_import.row_count,
            "name": cost_import.file_name,
            "sha": cost_import.sha256[:12],
        },
    )
    return redirect("costs:case", pk=case.pk)
