from apps.core.roles import Role, edit, view

MODELS = ("workloads.workloadset", "workloads.planworkload")
READ = view(*MODELS)

ROLE_PERMISSIONS = {
    # The case's roles read its sets (their text can be confidential, so nobody else
    # does); the tech lead, who runs the harness and plans the acceptance, uploads them
    # and names the ones a plan requires. A stored set is never edited: a new version is.
    Role.PROCUREMENT: READ,
    Role.LEGAL: READ,
    Role.TECH_LEAD: READ + ["workloads.add_workloadset"] + edit("workloads.planworkload"),
    Role.AUDITOR: READ,
}
