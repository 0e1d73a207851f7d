from apps.core.roles import Role, edit, view

READ = view("assessments.dataexportassessment", "assessments.assessmentanswer")

ROLE_PERMISSIONS = {
    # docs/roles.md: the legal reviewer owns data-export self-assessments and signs them off;
    # everyone else reads them (the auditor changes nothing).
    Role.LEGAL: READ
    + edit("assessments.dataexportassessment", "assessments.assessmentanswer")
    + ["assessments.sign_off_dataexportassessment"],
    Role.PROCUREMENT: READ,
    Role.TECH_LEAD: READ,
    Role.AUDITOR: READ,
    Role.FINANCE: READ,
}
