from django.contrib import admin

from apps.core.admin import TrackedAdmin
from apps.offers import services
from apps.offers.models import DeclaredSpec, Offer


@admin.register(Offer)
class OfferAdmin(TrackedAdmin):
    list_display = ["case", "vendor", "accelerator_model", "accelerator_count", "billing_basis"]
    list_select_related = ["case", "vendor"]
    list_filter = ["billing_basis"]
    editable_fields = services.OFFER_FIELDS

    def update(self, request, obj, *, fields, reason, version):
        return services.offer_update(
            actor=request.user, offer=obj, fields=fields, reason=reason, expected_version=version
        )


@admin.register(DeclaredSpec)
class DeclaredSpecAdmin(TrackedAdmin):
    list_display = ["offer", "memory_per_card_gib", "driver_version", "cuda_version"]
    list_select_related = ["offer__vendor", "offer__case"]
    editable_fields = services.SPEC_FIELDS

    def update(self, request, obj, *, fields, reason, version):
        return services.declared_spec_update(
            actor=request.user, spec=obj, fields=fields, reason=reason, expected_version=version
        )
