"""Chain heads recorded by signed packets and exports, kept where a database restore cannot reach.

Each packet's and export's manifest states the chain head (sequence number and
hash) at the time it was made. A database restored from an older backup takes
the chain back to an earlier head, and takes back any row that said a packet
had seen a later one. So a copy of each recorded head is also written to file
storage, beside the packets themselves: one small file per packet or export,
its name carrying the head, so the verifier lists the folder without opening
the files.

The folder is named after the chain's first entry (its hash is fixed by the
first history row ever written), so a different database sharing the same
storage — a development database rebuilt from scratch, a test database —
reads only its own recorded heads, while a restored copy of the same
database still finds them all.
"""

import json
import logging
import re
from dataclasses import dataclass

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from apps.audit.models import ChainEntry

logger = logging.getLogger(__name__)

FOLDER = "audit/chain-heads"
SOURCES = ("packet", "export")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.]+")
_NAME = re.compile(
    r"^(?P<seq>\d{1,18})-(?P<hash>[0-9a-f]{64})-(?P<source>[a-z]+)-(?P<ref>.+)\.json$"
)


@dataclass(frozen=True)
class RecordedHead:
    """One chain head a packet or export recorded."""

    seq: int
    entry_hash: str
    source: str  # "packet" or "export"
    reference: str  # the packet number, or "case-<id>-<time>" for an export


def chain_identity() -> str | None:
    """A name for this chain: the hash of its first entry, or None while the chain is empty."""
    first = ChainEntry.objects.filter(seq=1).values_list("entry_hash", flat=True).first()
    return first[:32] if first else None


def _folder(identity: str) -> str:
    return f"{FOLDER}/{identity}"


def recorded_head_write(*, source: str, reference: str, seq: int, entry_hash: str) -> str | None:
    """Write one recorded head to storage; returns its storage name (None for an empty chain)."""
    if source not in SOURCES:
        raise ValueError(source)
    identity = chain_identity()
    if identity is None or seq <= 0:
        return None
    safe_reference = _UNSAFE.sub("-", reference).strip("-") or "unnamed"
    name = f"{_folder(identity)}/{seq:012d}-{entry_hash}-{source}-{safe_reference}.json"
    if default_storage.exists(name):
        return name  # the same packet or export recorded twice (a redelivered task)
    body = {
        "seq": seq,
        "entry_hash": entry_hash,
        "source": source,
        "reference": reference,
        "recorded_at": timezone.now().isoformat(),
    }
    return default_storage.save(name, ContentFile(json.dumps(body, sort_keys=True).encode()))


def recorded_heads() -> list[RecordedHead]:
    """Every head recorded for this chain, lowest first (names only; no file is opened)."""
    identity = chain_identity()
    if identity is None:
        return []
    try:
        _folders, names = default_storage.listdir(_folder(identity))
    except (FileNotFoundError, NotADirectoryError):
        return []
    heads = []
    for name in names:
        match = _NAME.match(name)
        if match is None or match["source"] not in SOURCES:
            logger.warning("Not a recorded chain head: %s", name)
            continue
        heads.append(RecordedHead(int(match["seq"]), match["hash"], match["source"], match["ref"]))
    return sorted(heads, key=lambda head: (head.seq, head.source, head.reference))
