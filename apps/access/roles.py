from apps.core.roles import Role, edit, view

MODELS = (
    "access.accessmatrix",
    "access.accessrole",
    "access.accesspermission",
    "access.accessgrant",
    "access.accesscontrol",
    "access.networkplan",
    "access.workloadlink",
)
READ = view(*MODELS)

ROLE_PERMISSIONS = {
    # docs/roles.md: the tech lead owns access matrices and network plans and does
    # the quarterly review; everyone else reads them. Only the tech lead accepts
    # the risk of a control not in place (docs/rules/access.md#access-controls).
    Role.PROCUREMENT: READ,
    Role.LEGAL: READ,
    Role.TECH_LEAD: READ
    + edit(*MODELS)
    + ["access.review_accessmatrix", "access.accept_control_risk"],
    Role.AUDITOR: READ,
    Role.FINANCE: READ,
}
