from apps.core.roles import Role, view

READ = view("approvals.approval", "approvals.reminder")

ROLE_PERMISSIONS = {
    # docs/roles.md: procurement (who raises the case) submits it for approval; only
    # the tech lead approves or rejects; everyone reads gates and decisions.
    Role.PROCUREMENT: READ + ["approvals.submit_approval"],
    Role.LEGAL: READ,
    Role.TECH_LEAD: READ + ["approvals.decide_approval"],
    Role.AUDITOR: READ,
}
