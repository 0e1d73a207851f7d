"""The clause checklist sections of the case page and the offer page."""

from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.contracts import rules
from apps.contracts.selectors import case_red_flags, offer_checklist
from apps.core.contributions import CasePanel, MissingLine

# Shows tracked records only, by the viewer's permissions and today's date.


def case_panel(case, *, actor) -> CasePanel:
    offers = case_red_flags(case)
    return CasePanel(
        title=_("Contract clause checklists"),
        template="contracts/case_panel.html",
        context={"case": case, "offers": offers},
        missing=[line for entry in offers for line in _missing(entry)],
        order=20,
        fix_url=reverse("contracts:comparison", args=[case.pk]),
        fix_permission="contracts.change_clausechecklist",
        started=any(entry.checklist is not None for entry in offers),
    )


def _missing(entry) -> list[str]:
    """What one offer's checklist still lacks, in a reviewer's words."""
    vendor = entry.offer.vendor
    if entry.checklist is None:  # started from the offer's page
        return [
            MissingLine(
                _("%(vendor)s: no contract clause checklist yet.") % {"vendor": vendor},
                reverse("offers:detail", args=[entry.offer.pk]),
                entry.offer.pk,
            )
        ]
    checklist = reverse("contracts:checklist", args=[entry.offer.pk])
    lines: list[str] = []
    summary = entry.summary
    if summary.open_red_flags:
        text = ngettext(
            "%(vendor)s: %(n)s open red flag in the clause checklist — %(items)s.",
            "%(vendor)s: %(n)s open red flags in the clause checklist — %(items)s.",
            len(summary.open_red_flags),
        ) % {
            "vendor": vendor,
            "n": len(summary.open_red_flags),
            "items": "; ".join(_flag_line(flag) for flag in summary.open_red_flags),
        }
        lines.append(MissingLine(text, checklist, entry.offer.pk))
    if summary.not_reviewed:
        lines.append(
            MissingLine(
                _("%(vendor)s: %(n)s of %(total)s clause items not reviewed yet.")
                % {"vendor": vendor, "n": len(summary.not_reviewed), "total": summary.total},
                checklist,
                entry.offer.pk,
            )
        )
    return lines


def _flag_line(flag) -> str:
    """``3. Title (missing)``, and what is wrong with its waiver in the gate's words."""
    line = f"{flag.number}. {flag.title} ({flag.status.replace('_', ' ')})"
    problem = rules.waiver_problem(flag)
    return f"{line}: {problem}" if problem else line


def offer_panel(offer, *, actor) -> CasePanel | None:
    if not actor.has_perm("contracts.view_clausechecklist"):
        return None
    state = offer_checklist(offer)
    return CasePanel(
        title=_("Contract clause checklist"),
        template="contracts/offer_panel.html",
        context={"offer": offer, "state": state},
        missing=[],
        order=20,
    )
