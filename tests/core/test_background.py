"""The background runner of the embedded default: it runs what it is handed, in
the background, and a process forked from it ends cleanly."""

import multiprocessing
import threading
from types import SimpleNamespace

import pytest

from apps.core import background


class _Task:
    """Just enough of a Celery task for the runner: ``apply(...).get()``."""

    name = "test-task"

    def __init__(self, body) -> None:
        self.body = body

    def apply(self, args, kwargs, throw):
        return SimpleNamespace(get=lambda: self.body(*args, **kwargs))


def _noop() -> None:
    pass


def test_a_task_runs_on_another_thread_and_its_result_comes_back():
    future = background.submit(_Task(lambda x: (x * 2, threading.current_thread().name)), 21)
    value, thread = future.result(timeout=30)
    assert value == 42 and thread.startswith("background-task-")


def test_a_failing_task_reports_its_error_and_the_runner_keeps_working():
    def broken():
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        background.submit(_Task(broken)).result(timeout=30)
    assert background.submit(_Task(lambda: "still here")).result(timeout=30) == "still here"


def test_a_process_forked_by_a_background_task_ends_cleanly():
    # The packet's chapters are laid out in forked processes; forked from a
    # ThreadPoolExecutor's thread they would end with exit code 1 and fail the render.
    def fork():
        process = multiprocessing.get_context("fork").Process(target=_noop)
        process.start()
        process.join()
        return process.exitcode

    assert background.submit(_Task(fork)).result(timeout=60) == 0


def test_tasks_go_to_the_runner_only_without_a_broker_and_when_on(settings):
    settings.CELERY_TASK_ALWAYS_EAGER, settings.BACKGROUND_TASKS = True, True
    assert background.runs_in_background()
    settings.BACKGROUND_TASKS = False
    assert not background.runs_in_background()
    settings.CELERY_TASK_ALWAYS_EAGER, settings.BACKGROUND_TASKS = False, True
    assert not background.runs_in_background()
