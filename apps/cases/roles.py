from apps.core.roles import Role, edit, view

ROLE_PERMISSIONS = {
    # Creates cases and waives the three-offer minimum (docs/roles.md,
    # docs/rules/offers.md#offer-minimum).
    Role.PROCUREMENT: view("cases.procurementcase")
    + edit("cases.procurementcase")
    + ["cases.waive_offer_minimum"],
    Role.LEGAL: view("cases.procurementcase"),
    # Owns the SLOs and sizing side of the case.
    Role.TECH_LEAD: view("cases.procurementcase") + ["cases.change_procurementcase"],
    Role.AUDITOR: view("cases.procurementcase") + ["cases.view_history"],
    Role.FINANCE: view("cases.procurementcase"),
}
