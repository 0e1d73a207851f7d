"""Reads of vendors, with the access rule applied in one place."""

from django.db.models import Count, QuerySet
from django.shortcuts import get_object_or_404

from apps.vendors.models import Vendor


def vendor_list_for(actor) -> QuerySet[Vendor]:
    if not actor.has_perm("vendors.view_vendor"):
        return Vendor.objects.none()
    return Vendor.objects.all()


def vendor_get_for(actor, pk: int) -> Vendor:
    return get_object_or_404(vendor_list_for(actor), pk=pk)


def vendors_with_offer_counts(actor) -> QuerySet[Vendor]:
    return vendor_list_for(actor).annotate(offer_count=Count("offers")).order_by("name")
