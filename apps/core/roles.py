from apps.accounts.roles import Role, view

# Everyone who reads a case sees that one of its stored files no longer matches its
# digest; nobody edits an alarm from a page (it is raised by the download itself).
ROLE_PERMISSIONS = {
    Role.PROCUREMENT: view("core.fileintegrityalarm"),
    Role.LEGAL: view("core.fileintegrityalarm"),
    Role.TECH_LEAD: view("core.fileintegrityalarm"),
    Role.AUDITOR: view("core.fileintegrityalarm"),
}
