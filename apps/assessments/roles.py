from apps.core.roles import Role, edit, view

READ = view(
    "assessments.dataexportassessment",
    "assessments.assessmentanswer",
    "assessments.exporteddataset",
    "assessments.modelweightfile",
)
# docs/rules/data-export.md#audit-facts: the data inventory and the model-weight files are
# listed by legal and by the tech lead, who knows what is deployed; each is removed too.
AUDIT_LISTS = edit("assessments.exporteddataset", "assessments.modelweightfile") + [
    "assessments.delete_exporteddataset",
    "assessments.delete_modelweightfile",
]

ROLE_PERMISSIONS = {
    # docs/roles.md: the legal reviewer owns data-export self-assessments and signs them off;
    # everyone else reads them (the auditor changes nothing).
    Role.LEGAL: READ
    + edit("assessments.dataexportassessment", "assessments.assessmentanswer")
    + ["assessments.sign_off_dataexportassessment"]
    + AUDIT_LISTS,
    Role.PROCUREMENT: READ,
    Role.TECH_LEAD: READ + AUDIT_LISTS,
    Role.AUDITOR: READ,
    Role.FINANCE: READ,
}
