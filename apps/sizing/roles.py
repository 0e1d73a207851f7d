from apps.accounts.roles import Role, edit, view

READ = view("sizing.computedemand")

ROLE_PERMISSIONS = {
    Role.PROCUREMENT: READ,
    Role.LEGAL: READ,
    Role.TECH_LEAD: READ + edit("sizing.computedemand"),
    Role.AUDITOR: READ,
}
