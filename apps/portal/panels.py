"""The vendor portal's section of the offer page: invitations and answers awaiting review."""

from django.utils.translation import gettext as _

from apps.core.contributions import CasePanel
from apps.portal.selectors import vendor_summary


def offer_panel(offer, *, actor) -> CasePanel | None:
    if not actor.has_perm("portal.view_vendorinvitation"):
        return None
    return CasePanel(
        title=_("Vendor answers"),
        template="portal/staff/offer_panel.html",
        context={"offer": offer, "summary": vendor_summary(offer)},
        missing=[],
        order=15,
    )
