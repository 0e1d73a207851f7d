"""Browser pages for offers: adding and editing one (an offer in full and its declared spec
beside its provenance are in the whole-case layer: apps/casework)."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from apps.cases.selectors import case_get_for
from apps.core.access import role_required
from apps.core.forms import apply_service_errors
from apps.core.services import ConcurrentEditError
from apps.offers import services
from apps.offers.forms import OfferEditForm, OfferForm
from apps.offers.selectors import offer_get_for


@role_required("offers.add_offer")
def offer_create(request: HttpRequest, case_pk: int) -> HttpResponse:
    case = case_get_for(request.user, case_pk)
    # A vendor just added from this form comes back chosen (``?vendor=``).
    form = OfferForm(request.POST or None, initial={"vendor": request.GET.get("vendor")})
    if request.method == "POST" and form.is_valid():
        try:
            offer = services.offer_create(actor=request.user, case=case, **form.cleaned_data)
        except ValidationError as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Offer added. Next: the vendor's declared spec."))
            return redirect("offers:detail", pk=offer.pk)
    return render(
        request, "offers/offer_form.html", {"form": form, "case": case, "title": _("New offer")}
    )


@role_required("offers.change_offer")
def offer_edit(request: HttpRequest, pk: int) -> HttpResponse:
    offer = offer_get_for(request.user, pk)
    form = OfferEditForm(request.POST or None, instance=offer, initial={"version": offer.version})
    if request.method == "POST" and form.is_valid():
        data, reason, version = form.edit_parts()
        try:
            services.offer_update(
                actor=request.user,
                offer=offer,
                fields=data,
                reason=reason,
                expected_version=version,
            )
        except (ValidationError, ConcurrentEditError) as error:
            apply_service_errors(form, error)
        else:
            messages.success(request, _("Offer saved."))
            return redirect("offers:detail", pk=offer.pk)
    return render(
        request,
        "offers/offer_form.html",
        {"form": form, "case": offer.case, "offer": offer, "title": _("Edit offer")},
    )
