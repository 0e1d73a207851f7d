"""Threshold alerts for one case, sent after an import commits (the daily run covers all)."""

from celery import shared_task

from apps.cases.models import ProcurementCase


@shared_task(name="apps.costs.tasks.send_threshold_alerts_task", acks_late=True)
def send_threshold_alerts_task(case_pk: int) -> int:
    """Send the alerts the case's imports crossed; returns how many (0 when run again)."""
    from apps.costs.services import threshold_alerts_send  # services queue this task

    case = ProcurementCase.objects.filter(pk=case_pk).first()
    if case is None:
        return 0
    return len(threshold_alerts_send(case=case))
