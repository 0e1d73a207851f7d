from apps.core.roles import Role, view

ROLE_PERMISSIONS = {
    # docs/roles.md: the auditor reads everything, browses history, exports
    # evidence and packets, and may re-run the chain verification (a read).
    # Every role with case access reads the timeline (``cases.view_procurementcase``).
    Role.AUDITOR: view("audit.chainverification") + ["audit.verify_chain", "audit.export_case"],
}
