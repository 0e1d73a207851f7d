"""Signals one app sends and others act on, without an import between them.

``account_deactivated``: a person's account was switched off (by an administrator on the
People page, or by the identity provider through SCIM). Sent inside the deactivation's
transaction, with ``user``, ``actor`` (None for the provider) and ``reason``; each app
that issues credentials to people revokes theirs (the evidence app its harness tokens).
"""

from django.dispatch import Signal

account_deactivated = Signal()
