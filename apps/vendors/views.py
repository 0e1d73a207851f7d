"""Browser pages for vendors."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Count
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _

from apps.core.access import role_required
from apps.core.forms import apply_service_errors
from apps.core.services import ConcurrentEditError
from apps.vendors import services
from apps.vendors.forms import VendorEditForm, VendorForm
from apps.vendors.models import Vendor


@role_required("vendors.view_vendor")
def vendor_list(request):
    vendors = Vendor.objects.annotate(offer_count=Count("offers")).order_by("name")
    page = Paginator(vendors, 50).get_page(request.GET.get("page"))
    return render(request, "vendors/vendor_list.html", {"page": page})


@role_required("vendors.add_vendor")
def vendor_create(request):
    form = VendorForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.vendor_create(actor=request.user, **form.cleaned_data)
        except ValidationError as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Vendor added."))
            return redirect("vendors:list")
    return render(request, "vendors/vendor_form.html", {"form": form, "title": _("New vendor")})


@role_required("vendors.change_vendor")
def vendor_edit(request, pk: int):
    vendor = get_object_or_404(Vendor, pk=pk)
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
            return redirect("vendors:list")
    return render(request, "vendors/vendor_form.html", {"form": form, "title": _("Edit vendor")})
