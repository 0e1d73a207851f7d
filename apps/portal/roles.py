from apps.core.roles import Role, edit, view

READ = view(
    "portal.vendorinvitation", "portal.invitationuse", "portal.proposal", "portal.vendordocument"
)

ROLE_PERMISSIONS = {
    # Procurement invites and revokes; each reviewer decides the proposals of their part
    # (the services check which section each role reviews).
    Role.PROCUREMENT: READ
    + edit("portal.vendorinvitation", "portal.proposal", "portal.vendordocument"),
    Role.LEGAL: READ + edit("portal.proposal", "portal.vendordocument"),
    Role.TECH_LEAD: READ + edit("portal.proposal", "portal.vendordocument"),
    Role.AUDITOR: READ,
    # Finance reads the vendor's proposals (the prices and prepayment it commits to).
    Role.FINANCE: READ,
}
