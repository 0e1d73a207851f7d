"""Browser pages for vendors."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from apps.core.access import role_required
from apps.core.forms import apply_service_errors
from apps.core.links import return_to
from apps.core.lists import filtered_page
from apps.core.services import ConcurrentEditError
from apps.vendors import services
from apps.vendors.filters import VendorListFilter
from apps.vendors.forms import VendorEditForm, VendorForm
from apps.vendors.selectors import (
    vendor_get_for,
    vendors_with_offer_counts,
)


@role_required("vendors.view_vendor")
def vendor_list(request: HttpRequest) -> HttpResponse:
    """Vendors filtered and sorted as the URL says, by name by default."""
    filters = VendorListFilter(
        request.GET or None, queryset=vendors_with_offer_counts(request.user)
    )
    page = filtered_page(request, filters, default=("name",), tiebreak="pk")
    return render(request, "vendors/vendor_list.html", {"page": page, "filters": filters})


@role_required("vendors.add_vendor")
def vendor_create(request: HttpRequest) -> HttpResponse:
    form = VendorForm(request.POST or None)
    back = return_to(request)
    if request.method == "POST" and form.is_valid():
        try:
            vendor = services.vendor_create(actor=request.user, **form.cleaned_data)
        except ValidationError as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Vendor added."))
            if back:
                # Back to the offer being created, with the new vendor chosen.
                joiner = "&" if "?" in back else "?"
                return redirect(f"{back}{joiner}vendor={vendor.pk}")
            return redirect("vendors:detail", pk=vendor.pk)
    return render(
        request,
        "vendors/vendor_form.html",
        {"form": form, "title": _("New vendor"), "next": back},
    )


@role_required("vendors.change_vendor")
def vendor_edit(request: HttpRequest, pk: int) -> HttpResponse:
    vendor = vendor_get_for(request.user, pk)
    form = VendorEditForm(
        request.POST or None, instance=vendor, initial={"version": vendor.version}
    )
    if request.method == "POST" and form.is_valid():
        data, reason, version = form.edit_parts()
        try:
            services.vendor_update(
                actor=request.user,
                vendor=vendor,
                fields=data,
                reason=reason,
                expected_version=version,
            )
        except (ValidationError, ConcurrentEditError) as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Vendor saved."))
            return redirect("vendors:detail", pk=vendor.pk)
    return render(
        request,
        "vendors/vendor_form.html",
        {"form": form, "title": _("Edit vendor"), "vendor": vendor},
    )
