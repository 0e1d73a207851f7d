from apps.core.roles import Role, view

ROLE_PERMISSIONS = {
    # Everyone who works on a case discusses its records; the auditor reads the
    # discussion and changes nothing. Nobody edits or deletes a comment.
    Role.PROCUREMENT: view("comments.comment") + ["comments.add_comment"],
    Role.LEGAL: view("comments.comment") + ["comments.add_comment"],
    Role.TECH_LEAD: view("comments.comment") + ["comments.add_comment"],
    Role.AUDITOR: view("comments.comment"),
    # Finance decides prepayment and long-term commitments with procurement: it discusses them.
    Role.FINANCE: view("comments.comment") + ["comments.add_comment"],
}
