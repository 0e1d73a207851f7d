"""What an approval policy's conditions read of the areas (docs/rules/approvals.md): the
approved offer's contract value, as the costs page works it out, and whether a data-export
assessment of the case (or of that offer) says personal information is handled. Registered
at start-up (``apps.approvals.policies.set_policy_facts_reader``)."""

from django.db.models import Q

from apps.assessments.audit_facts import PERSONAL, SENSITIVE_PERSONAL
from apps.assessments.models import AssessmentAnswer, ExportedDataset
from apps.assessments.questions import YES
from apps.costs.rules import committed_spend
from apps.costs.selectors import offer_terms


def read(case, offer) -> dict:
    terms = offer_terms(offer)
    value = committed_spend(terms).contract_value if terms is not None else None
    # The assessments of the whole case, and those of this offer.
    scope = Q(assessment__case=case) & (
        Q(assessment__offer__isnull=True) | Q(assessment__offer=offer)
    )
    answered = AssessmentAnswer.objects.filter(
        scope, question_key="personal_information", value=YES
    ).exists()
    listed = ExportedDataset.objects.filter(
        scope, sensitivity__in=[PERSONAL, SENSITIVE_PERSONAL]
    ).exists()
    return {"contract_value": value, "personal_data": answered or listed}
