"""Budget threshold alerts, sent by the daily reminders beat task (apps.casework.tasks)."""

from apps.costs.services import threshold_alerts_send


def reminders_send(*, today) -> list:
    return threshold_alerts_send()
