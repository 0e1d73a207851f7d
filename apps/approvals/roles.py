from apps.core.roles import Role, view

READ = view(
    "approvals.approval",
    "approvals.reminder",
    "approvals.findingacceptance",
    "approvals.approvalpolicy",
    "approvals.policystep",
    "approvals.approvalchain",
    "approvals.chaindecision",
    "approvals.delegation",
)
# Owners of findings accept them and withdraw their acceptances (docs/rules/findings.md).
ACCEPT = ["approvals.add_findingacceptance", "approvals.change_findingacceptance"]

ROLE_PERMISSIONS = {
    # docs/roles.md: procurement (who raises the case) submits it for approval; only
    # the tech lead approves or rejects; everyone reads gates and decisions.
    Role.PROCUREMENT: READ + ACCEPT + ["approvals.submit_approval"],
    Role.LEGAL: READ + ACCEPT,
    Role.TECH_LEAD: READ + ACCEPT + ["approvals.decide_approval"],
    Role.AUDITOR: READ,
    # Finance decides prepayment and long-term commitments jointly with procurement.
    Role.FINANCE: READ + ACCEPT,
}
