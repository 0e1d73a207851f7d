"""Long tasks started from a page, run in the background even without a broker.

With a broker (``CELERY_BROKER_URL``) a task goes to a Celery worker and the
page answers at once. Without one (the embedded default) Celery runs tasks
eagerly, inside the request: issuing a packet would keep the browser waiting
for the whole render with nothing to show. So, when tasks run eagerly and
``BACKGROUND_TASKS`` is on, a task is handed to a small thread pool in this
process once the transaction that asked for it commits, and the page that
shows its progress is served meanwhile.

The tests keep ``BACKGROUND_TASKS`` off (``tests/conftest.py``) so that a task
still runs inline and its result is there when the request returns; the tests
of the background runner turn it on.
"""

import logging
import queue
import threading
from concurrent.futures import Future

from django.conf import settings
from django.db import connections, transaction

logger = logging.getLogger(__name__)

_tasks: queue.Queue = queue.Queue()
_threads: list[threading.Thread] = []
_lock = threading.Lock()


def runs_in_background() -> bool:
    """True where a task handed to ``dispatch_on_commit`` runs in this process's pool."""
    return bool(settings.CELERY_TASK_ALWAYS_EAGER and settings.BACKGROUND_TASKS)


def dispatch_on_commit(task, *args, **kwargs) -> None:
    """Start ``task`` once the current transaction commits: on a worker, in the
    background pool, or (background tasks off, no broker) inline as before."""
    if runs_in_background():
        transaction.on_commit(lambda: submit(task, *args, **kwargs))
    else:
        task.delay_on_commit(*args, **kwargs)


def dispatch(task, *args, **kwargs) -> None:
    """Start ``task`` now (it reads only what is committed): on a worker, in the
    background pool, or inline as before."""
    if runs_in_background():
        submit(task, *args, **kwargs)
    else:
        task.delay(*args, **kwargs)


def submit(task, *args, **kwargs) -> Future:
    """Run ``task`` soon in the background pool; returns its future (tests wait on it)."""
    future: Future = Future()
    _started_queue().put((future, task, args, kwargs))
    return future


def _started_queue() -> queue.Queue:
    # Started on first use: a process that never starts a long task (a management
    # command, a test) holds no idle threads. Plain daemon threads, not a
    # ThreadPoolExecutor: a process forked from an executor's thread (the packet's
    # layout processes) ends with exit code 1, its exit trying to join that thread.
    # Daemon: stopping the web server does not wait for a render; a request left
    # "running" may be made again once stale (apps.packets.services.STALE_AFTER).
    global _threads
    with _lock:
        if not _threads:
            _threads = [
                threading.Thread(target=_work, name=f"background-task-{n}", daemon=True)
                for n in range(settings.BACKGROUND_TASK_THREADS)
            ]
            for thread in _threads:
                thread.start()
        return _tasks


def _work() -> None:
    while True:
        future, task, args, kwargs = _tasks.get()
        try:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(_run(task, args, kwargs))
                except Exception as error:
                    future.set_exception(error)
        finally:
            _tasks.task_done()


def _run(task, args: tuple, kwargs: dict):
    """Run one task as Celery would eagerly, then close this thread's database connections.

    A thread of the pool outlives its task; a connection left open would be
    held for as long as the process lives, and on SQLite would keep a reader open.
    """
    try:
        return task.apply(args=args, kwargs=kwargs, throw=True).get()
    except Exception:
        # The task records its own failure where it has one (the packet request
        # says "failed"); this is the log line for everything else.
        logger.exception("Background task %s failed", getattr(task, "name", task))
        raise
    finally:
        connections.close_all()


def wait_for_all() -> None:
    """Wait until every task submitted so far has ended (tests)."""
    _tasks.join()
