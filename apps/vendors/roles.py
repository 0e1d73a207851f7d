from apps.core.roles import Role, edit, view

# The vendor's master data: procurement keeps the vendor and its contacts; legal, who reads
# the vendor's assurances, keeps its sub-processors and certifications with procurement.
# Setting the tier by hand, with a reason, is procurement's or legal's.
MASTER_DATA = ("vendors.subprocessor", "vendors.certification")
READ_ALL = ("vendors.vendor", "vendors.vendorcontact", *MASTER_DATA)

ROLE_PERMISSIONS = {
    Role.PROCUREMENT: view(*READ_ALL)
    + edit("vendors.vendor", "vendors.vendorcontact", *MASTER_DATA)
    + ["vendors.override_vendor_tier"],
    Role.LEGAL: view(*READ_ALL) + edit(*MASTER_DATA) + ["vendors.override_vendor_tier"],
    Role.TECH_LEAD: view(*READ_ALL),
    Role.AUDITOR: view(*READ_ALL),
    Role.FINANCE: view(*READ_ALL),
}
