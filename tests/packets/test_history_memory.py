"""Writing and summarising the history holds no whole history in memory.

Ten times the history must not take ten times the memory: the history files
are written as their rows are read (``.iterator()``), and the summary keeps
counts and the changes it prints, not rows. Python's own allocations are
measured (``tracemalloc``); ``benchmarks/packet.py`` measures the worker's
peak memory for a whole packet.
"""

import tracemalloc

import pytest

from apps.audit import history_files
from apps.audit.history_summary import summarise_history
from apps.audit.sources import case_history_sources
from apps.cases.models import ProcurementCase
from apps.packets.attachments import AttachmentSpec, write_attachments
from tests.factories import make_case

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

FETCH = 100


def _add_history(case, count: int) -> None:
    """``count`` more edits of the case's requirements, written straight to its history table."""
    history = ProcurementCase.history.model
    latest = history.objects.filter(id=case.pk).latest("history_id")
    columns = [f.attname for f in history._meta.concrete_fields if f.attname != "history_id"]
    rows = []
    for n in range(count):
        values = {name: getattr(latest, name) for name in columns}
        values.update(history_type="~", requirements=f"Requirements, draft {n}: " + "x" * 200)
        rows.append(history(**values))
    history.objects.bulk_create(rows, batch_size=500)


def _peak(function) -> int:
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _write_all(case, workdir) -> int:
    """The case's history files, as a packet writes them: both from one read."""
    (queryset,) = [q for s, q in case_history_sources(case) if s.key == "cases.procurementcase"]
    specs = [AttachmentSpec(name, "", "text/plain") for name in ("history.csv", "history.json")]
    written = write_attachments(
        workdir,
        specs,
        lambda csv_sink, json_sink: history_files.write_history(
            queryset, csv_out=csv_sink, json_out=json_sink
        ),
    )
    return written[0].rows or 0


def test_the_history_files_and_the_summary_do_not_grow_with_the_history(
    priya, tmp_path, monkeypatch
):
    monkeypatch.setattr(history_files, "FETCH_ROWS", FETCH)
    monkeypatch.setattr(history_files, "FLUSH_CHARS", 32 * 1024)
    case = make_case(priya)
    peaks = []
    for total in (300, 3000):
        _add_history(case, total - case.history.count())
        rows = _write_all(case, tmp_path)  # once unmeasured: caches and imports
        assert rows == total
        written = _peak(lambda: _write_all(case, tmp_path))
        summarised = _peak(lambda: summarise_history(case_history_sources(case)))
        peaks.append((written, summarised))
    (small_write, small_summary), (large_write, large_summary) = peaks
    # Ten times the rows; what grows is noise, not the rows (a row here is ~0.5 KB).
    assert large_write < small_write * 1.5 + 256 * 1024, peaks
    assert large_summary < small_summary * 1.5 + 256 * 1024, peaks
