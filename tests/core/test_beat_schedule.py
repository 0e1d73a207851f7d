from celery import current_app

from config.celery import app


def test_every_scheduled_task_exists():
    app.loader.import_default_modules()
    schedule = app.conf.beat_schedule
    assert {"verify-audit-chain-nightly", "approvals-send-reminders-daily"} <= set(schedule)
    for entry in schedule.values():
        assert entry["task"] in current_app.tasks, entry["task"]
