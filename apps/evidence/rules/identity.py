"""Identity: is the hardware what was sold? (docs/rules/evidence.md#identity)."""

from apps.evidence import datasheet
from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, WARN, Check, Context, Facts
from apps.evidence.wording import phrase

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

# Stored in English and worded for the reader where shown (apps.evidence.wording).
RUNTIME_CROSS_CHECK = phrase(
    "CUDA runtime device query (cudaGetDeviceCount) cross-checked against NVML; the runtime wins"
)
NVML_SAME_GPU = phrase(
    "NVIDIA nvidia-smi and NVML documentation: the same GPU read from each source"
)
# The datasheet's sources, cited by their titles beside each figure.
for _source in datasheet.SOURCES:
    phrase(datasheet.Fact(None, _source).citation)
EXACT = phrase("exact")
NO_PCI_ID = phrase("no PCI id")
SEEN = phrase("%(name)s [%(pci_id)s]")
SPOOFED = phrase(
    "%(gpu)s: the name says %(name)s but PCI id %(pci_id)s is %(actual)s (spoofed or look-alike)"
)
NOT_DECLARED = phrase("%(gpu)s: %(actual)s is not the declared %(declared)s")
NOT_DECLARED_MODEL = phrase("%(gpu)s: %(name)s is not the declared model")
MIG_ON = phrase("%(gpu)s: MIG is on; a process sees one instance")
MIB_BUT = phrase("%(gpu)s: %(mib)s MiB, but %(sku)s reports %(expected)s")
EXPECTED_MIB = phrase("%(sku)s: %(expected)s MiB (%(citation)s)")
MARKETED_MIB = phrase("%(sku)s: ≈%(marketed)s MiB (marketed, GB read as GiB)")
AGAINST_MARKETED = phrase("%(gpu)s: %(mib)s MiB against ≈%(marketed)s marketed")
DECLARED_GIB = phrase("%(gpu)s: %(mib)s MiB, %(gib)s GiB declared")
GIB_DECLARED = phrase("%(gib)s GiB declared")
MIB = phrase("%(mib)s MiB")
PROBES_PASSED = phrase("%(ok)s/%(total)s passed, %(gib)s GiB touched")
DECLARED_MEMORY_FAIL = 0.15


def checks(facts: Facts, context: Context) -> list[Check]:
    return [
        check_device_count(facts, context),
        check_sku(facts, context),
        check_memory(facts, context),
        check_alloc_probe(facts),
        check_sources_agree(facts),
        check_interposer(facts),
    ]


def _record(gpu: dict) -> dict:
    """What one GPU claims to be: NVML first, then what the runtime and PCI add."""
    nvml, cuda, pci = gpu.get("nvml") or {}, gpu.get("cuda") or {}, gpu.get("pci") or {}
    return {
        "subject": gpu.get("uuid") or gpu.get("pci_bus_id") or "?",
        "name": cuda.get("name") or nvml.get("name") or pci.get("name"),
        "pci_device_id": pci.get("pci_device_id") or nvml.get("pci_device_id"),
        "memory_mib": cuda.get("memory_total_mib") or nvml.get("memory_total_mib"),
        "nvml_memory_mib": nvml.get("memory_total_mib"),
        "ecc": nvml.get("ecc_mode_current"),
        "mig": nvml.get("mig_mode_current") == "Enabled",
    }


def measured_count(facts: Facts) -> int | None:
    """The runtime's count when it ran (docs/rules/evidence.md#identity), else NVML's, else
    PCI's."""
    counts, sources = facts.gpu_count or {}, facts.sources or {}
    for source, status_key in (("cuda", "cuda_runtime"), ("nvml", "nvml"), ("pci", "pci")):
        if (sources.get(status_key) or {}).get("status") == "ok" and counts.get(source):
            return counts[source]
    if any(v is not None for v in counts.values()):
        return max(v or 0 for v in counts.values())
    return None


def expected_per_node(declared: dict) -> int | None:
    if declared.get("cards_per_node"):
        return int(declared["cards_per_node"])
    count = declared.get("accelerator_count")
    # A harness run sees one node; a total above one node's worth says nothing per node.
    return int(count) if count and int(count) <= 8 else None


def check_device_count(facts: Facts, context: Context) -> Check:
    measured, expected = measured_count(facts), expected_per_node(context.declared)
    check = Check(
        "identity.device_count",
        "identity",
        phrase("Device count on the node"),
        NOT_MEASURED,
        measured=measured,
        expected=expected,
        tolerance=EXACT,
        source=RUNTIME_CROSS_CHECK,
    )
    if measured is None:
        check.detail = phrase("The bundle has no inventory.")
        return check
    if expected is None:
        check.status = WARN if measured else FAIL
        check.detail = phrase("The offer does not declare cards per node; compare by hand.")
        return check
    check.status = PASS if measured == expected else FAIL
    if measured != expected:
        check.detail = phrase("%(seen)s GPU(s) seen, %(declared)s declared per node.") % {
            "seen": measured,
            "declared": expected,
        }
    return check


def check_sku(facts: Facts, context: Context) -> Check:
    """SKU from the PCI id against the name string and the declared model."""
    declared_text = context.declared.get("accelerator_model")
    declared = datasheet.by_name(declared_text)
    check = Check(
        "identity.sku",
        "identity",
        phrase("Accelerator model (PCI id, name, declared)"),
        NOT_MEASURED,
        expected=declared.name if declared else declared_text,
        tolerance=phrase("same SKU from PCI id, name and declaration"),
        source=f"{NVML_SAME_GPU}; " + phrase("the vendor's datasheet for the card"),
    )
    records = [_record(g) for g in facts.gpus]
    if not records:
        check.detail = phrase("No GPU in the inventory.")
        if measured_count(facts) == 0:
            check.status, check.measured = FAIL, phrase("no GPU")
        return check
    problems, seen = [], []
    for record in records:
        by_pci = datasheet.by_pci_id(record["pci_device_id"])
        by_name = datasheet.by_name(record["name"])
        seen.append(SEEN % {"name": record["name"], "pci_id": record["pci_device_id"] or NO_PCI_ID})
        if by_pci and by_name and by_pci.key != by_name.key:
            problems.append(
                SPOOFED
                % {
                    "gpu": record["subject"],
                    "name": by_name.name,
                    "pci_id": record["pci_device_id"],
                    "actual": by_pci.name,
                }
            )
        actual = by_pci or by_name
        if declared and actual and actual.key != declared.key:
            problems.append(
                NOT_DECLARED
                % {"gpu": record["subject"], "actual": actual.name, "declared": declared.name}
            )
        if declared and actual is None:
            problems.append(NOT_DECLARED_MODEL % {"gpu": record["subject"], "name": record["name"]})
    check.measured = "; ".join(sorted(set(seen)))
    if problems:
        check.status, check.detail = FAIL, "; ".join(problems)
    elif declared is None:
        check.status = WARN
        check.detail = phrase("The declared model is not in the datasheet table; compare by hand.")
    elif not all(datasheet.by_pci_id(r["pci_device_id"]) for r in records):
        check.status = WARN
        check.detail = phrase(
            "No PCI id to confirm the name (names can be rewritten in user space)."
        )
    else:
        check.status = PASS
    return check


def check_memory(facts: Facts, context: Context) -> Check:
    check = Check(
        "identity.memory",
        "identity",
        phrase("Memory per card against the datasheet and the declaration"),
        NOT_MEASURED,
        tolerance=phrase("±%(share)s of the driver-reported MiB")
        % {"share": f"{datasheet.MEMORY_TOLERANCE:.1%}"},
        source=phrase(
            "the vendor's datasheet memory size, less ECC reserve (NVIDIA NVML memory info)"
        ),
    )
    records = [r for r in map(_record, facts.gpus) if r["nvml_memory_mib"] or r["memory_mib"]]
    if not records:
        return check
    problems, warnings, expected_values = [], [], set()
    declared_gib = context.declared.get("memory_per_card_gib")
    declared_sku = datasheet.by_name(context.declared.get("accelerator_model"))
    for record in records:
        mib = record["nvml_memory_mib"] or record["memory_mib"]
        if record["mig"]:
            warnings.append(MIG_ON % {"gpu": record["subject"]})
        # The memory must fit every identity claimed: the PCI id's, the name's, the offer's.
        claimed = {
            s.key: s
            for s in (
                datasheet.by_pci_id(record["pci_device_id"]),
                datasheet.by_name(record["name"]),
                declared_sku,
            )
            if s is not None
        }
        for sku in claimed.values():
            expected, fact = datasheet.expected_memory_mib(
                sku, ecc_enabled=record["ecc"] != "Disabled"
            )
            if expected is not None:
                expected_values.add(
                    EXPECTED_MIB
                    % {"sku": sku.name, "expected": expected, "citation": fact.citation}
                )
                if abs(mib - expected) > expected * datasheet.MEMORY_TOLERANCE:
                    problems.append(
                        MIB_BUT
                        % {
                            "gpu": record["subject"],
                            "mib": mib,
                            "sku": sku.name,
                            "expected": expected,
                        }
                    )
            else:
                marketed = sku.marketed_memory_gb.value * 1024
                expected_values.add(MARKETED_MIB % {"sku": sku.name, "marketed": marketed})
                if abs(mib - marketed) > marketed * datasheet.MARKETED_MEMORY_TOLERANCE:
                    warnings.append(
                        AGAINST_MARKETED
                        % {"gpu": record["subject"], "mib": mib, "marketed": marketed}
                    )
        if declared_gib:
            declared_mib = float(declared_gib) * 1024
            off = abs(mib - declared_mib) / declared_mib
            # Written specs round and ECC hides ≈6 % on GDDR parts: a small gap is a finding,
            # a large one (a different card) a failure.
            line = DECLARED_GIB % {"gpu": record["subject"], "mib": mib, "gib": declared_gib}
            if off > DECLARED_MEMORY_FAIL:
                problems.append(line)
            elif off > datasheet.MARKETED_MEMORY_TOLERANCE:
                warnings.append(line)
    check.measured = ", ".join(
        sorted({MIB % {"mib": r["nvml_memory_mib"] or r["memory_mib"]} for r in records})
    )
    check.expected = "; ".join(sorted(expected_values)) or (
        GIB_DECLARED % {"gib": declared_gib} if declared_gib else None
    )
    if problems:
        check.status, check.detail = FAIL, "; ".join(problems + warnings)
    elif warnings:
        check.status, check.detail = WARN, "; ".join(warnings)
    elif expected_values:
        check.status = PASS
    return check


def check_alloc_probe(facts: Facts) -> Check:
    check = Check(
        "identity.alloc_probe",
        "identity",
        phrase("Allocate-and-touch probe"),
        NOT_MEASURED,
        expected=phrase("every probe writes and reads back its pattern"),
        tolerance=phrase("0 mismatched elements"),
        source=phrase(
            "allocating and touching the declared memory shows what the card really holds"
        ),
    )
    ran = [p for p in facts.alloc_probe if "ok" in p]
    skipped = [p.get("skipped") for p in facts.alloc_probe if "skipped" in p]
    if not ran:
        check.detail = "; ".join(s for s in skipped if s) or phrase("No probe in the bundle.")
        return check
    failed = [p for p in ran if not p["ok"]]
    touched = sum(p.get("touched_bytes") or 0 for p in ran)
    check.measured = PROBES_PASSED % {
        "ok": len(ran) - len(failed),
        "total": len(ran),
        "gib": f"{touched / 2**30:.1f}",
    }
    check.status = FAIL if failed else PASS
    if failed:
        check.detail = "; ".join(
            f"{p.get('device')}: {p['error']}"
            if p.get("error")
            else phrase("%(device)s: mismatch") % {"device": p.get("device")}
            for p in failed
        )
    return check


def _raw_xml_disagreements(facts: Facts) -> list[str]:
    """The parsed NVML records must say what the raw nvidia-smi XML artifact says."""
    if facts.raw_xml_gpus is None:
        return []
    problems = []
    parsed = {(g.get("nvml") or {}).get("pci_bus_id"): g.get("nvml") or {} for g in facts.gpus}
    for raw in facts.raw_xml_gpus:
        record = parsed.get(raw["pci_bus_id"])
        if record is None:
            problems.append(
                phrase("%(bus)s is in the raw XML but not in the inventory")
                % {"bus": raw["pci_bus_id"]}
            )
            continue
        for name in ("name", "pci_device_id", "memory_total_mib"):
            if raw.get(name) is not None and record.get(name) != raw[name]:
                problems.append(
                    f"{raw['pci_bus_id']}: inventory {name} {record.get(name)!r}, "
                    f"raw XML {raw[name]!r}"
                )
    return problems


def check_sources_agree(facts: Facts) -> Check:
    """NVML, the runtime and PCI config space agree; the parsed inventory matches the raw XML."""
    check = Check(
        "identity.sources_agree",
        "identity",
        phrase("NVML, runtime and sysfs agree"),
        NOT_MEASURED,
        expected=phrase("same count, names, PCI ids and memory from every source"),
        tolerance=phrase("exact; runtime memory within the driver's reservation"),
        source=NVML_SAME_GPU,
    )
    counts = {
        s: n
        for s, n in (facts.gpu_count or {}).items()
        if (facts.sources.get({"cuda": "cuda_runtime"}.get(s, s)) or {}).get("status") == "ok"
    }
    check.measured = ", ".join(f"{s}: {n}" for s, n in sorted(counts.items())) or None
    problems = []
    if len(counts) >= 2 and len(set(counts.values())) > 1:
        problems.append(
            phrase("sources count different GPUs (%(counts)s)") % {"counts": check.measured}
        )
    for gpu in facts.gpus:
        nvml, cuda, pci = gpu.get("nvml") or {}, gpu.get("cuda") or {}, gpu.get("pci") or {}
        subject = gpu.get("uuid") or gpu.get("pci_bus_id")
        if nvml.get("name") and cuda.get("name") and nvml["name"] != cuda["name"]:
            problems.append(
                phrase("%(gpu)s: NVML %(nvml)s, runtime %(runtime)s")
                % {"gpu": subject, "nvml": repr(nvml["name"]), "runtime": repr(cuda["name"])}
            )
        for name in ("pci_device_id", "pci_subsystem_device_id"):
            if nvml.get(name) and pci.get(name) and nvml[name] != pci[name]:
                problems.append(f"{subject}: NVML {name} {nvml[name]}, PCI {pci[name]}")
        low_high = _runtime_memory_window(nvml)
        if low_high and cuda.get("memory_total_mib"):
            low, high = low_high
            if not low <= cuda["memory_total_mib"] <= high:
                problems.append(
                    phrase("%(gpu)s: runtime sees %(runtime)s MiB, NVML %(nvml)s MiB")
                    % {
                        "gpu": subject,
                        "runtime": cuda["memory_total_mib"],
                        "nvml": nvml["memory_total_mib"],
                    }
                )
    problems += _raw_xml_disagreements(facts)
    if problems:
        check.status, check.detail = FAIL, "; ".join(problems)
    elif len(counts) >= 2 or facts.raw_xml_gpus:
        check.status = PASS
    else:
        check.detail = phrase("Only one source ran; nothing to compare.")
    return check


def _runtime_memory_window(nvml: dict) -> tuple[float, float] | None:
    if not nvml.get("memory_total_mib"):
        return None
    total, reserved = nvml["memory_total_mib"], nvml.get("memory_reserved_mib") or 0
    return (total - reserved) * 0.97, total * (1 + datasheet.MEMORY_TOLERANCE)


def check_interposer(facts: Facts) -> Check:
    check = Check(
        "identity.interposer",
        "identity",
        phrase("No user-space interposer (LD_PRELOAD, ld.so.preload)"),
        NOT_MEASURED,
        expected=phrase("LD_PRELOAD empty, /etc/ld.so.preload empty"),
        tolerance=phrase("none allowed"),
        source=phrase("GPU-sharing layers (such as HAMi-core) can rewrite what NVML reports"),
    )
    shims = facts.shims
    if not shims:
        return check
    found = []
    if shims.get("ld_preload_env"):
        found.append(f"LD_PRELOAD={shims['ld_preload_env']}")
    if ((shims.get("ld_so_preload") or {}).get("content") or "").strip():
        found.append(phrase("/etc/ld.so.preload is not empty"))
    check.measured = "; ".join(found) or phrase("none")
    check.status = FAIL if found else PASS
    return check
