"""The admin lists people's authenticators and recovery codes, to remove a lost one, and
the links between people's accounts and their accounts at the sign-in provider.

django-otp's own page for an authenticator adds pages that show its secret key and
setup link; those are left out, and the key is never shown (``OTP_ADMIN_HIDE_SENSITIVE_DATA``).

Single sign-on finds a person by their linked provider account only: an administrator
links one to an existing account (a person who had a password here, say) by adding it,
and unlinks it by deleting it; a link is never edited into another.
"""

from django.contrib import admin
from django.contrib.admin import ModelAdmin
from django_otp.plugins.otp_totp.admin import TOTPDeviceAdmin
from django_otp.plugins.otp_totp.models import TOTPDevice

from apps.accounts.models import ExternalIdentity


class AuthenticatorAdmin(TOTPDeviceAdmin):
    readonly_fields = ["created_at", "last_used_at"]

    def get_urls(self):
        return ModelAdmin.get_urls(self)  # without the key's config and QR code pages


admin.site.unregister(TOTPDevice)
admin.site.register(TOTPDevice, AuthenticatorAdmin)


@admin.register(ExternalIdentity)
class ExternalIdentityAdmin(ModelAdmin):
    list_display = ["user", "issuer", "subject", "linked_at", "last_sign_in_at"]
    search_fields = ["user__username", "subject"]
    raw_id_fields = ["user"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ["linked_at", "last_sign_in_at"]
        return ["user", "issuer", "subject", "linked_at", "last_sign_in_at"]
