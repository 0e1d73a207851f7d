"""An index per history table a case's timeline reads: the column that ties a row to
its case (the case itself, or the record it hangs from), then date and history id.

A timeline page asks each table for its newest rows of one case older than a cursor;
with this index that is a short range read backwards, however many rows the table
holds. A table that reaches its case through another record (a clause through its
checklist, a score through its scorecard) is indexed on that record's column: the
records of one case are few, and each is then a range of its own.

Each table also gets (record id, history id): the row before a row of the page, which
its field diff is made against, is then one probe however often the record changed.

Written out here rather than worked out from the models, so that this migration
stays what it was; ``tests/audit/test_timeline_paging.py`` checks that every case
history table has its index, so a table added later needs one in a migration of its
own.
"""

from django.db import migrations

# (history table, the column that leads to the case, index name)
INDEXES = [
    ("acceptance_historicalacceptanceattachment", "plan_id", "tl_acceptance_acceptanceattachment"),
    ("acceptance_historicalacceptanceplan", "case_id", "tl_acceptance_acceptanceplan"),
    ("acceptance_historicalacceptanceresult", "plan_id", "tl_acceptance_acceptanceresult"),
    ("acceptance_historicalacceptancesignoff", "plan_id", "tl_acceptance_acceptancesignoff"),
    ("access_historicalaccesscontrol", "matrix_id", "tl_access_accesscontrol"),
    ("access_historicalaccessgrant", "role_id", "tl_access_accessgrant"),
    ("access_historicalaccessmatrix", "case_id", "tl_access_accessmatrix"),
    ("access_historicalaccesspermission", "matrix_id", "tl_access_accesspermission"),
    ("access_historicalaccessrole", "matrix_id", "tl_access_accessrole"),
    ("access_historicalnetworkplan", "case_id", "tl_access_networkplan"),
    ("access_historicalworkloadlink", "plan_id", "tl_access_workloadlink"),
    ("approvals_historicalapproval", "case_id", "tl_approvals_approval"),
    ("approvals_historicalfindingacceptance", "case_id", "tl_approvals_findingacceptance"),
    ("approvals_historicalreminder", "case_id", "tl_approvals_reminder"),
    ("approvals_historicalworkassignment", "case_id", "tl_approvals_workassignment"),
    ("assessments_historicalassessmentanswer", "assessment_id", "tl_assessments_assessmentanswer"),
    (
        "assessments_historicaldataexportassessment",
        "case_id",
        "tl_assessments_dataexportassessment",
    ),
    ("assessments_historicalexporteddataset", "assessment_id", "tl_assessments_exporteddataset"),
    ("assessments_historicalmodelweightfile", "assessment_id", "tl_assessments_modelweightfile"),
    ("cases_historicalprocurementcase", "id", "tl_cases_procurementcase"),
    ("comments_historicalcomment", "case_id", "tl_comments_comment"),
    ("contracts_historicalchecklistitem", "checklist_id", "tl_contracts_checklistitem"),
    ("contracts_historicalclausechecklist", "offer_id", "tl_contracts_clausechecklist"),
    ("contracts_historicalcontractterms", "checklist_id", "tl_contracts_contractterms"),
    ("contracts_historicalredflagwaiver", "item_id", "tl_contracts_redflagwaiver"),
    ("core_historicalfileintegrityalarm", "case_id", "tl_core_fileintegrityalarm"),
    ("costs_historicalbudget", "case_id", "tl_costs_budget"),
    ("costs_historicalcostimport", "case_id", "tl_costs_costimport"),
    ("costs_historicalcostperiod", "case_id", "tl_costs_costperiod"),
    ("costs_historicalspendcharge", "case_id", "tl_costs_spendcharge"),
    ("costs_historicalthresholdalert", "case_id", "tl_costs_thresholdalert"),
    ("evidence_historicalbaseline", "case_id", "tl_evidence_baseline"),
    ("evidence_historicalevidencebundle", "case_id", "tl_evidence_evidencebundle"),
    ("evidence_historicalharnesstoken", "case_id", "tl_evidence_harnesstoken"),
    ("evidence_historicalspecverification", "bundle_id", "tl_evidence_specverification"),
    ("offers_historicaldeclaredspec", "offer_id", "tl_offers_declaredspec"),
    ("offers_historicaloffer", "case_id", "tl_offers_offer"),
    ("packets_historicalauditpacket", "case_id", "tl_packets_auditpacket"),
    ("packets_historicalpacketrequest", "case_id", "tl_packets_packetrequest"),
    ("portal_historicalinvitationuse", "invitation_id", "tl_portal_invitationuse"),
    ("portal_historicalproposal", "invitation_id", "tl_portal_proposal"),
    ("portal_historicalvendordocument", "invitation_id", "tl_portal_vendordocument"),
    ("portal_historicalvendorinvitation", "offer_id", "tl_portal_vendorinvitation"),
    ("scorecards_historicalcriteriaset", "case_id", "tl_scorecards_criteriaset"),
    ("scorecards_historicalscorecard", "offer_id", "tl_scorecards_scorecard"),
    ("scorecards_historicalscoreentry", "scorecard_id", "tl_scorecards_scoreentry"),
    ("sizing_historicalcomputedemand", "case_id", "tl_sizing_computedemand"),
    ("sizing_historicalrequirementspec", "case_id", "tl_sizing_requirementspec"),
    ("workloads_historicalplanworkload", "plan_id", "tl_workloads_planworkload"),
    ("workloads_historicalworkloadset", "case_id", "tl_workloads_workloadset"),
]


def _create(table: str, column: str, name: str) -> str:
    # IF NOT EXISTS: the same statement on SQLite and PostgreSQL, and a rerun is harmless.
    return (
        f'CREATE INDEX IF NOT EXISTS "{name}" '
        f'ON "{table}" ("{column}", "history_date", "history_id")'
    )


def _create_predecessor(table: str, name: str) -> str:
    # A row's diff is against the same record's previous row: (record id, history id).
    return f'CREATE INDEX IF NOT EXISTS "{name}_prev" ON "{table}" ("id", "history_id")'


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0002_chain_head_and_refuse_function"),
        ("acceptance", "0005_training_thresholds"),
        ("access", "0008_input_bounds"),
        ("approvals", "0007_assignment_due_notices"),
        ("assessments", "0006_input_bounds"),
        ("cases", "0009_input_bounds"),
        ("comments", "0001_initial"),
        ("contracts", "0007_input_bounds"),
        ("core", "0004_mention_and_due_events"),
        ("costs", "0004_input_bounds"),
        ("evidence", "0007_input_bounds"),
        ("offers", "0006_input_bounds"),
        ("packets", "0005_document_kinds"),
        ("portal", "0002_closed_with_the_invitation"),
        ("scorecards", "0004_input_bounds"),
        ("sizing", "0006_input_bounds"),
        ("workloads", "0001_workload_sets"),
    ]

    operations = [
        migrations.RunSQL(
            sql=[_create(table, column, name) for table, column, name in INDEXES]
            + [_create_predecessor(table, name) for table, _column, name in INDEXES],
            reverse_sql=[f'DROP INDEX IF EXISTS "{name}"' for _table, _column, name in INDEXES]
            + [f'DROP INDEX IF EXISTS "{name}_prev"' for _table, _column, name in INDEXES],
        )
    ]
