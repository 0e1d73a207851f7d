"""Demo: priya submits the demo case for approval, so tariq finds it waiting.

No offer of the demo case passes every gate (no evidence has been uploaded),
so the gates page shows what each offer still needs.
"""

from apps.approvals.services import case_submit_for_approval
from apps.cases.models import ProcurementCase


def seed(*, case, users) -> None:
    case.refresh_from_db()  # the offers created earlier moved the case on from draft
    if case.status == ProcurementCase.Status.EVALUATING:
        case_submit_for_approval(
            actor=users["priya"], case=case, note="Three offers compared; please review the gates"
        )
