"""What the harness's soak and correctness runs measured, as the acceptance rules read it.

The evidence app owns the bundles; the acceptance app owns the pass criteria
(seed 000 §五). This module is the contract between them: plain, frozen values
recomputed by the server from a bundle's raw soak probes and correctness answers,
never the harness's own summary.
"""

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class SoakMeasurement:
    """One soak run: the endpoint and the GPUs watched for a while."""

    bundle_id: int
    bundle_sha256: str
    measured_at: datetime
    duration_s: float  # how long the soak actually watched, seconds
    restarts_at_s: tuple[float, ...]  # endpoint, host or GPU restarts, seconds after the start
    outages: tuple[tuple[float, float], ...]  # endpoint unreachable from .. to, seconds
    xid_events: tuple[tuple[float, str, int], ...]  # (seconds, GPU UUID, Xid code)
    ecc_uncorrected: int  # uncorrected ECC errors that appeared during the soak, all GPUs
    health_checks_total: int
    health_checks_ok: int


@dataclass(frozen=True)
class CorrectnessItem:
    """One fixed input sent at temperature 0, compared with the reference output."""

    item_id: str
    core: bool  # in the core set, which must pass in full
    passed: bool
    expected: str
    received: str
    reason: str  # why it failed ("" when it passed)


@dataclass(frozen=True)
class CorrectnessMeasurement:
    """One correctness run against a reference file made on a local baseline."""

    bundle_id: int
    bundle_sha256: str
    measured_at: datetime
    reference_name: str
    reference_sha256: str
    tolerance: str  # how answers were compared, in words (e.g. "exact after whitespace trim")
    items: tuple[CorrectnessItem, ...]
