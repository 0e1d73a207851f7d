"""A Celery worker killed in the middle of rendering a packet (issue #8, item 5).

Real processes: the packet is requested from a separate Django process, the
task goes through Redis to a ``celery -A config worker`` process, which is
killed with SIGKILL (its whole process group, pool child included) while the
packet's pages are being laid out. Nothing of the packet may remain; a new
worker must pick the unacknowledged message up again (``acks_late`` and the
broker's visibility timeout) and issue the packet exactly once.
"""

import hashlib
import re

import pytest

from tests.faults.stack import VISIBILITY_TIMEOUT_S, wait_for

pytestmark = pytest.mark.faults

# A case of its own with little in it: a short render keeps the test quick and
# well inside the broker's (short) visibility timeout.
REQUEST = """
import json
from django.contrib.auth import get_user_model
from apps.cases.services import case_create
from apps.packets.services import packet_request_create

users = get_user_model().objects
case = case_create(actor=users.get(username="priya"), name="Packet under fault")
request = packet_request_create(actor=users.get(username="aude"), case=case)
print(json.dumps({"request": request.pk, "number": request.number}))
"""

LAYING_OUT = "Laying out the pages"
TASK = "apps.packets.tasks.issue_packet_task"


def progress(stack, request_pk: int) -> tuple[str, int, str]:
    rows = stack.query(
        "SELECT status, progress_pct, step FROM packets_packetrequest WHERE id = %s",
        (request_pk,),
    )
    return rows[0]


def packets(stack, request_pk: int) -> list[tuple]:
    return stack.query(
        "SELECT id, number, file, sha256, size_bytes FROM packets_auditpacket"
        " WHERE request_id = %s",
        (request_pk,),
    )


def received_task_ids(log: str) -> list[str]:
    return re.findall(rf"Task {re.escape(TASK)}\[([0-9a-f-]+)\] received", log)


def test_a_worker_killed_mid_render_leaves_nothing_and_the_packet_issues_on_restart(stack):
    stored_before = stack.stored("")
    worker = stack.start_worker()
    requested = stack.shell(REQUEST)
    request_pk = requested["request"]

    # Wait for the task to be in the rendering step, then kill the worker.
    wait_for(
        "the packet to start laying out its pages",
        lambda: progress(stack, request_pk)[2] == LAYING_OUT or not worker.alive(),
        timeout_s=120,
        every_s=0.02,
    )
    assert worker.alive(), worker.log()[-4000:]
    worker.kill()
    first_log = worker.log()

    status, percent, step = progress(stack, request_pk)
    assert (status, step) == ("running", LAYING_OUT), "killed after rendering had finished"
    assert percent < 85  # nothing was signed or stored yet
    assert packets(stack, request_pk) == []
    assert stack.stored("packets") == []
    assert stack.stored("") == stored_before  # no temporary or partial file anywhere
    first_ids = received_task_ids(first_log)
    assert len(first_ids) == 1, first_log[-4000:]

    # A new worker takes the unacknowledged message once its visibility
    # timeout has passed, and issues the packet. Should the render outlast the
    # timeout, the broker hands the same message out again: still one packet.
    worker = stack.start_worker()
    wait_for(
        "the restarted worker to issue the packet",
        lambda: progress(stack, request_pk)[0] in {"done", "failed"} or not worker.alive(),
        timeout_s=VISIBILITY_TIMEOUT_S + 150,
        every_s=0.2,
    )
    # Every copy of the message delivered so far has finished and been acknowledged.
    wait_for(
        "the broker to hold no message of the task",
        lambda: stack.broker_backlog() == (0, 0),
        timeout_s=VISIBILITY_TIMEOUT_S + 60,
        every_s=0.2,
    )
    status, percent, step = progress(stack, request_pk)
    assert (status, percent, step) == ("done", 100, "Issued"), worker.log()[-4000:]
    redelivered = received_task_ids(worker.log())
    assert redelivered and set(redelivered) == set(first_ids)  # the same message, again

    issued = packets(stack, request_pk)
    assert len(issued) == 1
    _pk, number, name, sha256, size = issued[0]
    assert number == requested["number"]
    files = stack.stored("packets")
    assert [p.relative_to(stack.media).as_posix() for p in files] == [name]
    data = files[0].read_bytes()
    assert (len(data), hashlib.sha256(data).hexdigest()) == (size, sha256)
    # The stored file is a whole, valid signed packet of this installation.
    report = stack.manage("verify_packet", str(files[0]))
    assert f"VALID: packet {number}, unchanged." in report
