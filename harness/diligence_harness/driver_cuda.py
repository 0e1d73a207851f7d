"""Which driver can report which CUDA version: the harness's advisory check of nvidia-smi's pair.

`nvidia-smi` prints, as `cuda_version`, the newest CUDA the installed driver supports,
so the driver's branch must lie between that version's minimum driver and the next
version's (docs/rules/evidence.md#environment-checks). A pair outside that range was
not printed by a real driver. The server re-derives the same findings from the raw
output and decides; the harness records them so the bundle says what it saw.

`CUDA_MINIMUM_DRIVER` is the server's table (`apps/evidence/gpu_tables.py`), copied
because the harness uses the standard library alone; a server test keeps the two equal,
and the findings' words equal to the server's (`apps/evidence/inventory.py`).
Source: NVIDIA CUDA Toolkit release notes, table "CUDA Toolkit and Corresponding Driver
Versions" (Linux x86_64), the GA release of each minor version.
"""

import re

CUDA_MINIMUM_DRIVER: dict[tuple[int, int], str] = {
    (9, 0): "384.81",
    (9, 1): "390.46",
    (9, 2): "396.26",
    (10, 0): "410.48",
    (10, 1): "418.39",
    (10, 2): "440.33",
    (11, 0): "450.36.06",
    (11, 1): "455.23",
    (11, 2): "460.27.03",
    (11, 3): "465.19.01",
    (11, 4): "470.42.01",
    (11, 5): "495.29.05",
    (11, 6): "510.39.01",
    (11, 7): "515.43.04",
    (11, 8): "520.61.05",
    (12, 0): "525.60.13",
    (12, 1): "530.30.02",
    (12, 2): "535.54.03",
    (12, 3): "545.23.06",
    (12, 4): "550.54.14",
    (12, 5): "555.42.02",
    (12, 6): "560.28.03",
    # No CUDA 12.7 toolkit shipped, but the R565 drivers report 12.7 (public nvidia-smi
    # outputs of 565.57.01); the table has no row for it, so the bound is the branch.
    (12, 7): "565",
    (12, 8): "570.26",
    (12, 9): "575.51.03",
    (13, 0): "580.65.06",
    (13, 1): "590.44.01",
    (13, 2): "595.45.04",
}

_VERSION = re.compile(r"\d+(\.\d+)*")
_CUDA = re.compile(r"(\d+)\.(\d+)(\.\d+)?")

# The server's words (apps/evidence/inventory.py, MESSAGES), filled in the same way.
MESSAGES = {
    "driver_too_old": (
        "Driver %(driver)s cannot report CUDA %(cuda)s: that CUDA version needs a driver of "
        "branch %(branch)s or newer (%(minimum)s)."
    ),
    "driver_too_new": (
        "Driver %(driver)s cannot report CUDA %(cuda)s: nvidia-smi reports the newest CUDA the "
        "driver supports, and from driver branch %(branch)s that is CUDA %(next)s or newer."
    ),
    "cuda_unknown": (
        "nvidia-smi printed %(value)s as the CUDA version: unknown, not a pass (the driver's CUDA "
        "library may be missing or broken)."
    ),
    "driver_unknown": "nvidia-smi printed %(value)s as the driver version: unknown, not a pass.",
}


def cuda_bounds(cuda: tuple[int, int]) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """The table's CUDA version at or below ``cuda`` and the next one above it."""
    known = sorted(CUDA_MINIMUM_DRIVER)
    below = [v for v in known if v <= cuda]
    above = [v for v in known if v > cuda]
    return (below[-1] if below else None), (above[0] if above else None)


def driver_branch(version: str) -> int:
    return int(version.split(".", 1)[0])


def version_findings(driver_printed: str | None, cuda_printed: str | None) -> list[tuple]:
    """``(code, severity, message key, params)`` for nvidia-smi's driver and CUDA as printed
    (placeholders included; None where the element is absent), as the server judges them.
    Betas of a branch come before the toolkit's listed minimum and report the same CUDA
    version: only branches are compared."""
    found: list[tuple] = []
    driver_text = driver_printed or None
    driver = (
        tuple(int(p) for p in driver_text.split("."))
        if driver_text and _VERSION.fullmatch(driver_text)
        else None
    )
    if driver_text is not None and driver is None:
        found.append(("INV-DRIVER-CUDA", "warn", "driver_unknown", {"value": driver_text}))
    if cuda_printed is None:
        return found
    cuda = _CUDA.fullmatch(cuda_printed)
    if cuda is None:
        return [*found, ("INV-CUDA-UNKNOWN", "warn", "cuda_unknown", {"value": cuda_printed})]
    if driver is None:
        return found
    below, above = cuda_bounds((int(cuda[1]), int(cuda[2])))
    pair = {"driver": driver_text, "cuda": cuda_printed}
    if below is not None:
        minimum = CUDA_MINIMUM_DRIVER[below]
        branch = driver_branch(minimum)
        if driver[0] < branch:
            params = pair | {"minimum": minimum, "branch": branch}
            found.append(("INV-DRIVER-CUDA", "fail", "driver_too_old", params))
    if above is not None:
        branch = driver_branch(CUDA_MINIMUM_DRIVER[above])
        if driver[0] >= branch:
            params = pair | {"next": f"{above[0]}.{above[1]}", "branch": branch}
            found.append(("INV-DRIVER-CUDA", "fail", "driver_too_new", params))
    return found
