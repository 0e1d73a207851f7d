"""The audit section of the case page: chain head, last verification, stored files found
changed, timeline and export."""

from django.urls import reverse
from django.utils.translation import gettext as _

from apps.audit.selectors import chain_status
from apps.core.contributions import CasePanel
from apps.core.downloads import open_file_integrity_alarms

# Shows the last verification run: a stored case standing is for one run
# (``apps.casework.standing.variant``).


def case_panel(case, *, actor) -> CasePanel:
    status = chain_status()
    missing = []
    if status.verified is False:
        missing.append(
            _("The audit chain failed verification: %(problem)s")
            % {"problem": status.first_problem}
        )
    # Raised by a download that found a stored file changed: a tracked write, so a
    # stored standing is computed again as soon as one is raised.
    alarms = []
    if actor.has_perm("core.view_fileintegrityalarm"):
        alarms = open_file_integrity_alarms(case)
    for alarm in alarms:
        missing.append(
            _("Stored file changed on disk: %(record)s no longer matches its recorded checksum.")
            % {"record": alarm.record}
        )
    return CasePanel(
        title=_("Audit trail"),
        template="audit/case_panel.html",
        context={"case": case, "status": status, "alarms": alarms},
        missing=missing,
        order=100,
        fix_url=reverse("audit:chain"),
        fix_permission="audit.verify_chain",
    )
