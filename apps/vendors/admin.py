from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from apps.vendors.models import Vendor


@admin.register(Vendor)
class VendorAdmin(SimpleHistoryAdmin):
    list_display = ["name", "jurisdiction", "regions"]
    search_fields = ["name"]
