from apps.core.roles import Role, edit, view

MODELS = (
    "acceptance.acceptanceplan",
    "acceptance.acceptanceresult",
    "acceptance.acceptanceattachment",
    "acceptance.acceptancesignoff",
)
READ = view(*MODELS)

ROLE_PERMISSIONS = {
    # Issue #9: the tech lead plans the acceptance, records results and signs off
    # (another tech lead than the recorder); procurement, legal, finance and auditors read.
    Role.PROCUREMENT: READ,
    Role.LEGAL: READ,
    Role.TECH_LEAD: READ
    + edit(*MODELS[:3])
    + ["acceptance.add_acceptancesignoff", "acceptance.signoff_acceptanceplan"],
    Role.AUDITOR: READ,
    Role.FINANCE: READ,
}
