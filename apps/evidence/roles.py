from apps.accounts.roles import Role, edit, view

READ = view("evidence.evidencebundle", "evidence.specverification", "evidence.evidenceupload")

ROLE_PERMISSIONS = {
    # DESIGN §1: the tech lead reviews evidence and issues harness tokens (admins
    # too, holding everything); procurement, legal and audit read evidence and
    # download raw files. Nobody edits a bundle: no endpoint changes one.
    Role.TECH_LEAD: READ + view("evidence.harnesstoken") + edit("evidence.harnesstoken"),
    Role.PROCUREMENT: READ,
    Role.LEGAL: READ,
    Role.AUDITOR: READ + view("evidence.harnesstoken"),
}
