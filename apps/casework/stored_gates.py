"""Every offer's gates of a case, and the offer matrix made from them, kept between the
writes that change them.

Gathering the gates reads every area of the case (some thirty queries) and judges
every rule. The pages a decision is taken on (the approval page, the approval area,
the offer matrix and its spreadsheets) read them inside ``stored_gates()`` instead:
the gates of the whole case are kept in the cache under a key that holds the case's
``StandingMark``, the same mark the case's stored standing is checked against
(``apps.casework.standing``). Every tracked write touching the case, or touching a
record that every case reads, raises that mark in its own transaction, so a write
changes the key and the gates are gathered again on the next view: what is read is
never older than the last tracked write. The key also holds what the gates depend on
besides the records (the language, the time zone and today's date, the deployed code
and settings, the users' names), and the gates are kept only until the first instant
a passing verification ages past its limit.

Outside ``stored_gates()`` (a decision being recorded, the packet, the API, the
cockpit's standing) the gates are gathered afresh, as before; so is any subset of
offers.
"""

import copyreg
import hashlib
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db.models import Max
from django.urls import get_script_prefix
from django.utils import timezone
from django.utils.translation import get_language

from apps.approvals.panels import gates_valid_until
from apps.approvals.selectors import OfferGates
from apps.cases.models import StandingMark
from apps.casework.gates import gather_case_gates
from apps.casework.matrix import MatrixRow, offer_matrix
from apps.casework.standing import chain_versions, code_fingerprint, settings_fingerprint
from apps.offers.models import Offer

logger = logging.getLogger(__name__)
T = TypeVar("T")


def read_only(mapping: dict) -> MappingProxyType:
    return MappingProxyType(mapping)


def _mapping_proxy(proxy: MappingProxyType) -> tuple:
    return read_only, (dict(proxy),)


# The scores keep their per-criterion means read-only (a mapping proxy), which the cache
# must be able to keep and give back as they were.
copyreg.pickle(MappingProxyType, _mapping_proxy)

FORMAT = "case-gates/1"
# Kept at most this long: a key whose mark was raised is never asked for again.
KEEP_SECONDS = 3600

_reading: ContextVar[bool] = ContextVar("stored_gates", default=False)


@contextmanager
def stored_gates() -> Iterator[None]:
    """Within this block, every offer's gates of a case are read from the store when
    no write touched the case since they were gathered."""
    token = _reading.set(True)
    try:
        yield
    finally:
        _reading.reset(token)


def _mark(case) -> int | None:
    """The last tracked write touching the case or every case (one query)."""
    found = StandingMark.objects.filter(key__in=[case.pk, StandingMark.ALL]).aggregate(
        seq=Max("seq")
    )
    return found["seq"]


def gates_key(case) -> str:
    """The store's key for the case's gates as they stand now (two small queries)."""
    parts = [
        FORMAT,
        case.pk,
        # A case deleted and another made with its id (a test database rolled back) is
        # another case: its creation time tells them apart.
        case.created_at.isoformat() if case.created_at else "",
        _mark(case),
        chain_versions().users,
        get_language(),
        timezone.get_current_timezone_name(),
        timezone.localdate().isoformat(),
        get_script_prefix(),
        code_fingerprint(),
        settings_fingerprint(),
    ]
    digest = hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()
    return f"{FORMAT}:{case.pk}:{digest}"


def _stored(case, kind: str, compute: Callable[[], T], valid_until_of) -> T:
    """``compute()`` kept under the case's key: read back while no write touched the case
    and until ``valid_until_of(value)``; computed and kept otherwise."""
    key = f"{kind}:{gates_key(case)}"
    try:
        found = cache.get(key)
    except Exception:  # the cache is down: computed as if nothing were kept
        logger.warning("The case's kept %s could not be read", kind, exc_info=True)
        found = None
    if found is not None:
        valid_until, value = found
        if valid_until is None or timezone.now() < valid_until:
            return value
    value = compute()
    valid_until = valid_until_of(value)
    timeout = KEEP_SECONDS
    if valid_until is not None:
        timeout = max(1, min(timeout, int((valid_until - timezone.now()).total_seconds())))
    try:
        cache.set(key, (valid_until, value), timeout)
    except Exception:  # not kept (the cache is down, or a value it cannot hold): only speed
        logger.warning("The case's %s could not be kept", kind, exc_info=True)
    return value


def stored_case_gates(case) -> list[OfferGates]:
    """Every offer's gates: stored ones when current, else gathered now and stored."""
    return _stored(case, "gates", lambda: gather_case_gates(case), gates_valid_until)


def stored_offer_matrix(case) -> list[MatrixRow]:
    """The offer matrix (``apps.casework.matrix.offer_matrix``), kept as its gates are:
    the comparison, the evidence and the acceptance it lines up are the case's records
    too, so the same writes raise its mark."""
    if not settings.CASE_STANDING_STORED:
        return offer_matrix(case)
    return _stored(
        case,
        "matrix",
        lambda: offer_matrix(case),
        lambda rows: gates_valid_until([row.gates for row in rows]),
    )


def gather(case, offers: Sequence[Offer] | None = None) -> list[OfferGates]:
    """The gatherer the layer registers: inside ``stored_gates()`` the whole case's gates
    come from the store; otherwise, or for some offers only, they are gathered now."""
    if offers is None and _reading.get() and settings.CASE_STANDING_STORED:
        return stored_case_gates(case)
    return gather_case_gates(case, offers)
