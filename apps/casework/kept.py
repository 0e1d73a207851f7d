"""What a page computes across cases, kept until anything it is read from changes.

A kept value's key holds the audit chain's head (every tracked write moves it), the
reader, their permissions, the day and, for what is shown in words, the language and
time zone: so a write, a change of role or the next day reads it afresh, and a value
is never kept longer than ``KEPT_SECONDS``. A cache that cannot be reached costs speed,
never the answer.
"""

import hashlib
import logging
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache
from django.utils import timezone, translation

from apps.audit.chain import HEAD_PK
from apps.audit.models import ChainHead
from apps.casework.page import permissions_fingerprint

logger = logging.getLogger(__name__)

KEPT_SECONDS = 300
T = TypeVar("T")


def head_seq() -> int:
    return ChainHead.objects.filter(pk=HEAD_PK).values_list("seq", flat=True).first() or 0


def state_key(user, kind: str, *extra, words: bool = True) -> str:
    parts = [
        kind,
        user.pk,
        permissions_fingerprint(user),
        head_seq(),
        timezone.localdate(),
        *extra,
    ]
    if words:
        parts += [translation.get_language(), timezone.get_current_timezone_name()]
    return f"kept-{kind}:" + hashlib.sha256(repr(parts).encode()).hexdigest()


def read(key: str):
    try:
        return cache.get(key)
    except Exception:
        logger.warning("Cache unavailable; computing again", exc_info=True)
        return None


def keep(key: str, value) -> None:
    try:
        cache.set(key, value, KEPT_SECONDS)
    except Exception:
        logger.warning("Cache unavailable; not kept", exc_info=True)


def kept(key: str, compute: Callable[[], T]) -> T:
    """The value kept under ``key``, or ``compute()`` kept there."""
    value = read(key)
    if value is None:
        value = compute()
        keep(key, value)
    return value
