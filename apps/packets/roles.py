from apps.accounts.roles import Role, view

# DESIGN §1: every reviewing role and the auditor may read packets and ask for
# a new one (issuing changes no record of the case); nobody edits an issued one.
READ_AND_REQUEST = view("packets.auditpacket", "packets.packetrequest") + [
    "packets.add_packetrequest"
]

ROLE_PERMISSIONS = {
    Role.PROCUREMENT: READ_AND_REQUEST,
    Role.LEGAL: READ_AND_REQUEST,
    Role.TECH_LEAD: READ_AND_REQUEST,
    Role.AUDITOR: READ_AND_REQUEST,
}
