from apps.core.roles import Role, edit, view

READ = view(
    "contracts.checklisttemplate",
    "contracts.templateitem",
    "contracts.clausechecklist",
    "contracts.checklistitem",
    "contracts.redflagwaiver",
    "contracts.contractterms",
    "contracts.contractdocument",
)

ROLE_PERMISSIONS = {
    # docs/roles.md: the legal reviewer owns clause checklists and waivers and
    # publishes the organisation's template versions; the others read them.
    Role.LEGAL: READ
    + edit(
        "contracts.checklisttemplate",
        "contracts.templateitem",
        "contracts.clausechecklist",
        "contracts.checklistitem",
        "contracts.contractterms",
    )
    + [
        "contracts.add_redflagwaiver",
        # A high-severity item's waiver counts once a second legal reviewer confirms it.
        "contracts.confirm_redflagwaiver",
        "contracts.withdraw_redflagwaiver",
        # Signed contract documents: legal and procurement upload them (a new version,
        # never a replacement); everyone who reads the checklist reads them.
        "contracts.add_contractdocument",
    ],
    Role.PROCUREMENT: READ + ["contracts.add_contractdocument"],
    Role.TECH_LEAD: READ,
    Role.AUDITOR: READ,
    Role.FINANCE: READ,
}
