from apps.core.roles import Role, edit, view

READ = view(
    "evidence.evidencebundle",
    "evidence.specverification",
    "evidence.evidenceupload",
    "evidence.baseline",
)

ROLE_PERMISSIONS = {
    # docs/roles.md: the tech lead reviews evidence, issues harness tokens and pins the
    # baselines later runs are compared with (admins too, holding everything);
    # procurement, legal, finance and audit read evidence, baselines and comparisons, and
    # download raw files. Nobody edits a bundle: no endpoint changes one.
    Role.TECH_LEAD: READ
    + view("evidence.harnesstoken")
    + edit("evidence.harnesstoken")
    + edit("evidence.baseline"),
    Role.PROCUREMENT: READ,
    Role.LEGAL: READ,
    Role.AUDITOR: READ + view("evidence.harnesstoken"),
    Role.FINANCE: READ,
}
