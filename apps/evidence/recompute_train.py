"""The reference training step, recomputed from the bundle's raw figures.

The server's own reading (docs/metrics.md#reference-training-step): samples/s from each
rank's batch size and the nanoseconds of each of its steps, every step as long as its
slowest rank; per card over the cards that ran; the scaling efficiency as all cards'
samples/s over cards × one card's; the checkpoint's rates from its bytes and
nanoseconds, and whether the restore brought the saved state back from the two digests.
The client's figures are advisory; each one that disagrees is listed.
"""

import math
import re

from apps.evidence.recompute import Disagreement, _differs

MAX_RANKS = 1024  # more ranks than any node holds: not read further
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _rank(record: dict) -> dict | None:
    """One rank's timed steps, as far as they are numbers."""
    batch = _int(record.get("batch_size"))
    raw_times = record.get("step_ns")
    times = [
        t
        for t in (raw_times if isinstance(raw_times, list) else [])
        if _int(t) is not None and t >= 0
    ]
    if not batch or batch < 1 or not times:
        return None
    raw_losses = record.get("loss")
    losses: list = raw_losses if isinstance(raw_losses, list) else []
    numbers = [x for x in losses if isinstance(x, int | float) and not isinstance(x, bool)]
    digest = record.get("params_sha256")
    return {
        "device": str(record.get("device") or "")[:40],
        "batch_size": batch,
        "step_ns": times,
        "losses": len(losses),
        "non_finite": len(losses) - sum(1 for x in numbers if math.isfinite(x)),
        "loss_first": numbers[0] if numbers and math.isfinite(numbers[0]) else None,
        "loss_last": numbers[-1] if numbers and math.isfinite(numbers[-1]) else None,
        "params_sha256": digest if isinstance(digest, str) and _SHA256.fullmatch(digest) else None,
    }


def phase(record: dict | None) -> dict | None:
    """Samples/s of a phase: Σ ranks' batch × steps over Σ steps' slowest rank's time."""
    if not isinstance(record, dict):
        return None
    raw = [r for r in (record.get("ranks") or [])[:MAX_RANKS] if isinstance(r, dict)]
    ranks = [r for r in (_rank(x) for x in raw) if r is not None]
    if not ranks:
        return None
    steps = min(len(r["step_ns"]) for r in ranks)
    seconds = math.fsum(max(r["step_ns"][i] for r in ranks) for i in range(steps)) / 1e9
    samples = sum(r["batch_size"] for r in ranks) * steps
    rate = samples / seconds if seconds > 0 else None
    cards = len(ranks)
    digests = {r["params_sha256"] for r in ranks}
    return {
        "cards": cards,
        "backend": str(record.get("backend") or "")[:20],
        "steps": steps,
        "samples": samples,
        "seconds": seconds,
        "samples_per_s": rate,
        "samples_per_s_per_card": rate / cards if rate is not None else None,
        "batch_sizes": [r["batch_size"] for r in ranks],
        "non_finite_losses": sum(r["non_finite"] for r in ranks),
        "loss_first": ranks[0]["loss_first"],
        "loss_last": ranks[0]["loss_last"],
        # Data parallelism leaves the same parameters on every card (None: not stated).
        "params_agree": None if None in digests else len(digests) == 1,
        "devices": [r["device"] for r in ranks],
    }


def checkpoint(record: dict | None) -> dict | None:
    """Save and restore: seconds and decimal GB/s from bytes and nanoseconds; the restore
    brought the state back when the two digests are equal."""
    if not isinstance(record, dict):
        return None
    size, save_ns, restore_ns = (
        _int(record.get(k)) for k in ("bytes", "save_ns", "restore_ns")
    )  # fmt: skip
    if not size or size <= 0 or save_ns is None or restore_ns is None:
        return None
    saved, restored = record.get("saved_sha256"), record.get("restored_sha256")
    valid = all(isinstance(d, str) and _SHA256.fullmatch(d) for d in (saved, restored))
    return {
        "bytes": size,
        "save_s": save_ns / 1e9,
        "restore_s": restore_ns / 1e9,
        "save_GBps": size / save_ns if save_ns > 0 else None,
        "restore_GBps": size / restore_ns if restore_ns > 0 else None,
        "cache_dropped": record.get("cache_dropped") is True,
        "restored_matches": valid and saved == restored,
        "path": str(record.get("path") or "")[:300],
    }


def _compare(where: str, metric: str, client, server, found: list) -> None:
    """A figure the client stated that the raw data do not give (one it left out is none)."""
    if client is not None and _differs(client, server):
        found.append(Disagreement(where, metric, client, server))


def training(result: dict | None) -> tuple[dict | None, list[Disagreement]]:
    """The step's phases and checkpoint as the server computes them."""
    if not isinstance(result, dict):
        return None, []
    found: list[Disagreement] = []
    one = phase(result.get("one_card"))
    every = phase(result.get("all_cards"))
    for name, ours in (("one_card", one), ("all_cards", every)):
        theirs = _dict(result.get(name))
        if ours is None:
            continue
        for metric in ("samples_per_s", "samples_per_s_per_card"):
            _compare(f"train/{name}", metric, theirs.get(metric), ours[metric], found)
        _compare(f"train/{name}", "cards", theirs.get("cards"), ours["cards"], found)
    scaling = None
    if one is not None and every is not None and one["samples_per_s"]:
        if every["samples_per_s"] is not None:
            scaling = every["samples_per_s"] / (every["cards"] * one["samples_per_s"])
        claimed = _dict(result.get("all_cards")).get("scaling_efficiency")
        _compare("train/all_cards", "scaling_efficiency", claimed, scaling, found)
    model = _dict(result.get("model"))
    summary = {
        "backend": str(result.get("backend") or "")[:20],
        "devices": [
            str(_dict(d).get("name") or _dict(d).get("device") or "")[:100]
            for d in (result.get("devices") or [])[:MAX_RANKS]
        ],
        "model": {
            key: _int(model.get(key))
            for key in ("parameters", "d_model", "layers", "heads", "seq", "vocab", "batch")
        }
        | {
            "name": str(model.get("name") or "")[:40],
            "dtype": str(model.get("dtype") or "")[:40],
        },
        "one_card": one,
        "all_cards": every,
        "scaling_efficiency": scaling,
        "checkpoint": checkpoint(result.get("checkpoint")),
        "skipped": [
            {"what": str(s.get("what"))[:200], "reason": str(s.get("reason"))[:300]}
            for s in (result.get("skipped") or [])[:20]
            if isinstance(s, dict)
        ],
    }
    return summary, found
