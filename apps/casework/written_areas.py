"""Which areas of a case's standing a tracked write can change, by the kind of record
written (docs/adding-an-area.md#the-stored-standing).

A write's history row names the model written; the areas listed for it here are those
whose panel reads that model (directly, or through the approval gates and the findings
register, which read every area's records). Once the write commits, only those areas
of the stored standings are computed again; the others keep what was stored. A kind
missing here changes every area, so forgetting one costs speed, never correctness.

The case itself is told apart by field: what only the page header and the area pages
show (the free-text requirements, the edit bookkeeping) is read by no area
(the cockpit renders the header from the case each time); any other field changes
every area.
"""

from functools import cache

from apps.casework.panels import AREAS

CASE = "cases.procurementcase"

# Case fields no area's panel reads (tests/cases/test_written_areas.py watches them).
CASE_FIELDS_READ_BY_NO_AREA = frozenset({"requirements", "version", "updated_at", "created_at"})

_SUMMARY = ("sizing", "offers")  # the case's own two areas, read together
_EVIDENCE = ("evidence", "access", "approval", "acceptance")

KIND_AREAS: dict[str, tuple[str, ...]] = {
    # Sizing and the comparison feed the case's own areas and the approval gates.
    "sizing.computedemand": (*_SUMMARY, "approval"),
    "sizing.requirementspec": (*_SUMMARY, "approval"),
    "scorecards.criteriaset": (*_SUMMARY, "approval"),
    # A workload kind's preset is what a case without criteria of its own is scored on.
    "scorecards.criteriapreset": (*_SUMMARY, "approval"),
    "scorecards.scorecard": (*_SUMMARY, "approval"),
    "scorecards.scoreentry": (*_SUMMARY, "approval"),
    "contracts.clausechecklist": ("contracts", "approval"),
    "contracts.checklistitem": ("contracts", "approval"),
    "contracts.redflagwaiver": ("contracts", "approval"),
    "contracts.contractterms": ("contracts", "approval"),
    "contracts.contractdocument": ("contracts", "approval"),
    "contracts.checklisttemplate": ("contracts", "approval"),
    "contracts.templateitem": ("contracts", "approval"),
    "assessments.dataexportassessment": ("data-export", "approval"),
    "assessments.assessmentanswer": ("data-export", "approval"),
    "assessments.exporteddataset": ("data-export", "approval"),
    "assessments.modelweightfile": ("data-export", "approval"),
    "access.accessmatrix": ("access", "approval"),
    "access.accessrole": ("access", "approval"),
    "access.accessgrant": ("access", "approval"),
    "access.accesspermission": ("access", "approval"),
    "access.accesscontrol": ("access", "approval"),
    "access.networkplan": ("access", "approval"),
    "access.workloadlink": ("access", "approval"),
    # A bundle's verification is read by the evidence tile, the network plan's measured
    # latency, the gates and the acceptance plan's baseline.
    "evidence.evidencebundle": _EVIDENCE,
    "evidence.specverification": _EVIDENCE,
    "evidence.baseline": _EVIDENCE,
    "evidence.harnesstoken": ("evidence",),
    # The decision also closes, on every tile, the lines about the offers it did not
    # approve: that filter is applied to the stored lines each time the cockpit renders.
    "approvals.approval": ("approval", "acceptance", "costs"),
    "approvals.findingacceptance": ("approval",),
    # A chain's steps and decisions show on the approval tile; a policy or a delegation
    # changes no running chain (it copied the policy when it started).
    "approvals.approvalchain": ("approval", "acceptance", "costs"),
    "approvals.chaindecision": ("approval",),
    "approvals.approvalpolicy": (),
    "approvals.policystep": (),
    "approvals.delegation": (),
    "acceptance.acceptanceplan": ("acceptance", "approval"),
    "acceptance.acceptanceresult": ("acceptance", "approval"),
    "acceptance.acceptanceattachment": ("acceptance", "approval"),
    "acceptance.acceptancesignoff": ("acceptance", "approval"),
    "costs.budget": ("costs", "approval"),
    "costs.costimport": ("costs", "approval"),
    "costs.costperiod": ("costs", "approval"),
    "costs.spendcharge": ("costs", "approval"),
    "costs.thresholdalert": ("costs", "approval"),
    "workloads.workloadset": ("approval", "acceptance"),
    "workloads.planworkload": ("approval", "acceptance"),
    "packets.auditpacket": ("packets",),
    "packets.packetrequest": ("packets",),
    "core.fileintegrityalarm": ("audit",),
    # Read by the work lists, the offer page and the timeline, never by an area's tile.
    "comments.comment": (),
    "approvals.reminder": (),
    "approvals.workassignment": (),
    "portal.vendorinvitation": (),
    "portal.invitationuse": (),
    "portal.vendordocument": (),
    "portal.proposal": (),
    # A vendor's contacts and sub-processors show on the vendor's page only; its
    # certifications are findings of its cases (not listed: every area).
    "vendors.vendorcontact": (),
    "vendors.subprocessor": (),
    "portal.sentquestionnaire": (),
    # The questionnaire library hangs from no case; what was sent is read by the offer page.
    "portal.questionnaire": (),
    "portal.questionnaireversion": (),
    "portal.question": (),
    "portal.questionnaireanswer": (),
    # Not listed, so every area: offers and declared specs (read by nearly every area),
    # vendors (their names head many lines), anything added later.
}


@cache
def _checked() -> dict[str, frozenset[str]]:
    for kind, areas in KIND_AREAS.items():
        unknown = set(areas) - set(AREAS)
        assert not unknown, f"{kind}: no such area {unknown}"
    return {kind: frozenset(areas) for kind, areas in KIND_AREAS.items()}


def areas_written(kind: str, changed_fields: frozenset[str] | None = None) -> frozenset[str] | None:
    """The areas a write of this kind of record can change; None: every area.

    ``changed_fields``: for the case, the fields the write changed (None: unknown)."""
    if kind == CASE:
        if changed_fields is None or changed_fields - CASE_FIELDS_READ_BY_NO_AREA:
            return None
        return frozenset()
    return _checked().get(kind)
