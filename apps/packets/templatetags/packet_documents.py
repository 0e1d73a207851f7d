"""The button that issues an area's deliverable, on the area page of the case."""

from django import template

from apps.packets.models import ISSUE_PERMISSIONS, DocumentKind

register = template.Library()

# The case's areas whose records a deliverable is drawn from (``apps.casework.panels.AREAS``).
AREA_DOCUMENTS = {
    "sizing": DocumentKind.SPEC_SHEET,
    "offers": DocumentKind.SPEC_SHEET,
    "contracts": DocumentKind.COMPLIANCE_RECORD,
    "data-export": DocumentKind.COMPLIANCE_RECORD,
    "access": DocumentKind.NETWORK_PLAN,
    "acceptance": DocumentKind.ACCEPTANCE_REPORT,
}


@register.inclusion_tag("packets/area_document.html")
def area_document(case, area: str, user) -> dict:
    """Offers the area's deliverable to the roles that own it; nothing to anyone else."""
    kind = AREA_DOCUMENTS.get(area)
    may_issue = kind is not None and user.has_perm(ISSUE_PERMISSIONS[kind])
    return {"case": case, "kind": kind if may_issue else None}
