from django.contrib import admin

from apps.core.admin import ReadOnlyInline, TrackedAdmin
from apps.vendors import services
from apps.vendors.models import Certification, SubProcessor, Vendor, VendorContact


# Contacts, sub-processors and certifications are kept on the vendor's pages in the app,
# where each write is checked; the admin shows them on the vendor's page, read only.
class VendorContactInline(ReadOnlyInline):
    model = VendorContact
    fields = ["name", "email", "role", "language", "active"]


class SubProcessorInline(ReadOnlyInline):
    model = SubProcessor
    fields = ["name", "country", "service"]


class CertificationInline(ReadOnlyInline):
    model = Certification
    fields = ["kind", "issuer", "scope", "issued_on", "expires_on", "report_name"]


@admin.register(Vendor)
class VendorAdmin(TrackedAdmin):
    list_display = ["name", "jurisdiction", "regions"]
    search_fields = ["name"]
    editable_fields = services.EDITABLE_FIELDS
    inlines = [VendorContactInline, SubProcessorInline, CertificationInline]

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []  # a vendor being added has none

    def update(self, request, obj, *, fields, reason, version):
        return services.vendor_update(
            actor=request.user, vendor=obj, fields=fields, reason=reason, expected_version=version
        )

    def create(self, request, *, fields):
        return services.vendor_create(actor=request.user, **fields)
