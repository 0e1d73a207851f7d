from apps.core.roles import Role, view

# docs/roles.md: every reviewing role, finance and the auditor may read packets and ask for
# a new one (issuing changes no record of the case); nobody edits an issued one.
READ_AND_REQUEST = view("packets.auditpacket", "packets.packetrequest") + [
    "packets.add_packetrequest"
]

# Each deliverable of its own (docs/rules/audit.md#deliverables) is issued by the roles that own its
# area: the spec sheet by the tech lead, who transcribes declared specs and sizes the demand, and by
# procurement, who owns the offers; the compliance record by the legal reviewer, who owns clause
# checklists and data-export self-assessments; the network and access-control plan and the
# acceptance report by the tech lead. The auditor reads them.
ROLE_PERMISSIONS = {
    Role.PROCUREMENT: READ_AND_REQUEST + ["packets.issue_spec_sheet"],
    Role.LEGAL: READ_AND_REQUEST + ["packets.issue_compliance_record"],
    Role.TECH_LEAD: READ_AND_REQUEST
    + [
        "packets.issue_spec_sheet",
        "packets.issue_network_plan",
        "packets.issue_acceptance_report",
    ],
    Role.AUDITOR: READ_AND_REQUEST,
    Role.FINANCE: READ_AND_REQUEST,
}
