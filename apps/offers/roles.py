from apps.core.roles import Role, edit, view

READ = view("offers.offer", "offers.declaredspec")

ROLE_PERMISSIONS = {
    # Procurement creates offers; the tech lead transcribes the declared spec.
    Role.PROCUREMENT: READ + edit("offers.offer"),
    Role.LEGAL: READ,
    Role.TECH_LEAD: READ + edit("offers.declaredspec"),
    Role.AUDITOR: READ,
    Role.FINANCE: READ,
}
