"""Standard-library fallback kernels for machines without torch.

They exist so the whole pipeline runs anywhere; their numbers describe the
Python interpreter and memmove, not the accelerator, and the bundle says so.
"""

from diligence_harness.clock import now_ns
from diligence_harness.prompts import splitmix64


def _seeded_matrix(seed: int, n: int) -> list[list[float]]:
    state, rows = seed, []
    for _ in range(n):
        row = []
        for _ in range(n):
            state, value = splitmix64(state)
            row.append(value / 2**64 - 0.5)  # uniform in [-0.5, 0.5): seeded, never zeros
        rows.append(row)
    return rows


def _matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    columns = list(zip(*b))
    return [[sum(x * y for x, y in zip(row, col)) for col in columns] for row in a]


def python_matmul_timings(seed: int, n: int, warmup: int, iters: int) -> tuple[int, int, list[int]]:
    a, b = _seeded_matrix(seed, n), _seeded_matrix(seed + 1, n)
    for _ in range(warmup):
        _matmul(a, b)
    times = []
    for _ in range(iters):
        start = now_ns()
        _matmul(a, b)
        times.append(now_ns() - start)
    return n, warmup, times


def python_copy_timings(elems: int, warmup: int, iters: int) -> tuple[int, list[int]]:
    """bytearray slice assignment is a C memmove: a real (host) copy bandwidth."""
    source = bytearray(b"\x5a") * (elems * 4)
    target = bytearray(len(source))
    for _ in range(warmup):
        target[:] = source
    times = []
    for _ in range(iters):
        start = now_ns()
        target[:] = source
        times.append(now_ns() - start)
    return elems, times
