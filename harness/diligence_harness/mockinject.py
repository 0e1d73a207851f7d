"""Injections of the loopback mock for `soak` and `correctness` tests.

Kept apart from the serving loop in `mockserver.py`, which only asks three
questions: is the mock down now (refuse the connection), what does `/metrics`
say, and is this chat request one of the bundled correctness inputs?

- downtime windows: from t1 to t2 seconds after the first connection the mock
  accepted (so a client's start-up time does not shift them), every new
  connection is closed at once and requests on open ones are dropped;
- a simulated restart at t seconds: `process_start_time_seconds` in `/metrics`
  takes the restart's wall-clock time, with a short outage before it;
- correctness answers: the bundled inputs get their canonical answer, except
  the items named as wrong, which get a wrong one; with a core sample set given
  (`--answers FILE`), each of its inputs gets its expected answer.
"""

import time
from dataclasses import dataclass

from diligence_harness.clock import now_ns
from diligence_harness.correctness_set import canonical_answer, first_number_text


@dataclass(frozen=True)
class Injections:
    downtime: tuple[tuple[float, float], ...] = ()  # (from, to) seconds after the start
    restart_at_s: float | None = None
    restart_outage_s: float = 0.5
    wrong_answers: tuple[str, ...] = ()  # correctness item ids answered wrongly
    answers: tuple[tuple[str, str], ...] = ()  # (user input, answer) of a core sample set


def sample_answers(path: str) -> tuple[tuple[str, str], ...]:
    """(input, expected) of each item of a core sample set: the mock answers as expected."""
    from diligence_harness.workload_sets import read_sample_set

    found = []
    for item in read_sample_set(path).items:
        found.append((item["messages"][-1]["content"], item["expected"]))
    return tuple(found)


def parse_window(text: str) -> tuple[float, float]:
    """'3:5.5' -> (3.0, 5.5) seconds."""
    start, sep, end = text.partition(":")
    try:
        window = (float(start), float(end))
    except ValueError:
        raise ValueError(f"a downtime window is FROM:TO in seconds, got {text!r}") from None
    if not sep or window[0] < 0 or window[1] <= window[0]:
        raise ValueError(f"a downtime window is FROM:TO with FROM < TO, got {text!r}")
    return window


class InjectionState:
    """What the injections say at this moment, measured from the first connection."""

    def __init__(self, injections: Injections) -> None:
        self.injections = injections
        self.started_ns: int | None = None  # the first connection (monotonic ns)
        self.started_unix = time.time()  # the mock's "process start" for /metrics
        self._windows = self.windows()  # fixed: the serving path only compares numbers
        self._answers = dict(injections.answers)

    def connected(self) -> None:
        if self.started_ns is None:
            self.started_ns = now_ns()

    def _elapsed_s(self) -> float:
        if self.started_ns is None:
            return 0.0
        return (now_ns() - self.started_ns) / 1e9

    def windows(self) -> list[tuple[float, float]]:
        found = list(self.injections.downtime)
        at = self.injections.restart_at_s
        if at is not None:
            found.append((max(0.0, at - self.injections.restart_outage_s), at))
        return found

    def down(self) -> bool:
        if not self._windows:  # the usual case costs one test on the serving path
            return False
        elapsed = self._elapsed_s()
        return any(start <= elapsed < end for start, end in self._windows)

    def process_start_time(self) -> float:
        at = self.injections.restart_at_s
        if at is not None and self._elapsed_s() >= at:
            return self.started_unix + 1.0 + at  # a later start than the first process
        return self.started_unix

    def metrics_text(self) -> str:
        return (
            "# HELP process_start_time_seconds Start time of the process since unix epoch.\n"
            "# TYPE process_start_time_seconds gauge\n"
            f"process_start_time_seconds {self.process_start_time():.3f}\n"
        )

    def answer(self, body: dict) -> str | None:
        """The answer to a bundled correctness input, or None for any other request."""
        messages = body.get("messages") or []
        if self._answers and messages and isinstance(messages[-1], dict):
            answer = self._answers.get(str(messages[-1].get("content")))
            if answer is not None:
                return answer
        known = canonical_answer(messages)
        if known is None:
            return None
        item_id, canonical = known
        if item_id not in self.injections.wrong_answers:
            return canonical
        number = first_number_text(canonical)
        if number is not None:
            return canonical.replace(number, f"{float(number) + 1:g}", 1)
        return f"not {canonical}"

    def metrics_response(self) -> bytes:
        body = self.metrics_text().encode()
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
            f"Server: diligence-mock\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body
