from apps.core.roles import Role, edit, view

READ = view("scorecards.criteriaset", "scorecards.scorecard")

ROLE_PERMISSIONS = {
    # Reviewers score offers: procurement on the commercial side, the tech lead
    # on the technical side; procurement owns the criteria and weights.
    Role.PROCUREMENT: READ + edit("scorecards.criteriaset", "scorecards.scorecard"),
    Role.LEGAL: READ,
    Role.TECH_LEAD: READ + edit("scorecards.scorecard"),
    Role.AUDITOR: READ,
    Role.FINANCE: READ,
}
