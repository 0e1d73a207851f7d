"""The server's own reading of a bundle's soak and correctness sections.

Same definitions as the harness README ("soak", "correctness"), the server's
own code: outages, restarts, Xid events and ECC rises come from the raw probes
and samples; each answer is compared again, never taken from the harness's
verdict. The expected answers come from the server's own copy where it holds
one: the case's core sample set the run used, matched by its digest. Otherwise
the answers are compared with the reference file the bundle carries, and the
section says so (``reference_source``): such a run judges nothing until a tech
lead has pinned a baseline with the same reference (docs/rules/evidence.md#expected-answers).
Every client figure that differs is listed like the load test's disagreements.
"""

import hashlib
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from apps.evidence.recompute import Disagreement, _differs
from apps.workloads import rules as workload_rules
from apps.workloads.selectors import SampleReference

XID = re.compile(r"NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+)")
NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def _seconds(t_ns: int, start_ns: int) -> float:
    return (t_ns - start_ns) / 1e9


def _pci_key(text: str | None) -> tuple[int, int, int] | None:
    """Domain, bus and device of '00000000:3B:00.0' or the Xid form '0000:3b:00'."""
    match = re.fullmatch(
        r"(?:([0-9a-fA-F]+):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})(?:\.[0-7])?",
        (text or "").strip(),
    )
    if not match:
        return None
    domain, bus, device = match.groups()
    return int(domain or "0", 16), int(bus, 16), int(device, 16)


def _ticks(probes: list[dict]) -> list[tuple[int, bool]]:
    """(time, every probe of the check succeeded) per health check, in time order."""
    grouped: dict[int, list[dict]] = {}
    for probe in probes:
        grouped.setdefault(probe["tick"], []).append(probe)
    checks = [
        (min(p["t_ns"] for p in group), all(p["ok"] for p in group)) for group in grouped.values()
    ]
    return sorted(checks)


def _outages(checks, start_ns: int, end_ns: int) -> list[tuple[float, float]]:
    found, down_since = [], None
    for at, good in checks:
        if not good and down_since is None:
            down_since = at
        elif good and down_since is not None:
            found.append((_seconds(down_since, start_ns), _seconds(at, start_ns)))
            down_since = None
    if down_since is not None:
        found.append((_seconds(down_since, start_ns), _seconds(end_ns, start_ns)))
    return found


def _changes(samples: list[dict], field: str, start_ns: int, kind: str) -> list[dict]:
    """A restart wherever a known value differs from the last known one."""
    found, last = [], None
    for sample in sorted(samples, key=lambda s: s["t_ns"]):
        value = sample.get(field)
        if value is None:
            continue
        if last is not None and value != last:
            found.append({"at_s": _seconds(sample["t_ns"], start_ns), "kind": kind})
        last = value
    return found


def _gpu_returns(samples: list[dict], start_ns: int) -> list[dict]:
    """A GPU seen earlier, absent from a sample (or a failed sample), then present again."""
    found: list[dict] = []
    seen: set[str] = set()  # GPU UUIDs
    missing: set[str] = set()
    for sample in sorted(samples, key=lambda s: s["t_ns"]):
        present = {g.get("uuid") for g in sample.get("gpus") or [] if g.get("uuid")}
        if missing & present:
            found.append({"at_s": _seconds(sample["t_ns"], start_ns), "kind": "gpu"})
        missing = (missing | (seen - present)) - present
        seen |= present
    return found


def _ecc_rises(gpu: dict) -> dict[str, int]:
    """Per GPU UUID, the rises of the volatile uncorrected counter ({} when unread)."""
    if gpu.get("status") != "measured":
        return {}
    last: dict[str, int] = {}
    rises: dict[str, int] = {}
    for sample in sorted(gpu.get("samples") or [], key=lambda s: s["t_ns"]):
        for card in sample.get("gpus") or []:
            value, uuid = card.get("ecc_uncorrected_volatile"), card.get("uuid")
            if value is None or not uuid:
                continue
            rises.setdefault(uuid, 0)
            if uuid in last and value > last[uuid]:
                rises[uuid] += value - last[uuid]
            last[uuid] = value
    return rises


def _xid_events(result: dict, start_ns: int) -> list[tuple[float, str, int]]:
    by_pci: dict[tuple[int, int, int], str] = {}
    for sample in (result.get("gpu") or {}).get("samples") or []:
        for card in sample.get("gpus") or []:
            key = _pci_key(card.get("pci_bus_id"))
            if key and card.get("uuid"):
                by_pci[key] = card["uuid"]
    events = []
    for event in (result.get("xid") or {}).get("events") or []:
        match = XID.search(event.get("line") or "")
        if not match:
            continue
        pci, code = match.groups()
        key = _pci_key(pci)
        gpu = by_pci.get(key, f"PCI:{pci}") if key is not None else f"PCI:{pci}"
        events.append((_seconds(event["t_ns"], start_ns), gpu, int(code)))
    return sorted(events)


def soak(result: dict | None) -> tuple[dict | None, list[Disagreement]]:
    """The soak as the server reads it (None without a soak section)."""
    if not result:
        return None, []
    start, end = result["t_start_ns"], result["t_end_ns"]
    checks = _ticks(result.get("probes") or [])
    outages = _outages(checks, start, end)
    restarts = sorted(
        _changes(result["metrics"]["samples"], "process_start_time_seconds", start, "endpoint")
        + _changes(result.get("boot_ids") or [], "boot_id", start, "host")
        + _gpu_returns((result.get("gpu") or {}).get("samples") or [], start),
        key=lambda r: r["at_s"],
    )
    xid = result.get("xid") or {}
    rises = _ecc_rises(result.get("gpu") or {})
    ours: dict[str, Any] = {
        "endpoint": result.get("endpoint"),
        "interval_s": result.get("interval_s"),
        "duration_s": _seconds(end, start),
        "health_checks_total": len(checks),
        "health_checks_ok": sum(1 for _at, good in checks if good),
        "outages": [list(o) for o in outages],
        "downtime_s": math.fsum(b - a for a, b in outages),
        "restarts": restarts,
        "xid_measured": xid.get("status") == "measured",
        "xid_not_measured_reason": None if xid.get("status") == "measured" else xid.get("reason"),
        "xid_events": [list(e) for e in _xid_events(result, start)],
        "ecc_uncorrected": sum(rises.values()) if rises else None,
        "ecc_by_gpu": rises,
        "gpu_not_measured_reason": None
        if (result.get("gpu") or {}).get("status") == "measured"
        else (result.get("gpu") or {}).get("reason"),
    }
    theirs = result.get("summary") or {}
    pairs = (
        ("observed_duration_s", ours["duration_s"]),
        ("health_checks_total", ours["health_checks_total"]),
        ("health_checks_ok", ours["health_checks_ok"]),
        ("downtime_s", ours["downtime_s"]),
        ("ecc_uncorrected", ours["ecc_uncorrected"]),
    )
    found = [
        Disagreement("soak", k, theirs[k], v)
        for k, v in pairs
        if k in theirs and _differs(theirs[k], v)
    ]
    for name, server in (
        ("outages", outages),
        ("restarts", restarts),
        ("xid_events", ours["xid_events"]),
    ):
        if name in theirs and isinstance(theirs[name], list) and len(theirs[name]) != len(server):
            found.append(Disagreement("soak", f"{name}.count", len(theirs[name]), len(server)))
    return ours, found


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _number(text: str) -> float | None:
    match = NUMBER.search(text)
    return float(match.group()) if match else None


def _tolerance(comparison: dict, name: str) -> float | None:
    """A tolerance of the comparison (0 when absent); None when it is not a number."""
    value = comparison.get(name) or 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def compare(
    comparison: dict,
    expected: str,
    received: str | None,
    budget: workload_rules.MatchBudget | None = None,
) -> tuple[bool, str]:
    """(passed, reason) by the item's comparison (harness README "correctness"); a pattern
    is matched within ``budget`` (``workload_rules.MatchBudget``)."""
    if received is None:
        return False, "no answer"
    kind = comparison.get("kind")
    if kind == "exact":
        same = _normalise(received) == _normalise(expected)
        return same, "" if same else "differs after whitespace normalisation"
    if kind in ("identical", "regex", "json"):
        return workload_rules.compare_answer(kind, expected, received, budget)
    if kind == "numeric":
        want, got = _number(expected), _number(received)
        if want is None:
            return False, "the reference output holds no number"
        if got is None:
            return False, "the answer holds no number"
        abs_tol, rel_tol = _tolerance(comparison, "abs_tol"), _tolerance(comparison, "rel_tol")
        if abs_tol is None or rel_tol is None:
            return False, "the comparison's tolerance is not a number"
        limit = max(abs_tol, rel_tol * abs(want))
        difference = abs(got - want)
        if math.isfinite(difference) and difference <= limit:
            return True, ""
        return False, f"differs by {difference:g} (tolerance {limit:g})"
    return False, f"unknown comparison {kind!r}"


def _describe(comparison: dict) -> str:
    if comparison.get("kind") == "numeric":
        return (
            f"numeric within abs {_tolerance(comparison, 'abs_tol') or 0:g} "
            f"or rel {_tolerance(comparison, 'rel_tol') or 0:g}"
        )
    if comparison.get("kind") == "exact":
        return "exact after whitespace normalisation"
    if comparison.get("kind") in workload_rules.COMPARISON_WORDS:
        return workload_rules.COMPARISON_WORDS[comparison["kind"]]
    return f"unknown ({comparison.get('kind')!r})"


class ReferenceMissing(ValueError):
    """The correctness section's reference artifact is absent or unreadable."""


# Where a correctness run's expected answers come from (the stored section's
# ``reference_source``): the case's own core sample set, read from the server's copy; or
# the reference file the bundle carries, which judges nothing unless a tech lead pinned a
# baseline run with the very same file (``apps.evidence.acceptance``).
REFERENCE_CASE_SET = "case_set"
REFERENCE_BUNDLE = "bundle"


def _reference(document: dict, result: dict) -> tuple[dict, str]:
    from apps.evidence.bundle import artifact_bytes

    name = (result.get("reference") or {}).get("artifact")
    for artifact in document.get("artifacts") or []:
        if artifact.get("name") == name:
            raw = artifact_bytes(artifact)
            try:
                reference = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                raise ReferenceMissing(f"The reference artifact {name!r} is not JSON.") from None
            if not isinstance(reference, dict) or not isinstance(reference.get("items"), list):
                raise ReferenceMissing(f"The reference artifact {name!r} lists no items.")
            return reference, hashlib.sha256(raw).hexdigest()
    raise ReferenceMissing(
        f"The correctness section names the reference artifact {name!r}, "
        "which the bundle does not carry."
    )


def sample_set_used(document: dict) -> str | None:
    """The digest of the core sample set the bundle says its correctness run used."""
    recorded = document.get("workload_sets")
    entry = recorded.get("sample_set") if isinstance(recorded, dict) else None
    sha = entry.get("sha256") if isinstance(entry, dict) else None
    return sha if isinstance(sha, str) else None


def correctness_item_ids(result: dict | None) -> set[str]:
    """The ids the run answered (the server keeps only their expected answers)."""
    return {str(item["id"]) for item in (result or {}).get("items") or []}


@dataclass(frozen=True)
class _Expected:
    """One expected answer, whichever copy it comes from."""

    item_id: str
    core: bool
    comparison: dict
    output: str | None  # None: the reference has no text output for it
    input_sha256: str | None


def _from_case_set(reference: SampleReference) -> list[_Expected]:
    return [
        _Expected(a.item_id, a.core, a.comparison, a.expected, a.input_sha256)
        for a in reference.answers
    ]


def _from_bundle(carried: dict) -> list[_Expected]:
    found, seen = [], set()
    for entry in carried["items"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        if entry["id"] in seen:
            continue
        seen.add(entry["id"])
        comparison = entry.get("comparison")
        output = entry.get("output")
        found.append(
            _Expected(
                item_id=entry["id"],
                core=bool(entry.get("core", True)),
                comparison=comparison if isinstance(comparison, dict) else {},
                output=output if isinstance(output, str) else None,
                input_sha256=entry.get("input_sha256"),
            )
        )
    return found


def _judge(
    expected: _Expected | None, item: dict | None, budget: workload_rules.MatchBudget
) -> dict:
    """One item's verdict: the answer (``item``) against the expected one."""
    if item is None:
        assert expected is not None
        return {
            "id": expected.item_id,
            "core": expected.core,
            "passed": False,
            "expected": expected.output or "",
            "received": "",
            "reason": "not answered in this run",
            "comparison": expected.comparison,
        }
    comparison = item.get("comparison") or {}
    if expected is None or expected.output is None:
        passed, reason, output = False, "not in the reference file", ""
    else:
        output = expected.output
        comparison = expected.comparison or comparison
        passed, reason = compare(comparison, output, item.get("received"), budget)
        if item.get("error"):
            passed, reason = False, f"request failed: {item['error']}"
        if expected.input_sha256 != item.get("input_sha256"):
            passed, reason = False, "the reference was made for a different input"
    return {
        "id": item["id"],
        "core": expected.core if expected is not None else bool(item.get("core")),
        "passed": passed,
        "expected": output,
        "received": item.get("received") or "",
        "reason": reason,
        "comparison": comparison,
    }


def correctness(
    document: dict, result: dict | None, sample_reference: SampleReference | None = None
) -> tuple[dict | None, list[Disagreement]]:
    """Each answer compared again with the expected one: from ``sample_reference`` (the
    server's copy of the case's sample set the run used) where given, else from the
    reference file the bundle carries. Every expected answer counts: one the run did not
    answer does not pass. Patterns are matched within one ``MatchBudget`` for the run."""
    if not result:
        return None, []
    carried, digest = _reference(document, result)
    found = []
    stated = (result.get("reference") or {}).get("sha256")
    if stated != digest:
        found.append(Disagreement("correctness", "reference.sha256", stated, digest))
    if sample_reference is not None:
        expected = _from_case_set(sample_reference)
        source, reference_sha256 = REFERENCE_CASE_SET, sample_reference.sha256
        reference_name = f"{sample_reference.name} (expected answers)"
        baseline = None
    else:
        expected = _from_bundle(carried)
        source, reference_sha256 = REFERENCE_BUNDLE, digest
        reference_name = (result.get("reference") or {}).get("name") or ""
        baseline = carried.get("baseline")
    answers: dict[str, dict] = {}
    for item in result.get("items") or []:
        answers.setdefault(item["id"], item)
    budget = workload_rules.MatchBudget()
    judged = [_judge(e, answers.get(e.item_id), budget) for e in expected]
    listed = {e.item_id for e in expected}
    judged += [_judge(None, item, budget) for i, item in answers.items() if i not in listed]
    items: list[dict] = []
    kinds: dict[str, int] = {}  # how many answers each comparison judged
    for verdict in judged:
        comparison = verdict.pop("comparison")
        item = answers.get(verdict["id"])
        if item is not None:
            where = f"correctness/{verdict['id']}"
            if item.get("passed") is not verdict["passed"]:
                found.append(Disagreement(where, "passed", item.get("passed"), verdict["passed"]))
            if item.get("expected") != verdict["expected"]:
                found.append(
                    Disagreement(where, "expected", item.get("expected"), verdict["expected"])
                )
            description = _describe(comparison)
            kinds[description] = kinds.get(description, 0) + 1
        items.append(verdict)
    core = [i for i in items if i["core"]]
    ours = {
        "endpoint": result.get("endpoint"),
        "input_set": result.get("input_set"),
        "reference_source": source,
        "reference_name": reference_name,
        "reference_sha256": reference_sha256,
        "reference_artifact_sha256": digest,
        "baseline": baseline,
        "tolerance": "; ".join(f"{text} ({n})" for text, n in sorted(kinds.items())),
        "items": items,
        "total": len(items),
        "passed": sum(i["passed"] for i in items),
        "pass_rate": sum(i["passed"] for i in items) / len(items) if items else None,
        "core_total": len(core),
        "core_passed": sum(i["passed"] for i in core),
        "core_pass_rate": sum(i["passed"] for i in core) / len(core) if core else None,
    }
    theirs = result.get("summary") or {}
    for name in ("total", "passed", "core_total", "core_passed"):
        if name in theirs and _differs(theirs[name], ours[name]):
            found.append(Disagreement("correctness", name, theirs[name], ours[name]))
    return ours, found
