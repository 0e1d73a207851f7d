from apps.core.roles import Role, edit, view

MODELS = (
    "costs.budget",
    "costs.costimport",
    "costs.costperiod",
    "costs.spendcharge",
    "costs.thresholdalert",
)
READ = view(*MODELS)

ROLE_PERMISSIONS = {
    # Procurement sets the budget and imports the vendor's bills and daily spend (each
    # daily-spend file is a cost import, so the same permission covers it). The tech lead
    # reads but does not import: each row carries the billed amount next to the
    # usage, and the engineers who run the instances should not also write the
    # bill their usage is reconciled against (segregation of duties, docs/roles.md).
    Role.PROCUREMENT: READ + edit("costs.budget") + ["costs.add_costimport"],
    Role.LEGAL: READ,
    Role.TECH_LEAD: READ,
    Role.AUDITOR: READ,
    Role.FINANCE: READ,
}
