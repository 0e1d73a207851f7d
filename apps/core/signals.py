"""Signals one app sends and others act on, without an import between them.

``account_deactivated``: a person's account was switched off (by an administrator on the
People page, or by the identity provider through SCIM). Sent inside the deactivation's
transaction, with ``user``, ``actor`` (None for the provider) and ``reason``; each app
that issues credentials to people revokes theirs (the evidence app its harness tokens).

``verification_recorded``: an offer's spec verification was composed anew from a bundle
the harness uploaded. Sent inside the upload's transaction, with ``offer_id``; the
acceptance app settles the approvals subject to acceptance of that offer once it commits.
"""

from django.dispatch import Signal

account_deactivated = Signal()
verification_recorded = Signal()
