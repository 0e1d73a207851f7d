"""A case's access matrix as a workbook to print: the roles × permissions grid and the controls.

Read-only: the matrix is edited on its grid page. Writing and printing are
``apps.core.spreadsheets``.
"""

from django.utils.translation import gettext as _

from apps.access.selectors import matrix_view
from apps.core.spreadsheets import Sheet, workbook_bytes, workbook_filename


def _grant_text(cell: dict) -> str:
    grant = cell["grant"]
    if grant is None:
        return ""
    text = "✓" + (f" {grant.justification}" if grant.justification else "")
    if cell["faults"]:
        text += "\n" + "\n".join(f"⚠ {fault}" for fault in cell["faults"])
    return text


def access_workbook(case, matrix) -> tuple[bytes, str]:
    """The matrix's grid and controls as two sheets, and the file name."""
    view = matrix_view(matrix)
    grid = Sheet(
        title=_("Access matrix"),
        headings=[
            _("Role"),
            _("Audit role"),
            *(
                f"{p.name} ({p.get_kind_display()}{', ' + _('write') if p.is_write else ''})"
                for p in view.permissions
            ),
        ],  # fmt: skip
        rows=[
            [role.name, _("Yes") if role.is_audit_role else "", *map(_grant_text, cells)]
            for role, cells in view.rows
        ],
        widths=[24, 10, *([22] * len(view.permissions))],
        wrap=set(range(2 + len(view.permissions))),
        freeze="B2",
    )
    controls = Sheet(
        title=_("Controls"),
        headings=[
            _("Control"),
            _("Status"),
            _("Evidence note"),
            _("Period"),
            _("Value"),
            _("Why it does not hold"),
        ],
        rows=[
            [
                row.control.title,
                row.control.get_status_display(),
                row.control.evidence,
                row.period_label,
                row.period,
                row.gap.message if row.gap else "",
            ]
            for row in view.control_rows
        ],
        widths=[36, 14, 40, 24, 10, 48],
        wrap={0, 2, 3, 5},
    )
    violations = Sheet(
        title=_("Separation of duties"),
        headings=[_("Role"), _("Problem")],
        rows=[[v.role, v.message] for v in view.state.violations],
        widths=[24, 80],
        wrap={1},
    )
    content = workbook_bytes(
        [grid, controls, violations], title=f"{case.name} — {_('Access matrix')}"
    )
    return content, workbook_filename("access-matrix-case", case.pk, case.name)
