"""The `train` step: the reference training step end to end on the CPU (gloo, two ranks, a
tiny model, a temporary checkpoint directory) where torch is installed, the arithmetic and
the sizing without it, the step where torch is absent, and the recorded GPU example
against the schema (the GPU path runs only on a GPU)."""

import copy
import json
import os
import subprocess
import sys

import jsonschema
import pytest
from conftest import HARNESS_ROOT, fixture_path
from diligence_harness import schema, steps, trainprobe
from diligence_harness.steps import Evidence


def harness(*args: str, pythonpath: str | None = None) -> subprocess.CompletedProcess:
    """The harness in a process of its own; the caller's PYTHONPATH kept (where torch may be)."""
    paths = [HARNESS_ROOT, pythonpath or "", os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))
    return subprocess.run(
        [sys.executable, "-m", "diligence_harness", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _valid(bundle: dict) -> None:
    jsonschema.Draft202012Validator(schema.load_schema()).validate(bundle)
    assert schema.validate(bundle) == []


def recorded() -> dict:
    with open(fixture_path("constructed", "train-8x-h100-recorded-example.json")) as handle:
        return json.load(handle)


# --- end to end on the CPU --------------------------------------------------------------


def test_the_reference_training_step_runs_on_one_rank_then_two_over_gloo(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "train.json"
    checkpoints = tmp_path / "checkpoints"
    checkpoints.mkdir()
    done = harness(
        "train", "--train-steps", "3", "--train-warmup", "1", "--train-ranks", "2",
        "--train-checkpoint-path", str(checkpoints), "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    bundle = json.loads(out.read_bytes())
    _valid(bundle)
    step = bundle["steps"]["train"]
    assert step["status"] == "ok", step["reason"]
    result = step["result"]
    assert result["backend"] == "cpu" and result["model"]["name"] == "tiny"
    assert result["skipped"] == []

    one, every = result["one_card"], result["all_cards"]
    assert (one["cards"], one["backend"], len(one["ranks"])) == (1, "none", 1)
    assert (every["cards"], every["backend"], len(every["ranks"])) == (2, "gloo", 2)
    for rank in one["ranks"] + every["ranks"]:
        assert len(rank["step_ns"]) == len(rank["loss"]) == 3
        assert all(ns > 0 for ns in rank["step_ns"])
        assert all(isinstance(loss, float) for loss in rank["loss"])
        assert rank["batch_size"] == 8 and rank["warmup_steps"] == 1
    # Data parallelism keeps every rank's parameters the same; each rank saw its own data.
    assert every["ranks"][0]["params_sha256"] == every["ranks"][1]["params_sha256"]
    assert every["ranks"][0]["loss"] != every["ranks"][1]["loss"]
    # The stated figures are the documented arithmetic on the raw timings.
    slowest = [max(r["step_ns"][i] for r in every["ranks"]) for i in range(3)]
    assert every["samples_per_s"] == pytest.approx(2 * 8 * 3 / (sum(slowest) / 1e9))
    assert one["samples_per_s"] == pytest.approx(8 * 3 / (sum(one["ranks"][0]["step_ns"]) / 1e9))
    assert every["scaling_efficiency"] == pytest.approx(
        every["samples_per_s"] / (2 * one["samples_per_s"])
    )

    checkpoint = result["checkpoint"]
    assert checkpoint["path"] == str(checkpoints)
    assert checkpoint["bytes"] > 4 * result["model"]["parameters"]  # weights and AdamW state
    assert checkpoint["save_ns"] > 0 and checkpoint["restore_ns"] > 0
    assert checkpoint["saved_sha256"] == checkpoint["restored_sha256"]
    assert list(checkpoints.iterdir()) == []  # nothing left behind
    assert bundle["findings"] == []


def test_the_reference_model_has_the_parameters_the_result_states():
    torch = pytest.importorskip("torch")
    for size in trainprobe.SIZES[:2]:
        model = trainprobe.build_model(torch, trainprobe.asdict(size))
        assert sum(p.numel() for p in model.parameters()) == size.parameters


def test_the_state_digest_changes_with_any_weight_and_not_otherwise():
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    model = trainprobe.build_model(torch, trainprobe.asdict(trainprobe.SIZES[0]))
    before = trainprobe.state_digest(torch, {"model": model.state_dict()})
    assert trainprobe.state_digest(torch, {"model": model.state_dict()}) == before
    with torch.no_grad():
        model.head.weight[0, 0] += 1e-3
    assert trainprobe.state_digest(torch, {"model": model.state_dict()}) != before


# --- without torch, or not asked for -----------------------------------------------------


def _no_torch(tmp_path) -> str:
    """A folder whose `torch` cannot be imported, put first on the path."""
    fake = tmp_path / "no-torch" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('torch is not installed')\n")
    return str(fake.parent)


def test_without_torch_the_train_step_says_why_it_was_not_measured(tmp_path):
    out = tmp_path / "train.json"
    done = harness("train", "--out", str(out), pythonpath=_no_torch(tmp_path))
    assert done.returncode == 0, done.stderr
    bundle = json.loads(out.read_bytes())
    _valid(bundle)
    step = bundle["steps"]["train"]
    assert step["status"] == "skipped" and step["result"] is None
    assert step["reason"] == "torch is not installed: the reference training step needs it"


def test_run_includes_the_training_step_only_when_asked(tmp_path):
    skip = "inventory,environment,bench,loadtest,calibrate,netprobe,authprobe"
    out = tmp_path / "run.json"
    no_torch = _no_torch(tmp_path)
    done = harness("run", "--skip", skip, "--train", "--out", str(out), pythonpath=no_torch)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_bytes())["steps"]["train"]["status"] == "skipped"
    done = harness("run", "--skip", skip, "--out", str(out), pythonpath=no_torch)
    assert done.returncode == 0, done.stderr
    assert "train" not in json.loads(out.read_bytes())["steps"]


def test_a_step_count_out_of_bounds_is_refused_before_anything_runs():
    with pytest.raises(trainprobe.Unavailable, match="1 to 1000"):
        trainprobe.run_train(steps=trainprobe.MAX_STEPS + 1)
    done = harness("train", "--train-steps", "0")
    assert done.returncode == 2 and "--train-steps" in done.stderr


def test_a_restore_that_differs_and_a_loss_that_is_not_finite_are_findings(monkeypatch):
    result = recorded()
    result["checkpoint"]["restored_sha256"] = "0" * 64
    result["all_cards"]["ranks"][3]["loss"][5] = None
    monkeypatch.setattr(trainprobe, "run_train", lambda **options: copy.deepcopy(result))
    evidence = Evidence(secrets=[])
    args = steps.argparse.Namespace(
        train_steps=20, train_warmup=3, train_ranks=2, train_size="auto",
        train_checkpoint_path=None, train_timeout_s=600.0,
    )  # fmt: skip
    steps.step_train(args, evidence)
    found = {(f["id"], f["severity"], f["subject"]) for f in evidence.findings}
    assert found == {
        ("TRAIN-RESTORE", "fail", "/mnt/checkpoints"),
        ("TRAIN-LOSS", "fail", "cuda:3"),
    }


# --- arithmetic and sizing ---------------------------------------------------------------


def test_samples_per_second_counts_each_step_as_long_as_its_slowest_rank():
    ranks = [
        {"batch_size": 4, "step_ns": [100_000_000, 100_000_000]},
        {"batch_size": 4, "step_ns": [50_000_000, 300_000_000]},
    ]
    # 16 samples in 0.1 + 0.3 s.
    assert trainprobe.samples_per_s(ranks) == pytest.approx(40.0)
    assert trainprobe.samples_per_s([{"batch_size": 4, "step_ns": []}]) is None
    assert trainprobe.phase_summary(ranks) == {
        "samples_per_s": pytest.approx(40.0),
        "samples_per_s_per_card": pytest.approx(20.0),
    }


def test_scaling_efficiency_is_all_cards_over_cards_times_one_card():
    assert trainprobe.scaling_efficiency(100.0, 720.0, 8) == pytest.approx(0.9)
    assert trainprobe.scaling_efficiency(None, 720.0, 8) is None
    assert trainprobe.scaling_efficiency(100.0, None, 8) is None


@pytest.mark.parametrize(
    "free,cuda,name",
    [
        (None, False, "tiny"),
        (80 << 30, False, "tiny"),
        (4 << 30, True, "tiny"),
        (10 << 30, True, "small"),
        (40 << 30, True, "medium"),
        (79 << 30, True, "large"),
    ],
)
def test_the_reference_model_is_sized_from_the_first_cards_free_memory(free, cuda, name):
    assert trainprobe.size_for(free, cuda).name == name


def test_a_loss_that_is_not_a_number_is_recorded_as_null():
    assert trainprobe.finite(2.5) == 2.5
    assert trainprobe.finite(float("nan")) is None and trainprobe.finite(float("inf")) is None


def test_the_recorded_gpu_example_matches_the_published_schema_and_its_arithmetic():
    example = recorded()
    published = schema.load_schema()
    part = {"$defs": published["$defs"], "$ref": "#/$defs/train_result"}
    jsonschema.Draft202012Validator(part).validate(example)
    assert schema.validate(example, part) == []
    every = example["all_cards"]
    assert every["samples_per_s"] == pytest.approx(trainprobe.samples_per_s(every["ranks"]))
    assert example["model"]["parameters"] == trainprobe.size_named("large").parameters
