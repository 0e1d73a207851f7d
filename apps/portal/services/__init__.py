"""Every write of the vendor portal, one module per part of it.

- ``invitations``: inviting a vendor contact to one offer, revoking the invitation,
  and the record of each use of it;
- ``codes``: the one-time codes that open an invitation's link in a browser;
- ``proposals``: what the vendor sends (answers, replies to questions, documents);
- ``review``: the organisation's decision on each answer and document.
"""
