from apps.core.roles import Role, edit, view

ROLE_PERMISSIONS = {
    Role.PROCUREMENT: view("vendors.vendor") + edit("vendors.vendor"),
    Role.LEGAL: view("vendors.vendor"),
    Role.TECH_LEAD: view("vendors.vendor"),
    Role.AUDITOR: view("vendors.vendor"),
    Role.FINANCE: view("vendors.vendor"),
}
