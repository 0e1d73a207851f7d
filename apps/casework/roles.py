"""Who reads the vendors' reassessments, and who starts one early (docs/roles.md)."""

from apps.core.roles import Role

_VIEW = ["casework.view_reassessment"]

ROLE_PERMISSIONS = {
    Role.PROCUREMENT: [*_VIEW, "casework.start_reassessment"],
    Role.LEGAL: _VIEW,
    Role.TECH_LEAD: _VIEW,
    Role.AUDITOR: _VIEW,
    Role.FINANCE: _VIEW,
}
