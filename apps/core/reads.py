"""Reads shared by the parts of one case page.

The case page gathers panels from many apps, and several of them need the
same records (the offers, the clause checklists, the assessments, the access
matrix). Inside ``shared_reads()`` a selector decorated with ``@shared_read``
runs once per case and hands the same result to every later caller; outside
it (services, the API, other pages) it runs every time, as before. The scope
ends with the page, so nothing read here outlives the request.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps

_memo: ContextVar[dict | None] = ContextVar("case_page_reads", default=None)


@contextmanager
def shared_reads() -> Iterator[None]:
    """Within this block, each ``@shared_read`` selector runs once per case."""
    if _memo.get() is not None:  # nested: the outer scope already shares
        yield
        return
    token = _memo.set({})
    try:
        yield
    finally:
        _memo.reset(token)


def shared_read(selector: Callable) -> Callable:
    """Decorate a read-only ``selector(case)``: its callers share one result, so none may
    change the records in it in a way that another part of the page would notice."""

    @wraps(selector)
    def wrapped(case):
        memo = _memo.get()
        if memo is None or case.pk is None:
            return selector(case)
        key = (selector.__module__, selector.__qualname__, case.pk)
        if key not in memo:
            memo[key] = selector(case)
        return memo[key]

    return wrapped
