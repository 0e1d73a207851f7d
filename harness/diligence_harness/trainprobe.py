"""Training acceptance: a reference training step on one card, then on every card.

Method (docs/metrics.md#reference-training-step):

- a small decoder-only transformer (token and position embeddings, pre-norm
  encoder blocks with a causal mask, a linear head), its size picked from the
  first card's free memory on a GPU and tiny on the CPU; weights, data and
  order all seeded, AdamW, next-token cross-entropy on seeded random tokens;
- ``steps`` timed training steps (forward, backward, optimizer step, the device
  synchronised after each) on one card, after ``warmup`` untimed ones; then the
  same with DistributedDataParallel over every card (torch.distributed: NCCL on
  GPUs; gloo on the CPU with ``ranks`` processes, which only shows the pipeline
  works), one process per rank; each rank's nanoseconds, batch size and loss of
  every step are kept, and the digest of its parameters after the last step
  (data parallelism leaves the same parameters on every card);
- a checkpoint of the one-card run (model and optimizer state) written with
  torch.save and fsync'd, its cached pages dropped, then read back into a fresh
  model and optimizer: bytes and nanoseconds of each, and the SHA-256 of the
  state saved and of the state restored, which must be equal.

The server recomputes samples/s per card, the scaling efficiency and the
checkpoint rates from these raw figures; the figures stated here are advisory.
torch is optional and imported lazily: without it the step says why it was not
measured.
"""

import datetime
import hashlib
import json
import math
import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass

from diligence_harness.clock import now_ns

SEED = 1234
STEPS = 20
WARMUP = 3
TIMEOUT_S = 600.0
CPU_RANKS = 2
MAX_STEPS = 1000
# The checkpoint is written where it would be in production; never more than this.
MAX_CHECKPOINT_BYTES = 16 << 30
LEARNING_RATE = 3e-4


@dataclass(frozen=True)
class ModelConfig:
    """The reference model and its batch per card."""

    name: str
    d_model: int
    layers: int
    heads: int
    seq: int
    vocab: int
    batch: int

    @property
    def parameters(self) -> int:
        """Weights: embeddings, per block attention (4 d² + 4 d) and MLP (8 d² + 5 d) and two
        norms (4 d), the final norm and the head (no bias)."""
        d = self.d_model
        block = 4 * d * d + 4 * d + 8 * d * d + 5 * d + 4 * d
        return self.vocab * d + self.seq * d + self.layers * block + 2 * d + d * self.vocab


# Smallest first; on a GPU the largest whose free-memory floor the first card clears.
SIZES = (
    ModelConfig("tiny", d_model=64, layers=2, heads=4, seq=32, vocab=512, batch=8),
    ModelConfig("small", d_model=512, layers=8, heads=8, seq=512, vocab=32768, batch=8),
    ModelConfig("medium", d_model=768, layers=12, heads=12, seq=1024, vocab=32768, batch=8),
    ModelConfig("large", d_model=1024, layers=12, heads=16, seq=1024, vocab=32768, batch=16),
)
SIZE_NAMES = tuple(size.name for size in SIZES)
# Free memory each size needs on a card (weights, AdamW state, activations, with room).
FREE_FLOOR = {"tiny": 0, "small": 8 << 30, "medium": 20 << 30, "large": 60 << 30}


def size_for(free_bytes: int | None, cuda: bool) -> ModelConfig:
    """The reference model for a card with ``free_bytes`` free; tiny on the CPU."""
    if not cuda or free_bytes is None:
        return SIZES[0]
    fitting = [size for size in SIZES[1:] if free_bytes >= FREE_FLOOR[size.name]]
    return fitting[-1] if fitting else SIZES[0]


def size_named(name: str) -> ModelConfig:
    return next(size for size in SIZES if size.name == name)


# --- arithmetic (unit-tested without torch) -----------------------------------------


def samples_per_s(ranks: list[dict]) -> float | None:
    """Samples a second over the ranks: every rank's batch × steps over the time of the
    steps, each step as long as its slowest rank."""
    runs = [r for r in ranks if r.get("step_ns")]
    steps = min((len(r["step_ns"]) for r in runs), default=0)
    if not steps:
        return None
    seconds = sum(max(r["step_ns"][i] for r in runs) for i in range(steps)) / 1e9
    samples = sum(r["batch_size"] * steps for r in runs)
    return samples / seconds if seconds > 0 else None


def scaling_efficiency(one_card: float | None, all_cards: float | None, cards: int) -> float | None:
    """All cards' samples/s over cards × one card's: 1.0 is perfect scaling."""
    if not one_card or not all_cards or cards < 1:
        return None
    return all_cards / (cards * one_card)


def phase_summary(ranks: list[dict]) -> dict:
    """The figures this run states for a phase (the server recomputes them)."""
    rate = samples_per_s(ranks)
    cards = len(ranks)
    return {
        "samples_per_s": rate,
        "samples_per_s_per_card": rate / cards if rate is not None and cards else None,
    }


def finite(value: float) -> float | None:
    """A loss as JSON carries it: a number, or null where it is NaN or infinite."""
    return value if math.isfinite(value) else None


# --- the step -------------------------------------------------------------------------


class Unavailable(Exception):
    """No training step could be run here; the message says why."""


def run_train(
    *,
    steps: int = STEPS,
    warmup: int = WARMUP,
    cpu_ranks: int = CPU_RANKS,
    size: str = "auto",
    checkpoint_path: str | None = None,
    timeout_s: float = TIMEOUT_S,
) -> dict:
    """The reference training step on one card and on all; raises ``Unavailable``."""
    from diligence_harness.torchprobe import load_torch

    if not 1 <= steps <= MAX_STEPS:
        raise Unavailable(f"--train-steps must be 1 to {MAX_STEPS}")
    torch, reason = load_torch()
    if torch is None:
        raise Unavailable(f"{reason}: the reference training step needs it")
    cuda = bool(torch.cuda.is_available() and torch.cuda.device_count() > 0)
    free = None
    if cuda:
        free = torch.cuda.mem_get_info(0)[0]
    config = size_for(free, cuda) if size == "auto" else size_named(size)
    cards = torch.cuda.device_count() if cuda else max(1, cpu_ranks)
    backend = "nccl" if cuda else "gloo"
    bf16 = bool(cuda and torch.cuda.is_bf16_supported())
    limits = {
        "steps": steps,
        "warmup": warmup,
        "timeout_s": timeout_s,
        "max_checkpoint_bytes": MAX_CHECKPOINT_BYTES,
    }
    result: dict = {
        "backend": "cuda" if cuda else "cpu",
        "devices": _devices(torch, cuda),
        "model": {
            "kind": "decoder-only transformer",
            **asdict(config),
            "ffn": 4 * config.d_model,
            "parameters": config.parameters,
            "dtype": "bfloat16 autocast" if bf16 else "float32",
            "optimizer": "AdamW",
            "learning_rate": LEARNING_RATE,
            "seed": SEED,
            "sized_from_free_bytes": free,
        },
        "one_card": None,
        "all_cards": None,
        "checkpoint": None,
        "limits": limits,
        "skipped": [],
    }
    folder = checkpoint_path or tempfile.mkdtemp(prefix="diligence-train-")
    if not os.path.isdir(folder):
        raise Unavailable(f"{folder} is not a directory")
    work = tempfile.mkdtemp(prefix="diligence-train-", dir=folder)
    deadline = time.monotonic() + timeout_s
    try:
        plan = {"steps": steps, "warmup": warmup, "config": asdict(config), "bf16": bf16}
        # On the CPU one rank gets the share of the cores it gets among all the ranks.
        plan["cpu_threads"] = max(1, (os.cpu_count() or 1) // cards)
        one = run_ranks("none", 1, plan | {"checkpoint": work}, deadline)
        result["one_card"] = {"cards": 1, "backend": "none", "ranks": one} | phase_summary(one)
        result["checkpoint"] = one[0].pop("checkpoint", None)
        if result["checkpoint"] is not None:
            result["checkpoint"]["path"] = folder
        if cards > 1:
            try:
                every = run_ranks(backend, cards, plan, deadline)
            except Exception as exc:  # the one-card figures stand; say why the rest is absent
                reason = f"{type(exc).__name__}: {exc}"[:300]
                result["skipped"].append({"what": "all cards", "reason": reason})
            else:
                summary = phase_summary(every)
                result["all_cards"] = {"cards": cards, "backend": backend, "ranks": every}
                result["all_cards"] |= summary | {
                    "scaling_efficiency": scaling_efficiency(
                        result["one_card"]["samples_per_s"], summary["samples_per_s"], cards
                    )
                }
        else:
            result["skipped"].append({"what": "all cards", "reason": "one card: nothing to scale"})
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if not checkpoint_path:
            shutil.rmtree(folder, ignore_errors=True)
    return result


def _devices(torch, cuda: bool) -> list[dict]:
    if not cuda:
        return [{"device": "cpu", "name": "cpu", "uuid": None}]
    from diligence_harness.torchprobe import cuda_devices

    return [
        {"device": f"cuda:{d['cuda_index']}", "name": d["name"], "uuid": d["uuid"]}
        for d in cuda_devices(torch)
    ]


def run_ranks(backend: str, ranks: int, plan: dict, deadline: float) -> list[dict]:
    """One process per rank (spawned, so each has its own CUDA context); their records."""
    import multiprocessing

    from diligence_harness.nodeprobe import _free_port

    context = multiprocessing.get_context("spawn")
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="diligence-train-ranks-") as folder:
        processes = [
            context.Process(
                target=train_worker,
                args=(rank, ranks, backend, port, plan, folder, deadline - time.monotonic()),
                daemon=True,
            )
            for rank in range(ranks)
        ]
        for process in processes:
            process.start()
        for process in processes:
            process.join(max(deadline - time.monotonic(), 0.1))
        late = [p for p in processes if p.is_alive()]
        for process in late:
            process.terminate()
            process.join(5)
        if late:
            raise TimeoutError("the training step did not finish in its time limit")
        answers = []
        for rank in range(ranks):
            path = os.path.join(folder, f"rank-{rank}.json")
            if not os.path.exists(path):
                raise RuntimeError(f"rank {rank} ended without a result")
            with open(path, encoding="utf-8") as handle:
                answers.append(json.load(handle))
    errors = [a["error"] for a in answers if a.get("error")]
    if errors:
        raise RuntimeError(errors[0])
    return answers


# --- one rank ----------------------------------------------------------------------------


def build_model(torch, config: dict):
    """The reference model, its weights from the seeded generator."""
    nn = torch.nn

    class Reference(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            d = config["d_model"]
            self.embed = nn.Embedding(config["vocab"], d)
            self.position = nn.Embedding(config["seq"], d)
            block = nn.TransformerEncoderLayer(
                d, config["heads"], 4 * d, dropout=0.0, batch_first=True, norm_first=True
            )
            self.blocks = nn.TransformerEncoder(block, config["layers"], enable_nested_tensor=False)
            self.norm = nn.LayerNorm(d)
            self.head = nn.Linear(d, config["vocab"], bias=False)

        def forward(self, tokens):
            length = tokens.shape[1]
            positions = torch.arange(length, device=tokens.device)
            x = self.embed(tokens) + self.position(positions)
            mask = nn.Transformer.generate_square_subsequent_mask(length, device=tokens.device)
            x = self.blocks(x, mask=mask, is_causal=True)
            return self.head(self.norm(x))

    return Reference()


def state_digest(torch, state) -> str:
    """SHA-256 over a nested state (dicts in key order, lists in order): each tensor's dtype,
    shape and bytes, each other value's repr."""
    digest = hashlib.sha256()

    def walk(value) -> None:
        if isinstance(value, dict):
            for key in sorted(value, key=str):
                digest.update(f"<{key}>".encode())
                walk(value[key])
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)
        elif isinstance(value, torch.Tensor):
            tensor = value.detach().to("cpu").contiguous()
            digest.update(f"{tensor.dtype}{tuple(tensor.shape)}".encode())
            flat = tensor.reshape(-1).view(torch.uint8)
            try:
                digest.update(flat.numpy().tobytes())
            except Exception:  # torch without numpy
                digest.update(bytes(flat.tolist()))
        else:
            digest.update(repr(value).encode())

    walk(state)
    return digest.hexdigest()


def _drop_cache(path: str) -> bool:
    """Drop the file's cached pages so the restore reads the disk."""
    try:
        with open(path, "rb") as handle:
            os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    except (AttributeError, OSError):
        return False
    return True


def _load(torch, path: str, device):
    try:
        return torch.load(path, map_location=device, weights_only=True)
    except TypeError:  # torch before weights_only
        return torch.load(path, map_location=device)


def checkpoint_round_trip(torch, model, optimizer, config: dict, device, folder: str, sync):
    """Save the model and optimizer, drop the cache, restore into fresh ones; bytes, ns and
    the digest of both states."""
    path = os.path.join(folder, "reference-checkpoint.pt")
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    saved_digest = state_digest(torch, state)
    sync()
    start = now_ns()
    with open(path, "wb") as handle:
        torch.save(state, handle)
        handle.flush()
        os.fsync(handle.fileno())
    save_ns = now_ns() - start
    size = os.path.getsize(path)
    if size > MAX_CHECKPOINT_BYTES:
        os.unlink(path)
        raise RuntimeError(f"the checkpoint of {size} bytes is over the limit")
    dropped = _drop_cache(path)
    torch.manual_seed(SEED + 1)  # other weights: the restore must bring the saved ones back
    fresh = build_model(torch, config).to(device)
    fresh_optimizer = torch.optim.AdamW(fresh.parameters(), lr=LEARNING_RATE)
    sync()
    start = now_ns()
    loaded = _load(torch, path, device)
    fresh.load_state_dict(loaded["model"])
    fresh_optimizer.load_state_dict(loaded["optimizer"])
    sync()
    restore_ns = now_ns() - start
    restored_digest = state_digest(
        torch, {"model": fresh.state_dict(), "optimizer": fresh_optimizer.state_dict()}
    )
    os.unlink(path)
    return {
        "format": "torch.save of the model and AdamW state dicts, fsync'd",
        "path": folder,
        "bytes": size,
        "save_ns": save_ns,
        "restore_ns": restore_ns,
        "cache_dropped": dropped,
        "saved_sha256": saved_digest,
        "restored_sha256": restored_digest,
    }


def train_worker(rank, ranks, backend, port, plan, folder, timeout_s) -> None:
    """One rank: build the seeded model, warm up, time each step; writes rank-<r>.json."""
    answer: dict = {"rank": rank}
    try:
        answer |= _train(rank, ranks, backend, port, plan, max(timeout_s, 1.0))
    except Exception as exc:
        answer["error"] = f"rank {rank}: {type(exc).__name__}: {exc}"[:500]
    with open(os.path.join(folder, f"rank-{rank}.json"), "w", encoding="utf-8") as handle:
        json.dump(answer, handle)


def _train(rank, ranks, backend, port, plan, timeout_s) -> dict:
    import torch

    config = plan["config"]
    cuda = torch.cuda.is_available() and torch.cuda.device_count() > 0
    device = torch.device("cuda", rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = True
    else:
        torch.set_num_threads(plan["cpu_threads"])
    distributed = backend != "none"
    if distributed:
        import torch.distributed as dist

        dist.init_process_group(
            backend,
            init_method=f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=ranks,
            timeout=datetime.timedelta(seconds=timeout_s),
        )
    torch.manual_seed(SEED)
    model = build_model(torch, config).to(device)
    trained = model
    if distributed:
        from torch.nn.parallel import DistributedDataParallel

        trained = DistributedDataParallel(model, device_ids=[rank] if cuda else None)
    optimizer = torch.optim.AdamW(trained.parameters(), lr=LEARNING_RATE)
    generator = torch.Generator(device="cpu").manual_seed(SEED + 1000 + rank)
    batches = [
        torch.randint(0, config["vocab"], (config["batch"], config["seq"]), generator=generator)
        for _ in range(4)
    ]
    batches = [b.to(device) for b in batches]

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize(device)

    def step(tokens) -> float:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bool(plan["bf16"])):
            logits = trained(tokens)
        loss = torch.nn.functional.cross_entropy(
            logits[:, :-1].float().reshape(-1, config["vocab"]), tokens[:, 1:].reshape(-1)
        )
        loss.backward()
        optimizer.step()
        return float(loss.item())

    for i in range(plan["warmup"]):
        step(batches[i % len(batches)])
    sync()
    if distributed:
        if cuda:
            dist.barrier(device_ids=[rank])
        else:
            dist.barrier()
    times, losses = [], []
    for i in range(plan["steps"]):
        sync()
        start = now_ns()
        loss = step(batches[i % len(batches)])
        sync()
        times.append(now_ns() - start)
        losses.append(finite(loss))
    answer = {
        "device": str(device),
        "batch_size": config["batch"],
        "seq": config["seq"],
        "warmup_steps": plan["warmup"],
        "step_ns": times,
        "loss": losses,
        "params_sha256": state_digest(torch, model.state_dict()),
    }
    if distributed:
        dist.destroy_process_group()
    elif plan.get("checkpoint"):
        answer["checkpoint"] = checkpoint_round_trip(
            torch, model, optimizer, config, device, plan["checkpoint"], sync
        )
    return answer
