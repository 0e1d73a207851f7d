"""Browser pages for vendors."""

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.utils.translation import gettext as _

from apps.core.access import MissingPermission, role_required
from apps.core.downloads import changed_message
from apps.core.forms import apply_service_errors
from apps.core.links import return_to
from apps.core.lists import filtered_page
from apps.core.services import ConcurrentEditError
from apps.vendors import services
from apps.vendors.filters import VendorListFilter
from apps.vendors.forms import (
    CertificationEditForm,
    CertificationForm,
    ContactEditForm,
    ContactForm,
    StewardshipForm,
    SubProcessorEditForm,
    SubProcessorForm,
    VendorEditForm,
    VendorForm,
)
from apps.vendors.models import Vendor
from apps.vendors.selectors import (
    ReportChanged,
    certification_get_for,
    certification_report_bytes,
    contact_get_for,
    sub_processor_get_for,
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


# --- the vendor's master data: stewardship, contacts, sub-processors, certifications -----


Write = Callable[[dict[str, Any], str, int | None], object]


def _master_form_page(
    request: HttpRequest, *, form: forms.BaseForm, vendor: Vendor, title: str, status: int = 200
) -> HttpResponse:
    return render(
        request,
        "vendors/master_form.html",
        {"form": form, "title": title, "vendor": vendor},
        status=status,
    )


def _saved(request: HttpRequest, vendor: Vendor, message: str, anchor: str) -> HttpResponse:
    messages.success(request, message)
    return redirect(reverse("vendors:detail", args=[vendor.pk]) + anchor)


def _edit(request: HttpRequest, form: Any, write: Write) -> bool:
    """Run ``write(data, reason, version)`` for a valid form; False when refused (the
    form then carries why, a stale version among them)."""
    if request.method != "POST" or not form.is_valid():
        return False
    data, reason, version = form.edit_parts()
    try:
        write(data, reason, version)
    except (ValidationError, ConcurrentEditError, PermissionDenied) as error:
        if isinstance(error, PermissionDenied):
            form.add_error(None, str(error))
        else:
            apply_service_errors(form, error)
        # Someone saved in between: the form is answered as a conflict, nothing written.
        form.stale = isinstance(error, ConcurrentEditError)
        return False
    return True


def _refused_status(request: HttpRequest, form: forms.BaseForm) -> int:
    return 409 if getattr(form, "stale", False) else 200


@role_required("vendors.view_vendor")
def vendor_stewardship(request: HttpRequest, pk: int) -> HttpResponse:
    """The owner, the review cycle (procurement) and the tier set by hand, with why
    (procurement or legal)."""
    can_override = request.user.has_perm("vendors.override_vendor_tier")
    can_steward = request.user.has_perm("vendors.change_vendor")
    if not (can_override or can_steward):
        raise MissingPermission("vendors.override_vendor_tier")
    vendor = vendor_get_for(request.user, pk)
    form = StewardshipForm(
        request.POST or None,
        instance=vendor,
        initial={"version": vendor.version},
        can_override=can_override,
        can_steward=can_steward,
    )

    def write(data: dict[str, Any], reason: str, version: int | None) -> object:
        return services.vendor_stewardship_save(
            actor=request.user, vendor=vendor, fields=data, reason=reason, expected_version=version
        )

    if _edit(request, form, write):
        return _saved(request, vendor, _("Vendor saved."), "#stewardship")
    return _master_form_page(
        request,
        form=form,
        vendor=vendor,
        title=_("Owner, tier and review cycle"),
        status=_refused_status(request, form),
    )


@role_required("vendors.add_vendorcontact")
def contact_create(request: HttpRequest, pk: int) -> HttpResponse:
    vendor = vendor_get_for(request.user, pk)
    form = ContactForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.contact_create(actor=request.user, vendor=vendor, **form.cleaned_data)
        except ValidationError as error:
            apply_service_errors(form, error)
        else:
            return _saved(request, vendor, _("Contact added."), "#contacts")
    return _master_form_page(request, form=form, vendor=vendor, title=_("New contact"))


@role_required("vendors.change_vendorcontact")
def contact_edit(request: HttpRequest, pk: int) -> HttpResponse:
    contact = contact_get_for(request.user, pk)
    form = ContactEditForm(
        request.POST or None, instance=contact, initial={"version": contact.version}
    )

    def write(data: dict[str, Any], reason: str, version: int | None) -> object:
        return services.contact_update(
            actor=request.user,
            contact=contact,
            fields=data,
            reason=reason,
            expected_version=version,
        )

    if _edit(request, form, write):
        return _saved(request, contact.vendor, _("Contact saved."), "#contacts")
    return _master_form_page(
        request,
        form=form,
        vendor=contact.vendor,
        title=_("Edit contact"),
        status=_refused_status(request, form),
    )


@role_required("vendors.add_subprocessor")
def sub_processor_create(request: HttpRequest, pk: int) -> HttpResponse:
    vendor = vendor_get_for(request.user, pk)
    form = SubProcessorForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.sub_processor_create(actor=request.user, vendor=vendor, **form.cleaned_data)
        except ValidationError as error:
            apply_service_errors(form, error)
        else:
            return _saved(request, vendor, _("Sub-processor added."), "#sub-processors")
    return _master_form_page(request, form=form, vendor=vendor, title=_("New sub-processor"))


@role_required("vendors.change_subprocessor")
def sub_processor_edit(request: HttpRequest, pk: int) -> HttpResponse:
    item = sub_processor_get_for(request.user, pk)
    form = SubProcessorEditForm(
        request.POST or None, instance=item, initial={"version": item.version}
    )

    def write(data: dict[str, Any], reason: str, version: int | None) -> object:
        return services.sub_processor_update(
            actor=request.user,
            sub_processor=item,
            fields=data,
            reason=reason,
            expected_version=version,
        )

    if _edit(request, form, write):
        return _saved(request, item.vendor, _("Sub-processor saved."), "#sub-processors")
    return _master_form_page(
        request,
        form=form,
        vendor=item.vendor,
        title=_("Edit sub-processor"),
        status=_refused_status(request, form),
    )


@role_required("vendors.add_certification")
def certification_create(request: HttpRequest, pk: int) -> HttpResponse:
    vendor = vendor_get_for(request.user, pk)
    form = CertificationForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        fields = dict(form.cleaned_data)
        report = fields.pop("report", None)
        try:
            services.certification_create(
                actor=request.user, vendor=vendor, report=report, **fields
            )
        except ValidationError as error:
            apply_service_errors(form, error)
        else:
            return _saved(request, vendor, _("Certification added."), "#certifications")
    return _master_form_page(request, form=form, vendor=vendor, title=_("New certification"))


@role_required("vendors.change_certification")
def certification_edit(request: HttpRequest, pk: int) -> HttpResponse:
    cert = certification_get_for(request.user, pk)
    form = CertificationEditForm(
        request.POST or None, instance=cert, initial={"version": cert.version}
    )

    def write(data: dict[str, Any], reason: str, version: int | None) -> object:
        return services.certification_update(
            actor=request.user,
            certification=cert,
            fields=data,
            reason=reason,
            expected_version=version,
        )

    if _edit(request, form, write):
        return _saved(request, cert.vendor, _("Certification saved."), "#certifications")
    return _master_form_page(
        request,
        form=form,
        vendor=cert.vendor,
        title=_("Edit certification"),
        status=_refused_status(request, form),
    )


@role_required("vendors.view_certification")
def certification_report(request: HttpRequest, pk: int) -> HttpResponseBase:
    """The stored report, sent only while its bytes still hash to the recorded SHA-256."""
    cert = certification_get_for(request.user, pk)
    try:
        raw = certification_report_bytes(cert)
    except ReportChanged:
        return render(
            request,
            "vendors/report_changed.html",
            {"vendor": cert.vendor, "certification": cert, "message": changed_message()},
            status=409,
        )
    response = HttpResponse(raw, content_type="application/pdf")
    response["Content-Disposition"] = content_disposition_header(True, cert.report_name)
    response["X-Content-SHA256"] = cert.report_sha256
    return response
