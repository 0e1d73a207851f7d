from apps.core.roles import Role, edit, view

READ = view(
    "portal.vendorinvitation",
    "portal.invitationuse",
    "portal.proposal",
    "portal.vendordocument",
    # The organisation's questionnaires, what was sent and what the vendor answered.
    "portal.questionnaire",
    "portal.questionnaireversion",
    "portal.question",
    "portal.sentquestionnaire",
    "portal.questionnaireanswer",
)
# Who writes the questions vendors are asked: procurement, legal and the tech lead (who
# answers for the security of the rented machines) author questionnaires and publish them.
AUTHOR = edit("portal.questionnaire", "portal.questionnaireversion", "portal.question")

ROLE_PERMISSIONS = {
    # Procurement invites and revokes; each reviewer decides the proposals of their part
    # (the services check which section each role reviews).
    Role.PROCUREMENT: READ
    + AUTHOR
    + edit("portal.vendorinvitation", "portal.proposal", "portal.vendordocument"),
    Role.LEGAL: READ + AUTHOR + edit("portal.proposal", "portal.vendordocument"),
    Role.TECH_LEAD: READ + AUTHOR + edit("portal.proposal", "portal.vendordocument"),
    Role.AUDITOR: READ,
    # Finance reads the vendor's proposals (the prices and prepayment it commits to).
    Role.FINANCE: READ,
}
