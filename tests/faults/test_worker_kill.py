"""A Celery worker killed in the middle of rendering a packet (issue #8, item 5).

Real processes: the packet is requested from a separate Django process, the
task goes through Redis to a ``celery -A config worker`` process, which is
killed with SIGKILL (its whole process group, pool child included) while the
packet's pages are being laid out. Nothing of the packet may remain; a new
worker must pick the unacknowledged message up again (``acks_late`` and the
broker's visibility timeout) and issue the packet exactly once.
"""

import hashlib
import os
import re
import signal

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


def request_packet(stack) -> tuple[int, str]:
    requested = stack.shell(REQUEST)
    return requested["request"], requested["number"]


def wait_until_rendering(stack, request_pk: int, worker) -> None:
    wait_for(
        "the packet to start laying out its pages",
        lambda: progress(stack, request_pk)[2] == LAYING_OUT or not worker.alive(),
        timeout_s=120,
        every_s=0.02,
    )
    assert worker.alive(), worker.log()[-4000:]


def packet_files(stack, number: str) -> list:
    return [p for p in stack.stored("packets") if p.name.startswith(f"{number}-")]


def assert_nothing_of_the_packet(stack, request_pk: int, number: str, stored_before) -> None:
    status, percent, step = progress(stack, request_pk)
    assert (status, step) == ("running", LAYING_OUT), "killed after rendering had finished"
    assert percent < 85  # nothing was signed or stored yet
    assert packets(stack, request_pk) == []
    assert packet_files(stack, number) == []
    assert stack.stored("") == stored_before  # no temporary or partial file anywhere


def wait_until_issued(stack, request_pk: int, worker, timeout_s: float) -> None:
    wait_for(
        "the packet to be issued",
        lambda: progress(stack, request_pk)[0] in {"done", "failed"} or not worker.alive(),
        timeout_s=timeout_s,
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


def assert_issued_once(stack, request_pk: int, number: str) -> None:
    issued = packets(stack, request_pk)
    assert len(issued) == 1
    _pk, issued_number, name, sha256, size = issued[0]
    assert issued_number == number
    files = packet_files(stack, number)
    assert [p.relative_to(stack.media).as_posix() for p in files] == [name]
    data = files[0].read_bytes()
    assert (len(data), hashlib.sha256(data).hexdigest()) == (size, sha256)
    # The stored file is a whole, valid signed packet of this installation.
    report = stack.manage("verify_packet", str(files[0]))
    assert f"VALID: packet {number}, unchanged." in report


def test_a_worker_killed_mid_render_leaves_nothing_and_the_packet_issues_on_restart(stack):
    stored_before = stack.stored("")
    worker = stack.start_worker()
    request_pk, number = request_packet(stack)

    wait_until_rendering(stack, request_pk, worker)
    worker.kill()  # the whole worker: main process and pool process
    assert_nothing_of_the_packet(stack, request_pk, number, stored_before)
    first_ids = received_task_ids(worker.log())
    assert len(first_ids) == 1, worker.log()[-4000:]

    # A new worker takes the unacknowledged message once its visibility
    # timeout has passed, and issues the packet. Should the render outlast the
    # timeout, the broker hands the same message out again: still one packet.
    worker = stack.start_worker()
    wait_until_issued(stack, request_pk, worker, timeout_s=VISIBILITY_TIMEOUT_S + 150)
    redelivered = received_task_ids(worker.log())
    assert redelivered and set(redelivered) == set(first_ids)  # the same message, again
    assert_issued_once(stack, request_pk, number)
    worker.stop()


def test_a_pool_process_killed_mid_render_is_requeued_at_once(stack):
    """The out-of-memory case: the pool process dies, the worker lives on.

    ``reject_on_worker_lost`` gives the message back to the broker at once; without
    it, the worker would acknowledge it as failed and the packet would never issue.
    """
    stored_before = stack.stored("")
    worker = stack.start_worker()
    request_pk, number = request_packet(stack)

    wait_until_rendering(stack, request_pk, worker)
    children = worker.children()
    assert len(children) == 1, children  # --concurrency=1
    os.kill(children[0], signal.SIGKILL)
    wait_for(
        "the worker to notice its pool process died",
        lambda: "exited with 'signal 9 (SIGKILL)'" in worker.log() or not worker.alive(),
        timeout_s=30,
    )
    assert worker.alive(), worker.log()[-4000:]
    # Not re-rendered yet, at most started again: nothing of the killed attempt is left.
    assert packets(stack, request_pk) == []
    assert packet_files(stack, number) == []
    assert stack.stored("") == stored_before

    # Well before any visibility timeout, the same worker renders it again.
    wait_until_issued(stack, request_pk, worker, timeout_s=VISIBILITY_TIMEOUT_S + 120)
    ids = received_task_ids(worker.log())
    assert len(ids) >= 2 and len(set(ids)) == 1, worker.log()[-4000:]
    assert_issued_once(stack, request_pk, number)
    worker.stop()
