from apps.core.roles import Role, edit, view

READ = view("sizing.computedemand", "sizing.requirementspec")

ROLE_PERMISSIONS = {
    Role.PROCUREMENT: READ,
    Role.LEGAL: READ,
    # The tech lead owns the sizing, and the requirement spec written from it.
    Role.TECH_LEAD: READ + edit("sizing.computedemand", "sizing.requirementspec"),
    Role.AUDITOR: READ,
    Role.FINANCE: READ,
}
