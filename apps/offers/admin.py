from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from apps.offers.models import DeclaredSpec, Offer


@admin.register(Offer)
class OfferAdmin(SimpleHistoryAdmin):
    list_display = ["case", "vendor", "accelerator_model", "accelerator_count", "billing_basis"]
    list_select_related = ["case", "vendor"]
    list_filter = ["billing_basis"]


@admin.register(DeclaredSpec)
class DeclaredSpecAdmin(SimpleHistoryAdmin):
    list_display = ["offer", "memory_per_card_gib", "driver_version", "cuda_version"]
    list_select_related = ["offer__vendor", "offer__case"]
