"""The admin lists people's authenticators and recovery codes, to remove a lost one.

django-otp's own page for an authenticator adds pages that show its secret key and
setup link; those are left out, and the key is never shown (``OTP_ADMIN_HIDE_SENSITIVE_DATA``).
"""

from django.contrib import admin
from django.contrib.admin import ModelAdmin
from django_otp.plugins.otp_totp.admin import TOTPDeviceAdmin
from django_otp.plugins.otp_totp.models import TOTPDevice


class AuthenticatorAdmin(TOTPDeviceAdmin):
    readonly_fields = ["created_at", "last_used_at"]

    def get_urls(self):
        return ModelAdmin.get_urls(self)  # without the key's config and QR code pages


admin.site.unregister(TOTPDevice)
admin.site.register(TOTPDevice, AuthenticatorAdmin)
