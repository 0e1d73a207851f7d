from django.contrib import admin

from apps.core.admin import TrackedAdmin
from apps.vendors import services
from apps.vendors.models import Vendor


@admin.register(Vendor)
class VendorAdmin(TrackedAdmin):
    list_display = ["name", "jurisdiction", "regions"]
    search_fields = ["name"]
    editable_fields = services.EDITABLE_FIELDS

    def update(self, request, obj, *, fields, reason, version):
        return services.vendor_update(
            actor=request.user, vendor=obj, fields=fields, reason=reason, expected_version=version
        )

    def create(self, request, *, fields):
        return services.vendor_create(actor=request.user, **fields)
