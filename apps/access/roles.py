from apps.accounts.roles import Role, edit, view

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
    # DESIGN §1: the tech lead owns access matrices and network plans and does
    # the quarterly review; everyone else reads them.
    Role.PROCUREMENT: READ,
    Role.LEGAL: READ,
    Role.TECH_LEAD: READ + edit(*MODELS) + ["access.review_accessmatrix"],
    Role.AUDITOR: READ,
}
