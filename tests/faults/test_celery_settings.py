"""The settings the fault tests rely on, as the Celery app really reads them.

Not marked ``faults``: these run in every normal run, in fresh processes so the
environment variable is read at start-up as in production.
"""

import json
import os
import subprocess
import sys

import pytest

from tests.faults.stack import ROOT

SHOW = """
import json
from config.celery import app
from django.conf import settings
conf = app.conf
print(json.dumps({
    "transport": conf.broker_transport_options,
    "acks_late": conf.task_acks_late,
    "reject_on_worker_lost": conf.task_reject_on_worker_lost,
    "prefetch": conf.worker_prefetch_multiplier,
    "health_checks": settings.DATABASES["default"]["CONN_HEALTH_CHECKS"],
}))
"""


def celery_conf(**env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k != "CELERY_BROKER_VISIBILITY_TIMEOUT"}
    return subprocess.run(
        [sys.executable, "-c", SHOW],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_defaults_redeliver_a_lost_task_after_an_hour():
    result = celery_conf()
    assert result.returncode == 0, result.stderr
    conf = json.loads(result.stdout)
    assert conf["transport"] == {
        "visibility_timeout": 3600,
        "unacked_restore_interval": 60,
        "unacked_restore_throttle": 1,
    }
    assert (conf["acks_late"], conf["reject_on_worker_lost"], conf["prefetch"]) == (True, True, 1)
    assert conf["health_checks"] is True


def test_the_visibility_timeout_comes_from_the_environment():
    result = celery_conf(CELERY_BROKER_VISIBILITY_TIMEOUT="30")
    assert result.returncode == 0, result.stderr
    transport = json.loads(result.stdout)["transport"]
    assert (transport["visibility_timeout"], transport["unacked_restore_interval"]) == (30, 3)
    short = json.loads(celery_conf(CELERY_BROKER_VISIBILITY_TIMEOUT="5").stdout)["transport"]
    assert (short["visibility_timeout"], short["unacked_restore_interval"]) == (5, 1)


@pytest.mark.parametrize("value", ["soon", "0", "-5"])
def test_a_bad_visibility_timeout_stops_start_up_naming_the_variable(value):
    result = celery_conf(CELERY_BROKER_VISIBILITY_TIMEOUT=value)
    assert result.returncode != 0
    assert "CELERY_BROKER_VISIBILITY_TIMEOUT" in result.stderr
