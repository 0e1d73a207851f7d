"""Demo: the reference training step on the leading offer's eight H200 cards, made up.

As the harness's `train` step would record it: the large reference model (219 M
parameters, bfloat16) at about 150 samples/s on one card and 140 per card over all
eight with DistributedDataParallel (93 % scaling), losses falling step by step, the
same parameters on every card, and a 2.6 GB checkpoint saved at 2 GB/s and restored
at 3.5 GB/s, equal to what was saved. Marked as demo data with the rest of the demo
bundle: nothing here was measured.
"""

import hashlib

CARDS = 8
STEPS = 20
BATCH = 16
SEQ = 1024
PARAMETERS = 219_314_176  # the harness's large reference model
JITTER = (1.0, 0.996, 1.004, 1.002, 0.998)


def _rank(rank: int, step_ns: int, salt: str) -> dict:
    return {
        "rank": rank,
        "device": f"cuda:{rank}",
        "batch_size": BATCH,
        "seq": SEQ,
        "warmup_steps": 3,
        "step_ns": [int(step_ns * JITTER[(i + rank) % len(JITTER)]) for i in range(STEPS)],
        "loss": [round(10.41 - 0.034 * i + 0.002 * rank, 4) for i in range(STEPS)],
        "params_sha256": hashlib.sha256(f"demo-train-{salt}".encode()).hexdigest(),
    }


def train_result(uuids: list[str]) -> dict:
    one = [_rank(0, 106_700_000, "one-card")]
    every = [_rank(r, 114_300_000, "all-cards") for r in range(CARDS)]
    size = PARAMETERS * 12 + 412_345  # weights and two AdamW moments, fp32
    state = hashlib.sha256(b"demo-checkpoint").hexdigest()
    return {
        "backend": "cuda",
        "devices": [
            {"device": f"cuda:{i}", "name": "NVIDIA H200", "uuid": uuid}
            for i, uuid in enumerate(uuids[:CARDS])
        ],
        "model": {
            "kind": "decoder-only transformer",
            "name": "large",
            "d_model": 1024,
            "layers": 12,
            "heads": 16,
            "seq": SEQ,
            "vocab": 32768,
            "batch": BATCH,
            "ffn": 4096,
            "parameters": PARAMETERS,
            "dtype": "bfloat16 autocast",
            "optimizer": "AdamW",
            "learning_rate": 0.0003,
            "seed": 1234,
            "sized_from_free_bytes": 148_000_000_000,
        },
        "one_card": {"cards": 1, "backend": "none", "ranks": one},
        "all_cards": {"cards": CARDS, "backend": "nccl", "ranks": every},
        "checkpoint": {
            "format": "torch.save of the model and AdamW state dicts, fsync'd",
            "path": "/mnt/nvme/checkpoints",
            "bytes": size,
            "save_ns": int(size / 2.0),
            "restore_ns": int(size / 3.5),
            "cache_dropped": True,
            "saved_sha256": state,
            "restored_sha256": state,
        },
        "limits": {"steps": STEPS, "warmup": 3, "timeout_s": 600.0},
        "skipped": [],
    }
