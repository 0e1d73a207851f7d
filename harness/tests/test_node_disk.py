"""The `node` and `disk` steps: the disk end to end on a temporary directory, the topology
from captured files, the bandwidth arithmetic, and the node step where torch is absent
(the GPU paths run only on a GPU; their recorded output is checked against the schema)."""

import json
import os
import subprocess
import sys

import jsonschema
import pytest
from conftest import HARNESS_ROOT, fixture_path
from diligence_harness import diskprobe, nodeprobe, schema
from diligence_harness.steps import Evidence


def harness(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=HARNESS_ROOT)
    return subprocess.run(
        [sys.executable, "-m", "diligence_harness", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def _valid(bundle: dict) -> None:
    jsonschema.Draft202012Validator(schema.load_schema()).validate(bundle)
    assert schema.validate(bundle) == []


# --- the disk ----------------------------------------------------------------------------


def test_the_disk_step_writes_reads_and_times_a_small_file_end_to_end(tmp_path):
    out = tmp_path / "disk.json"
    checkpoints = tmp_path / "checkpoints"
    checkpoints.mkdir()
    done = harness(
        "disk", "--disk-path", str(checkpoints), "--disk-bytes", "4MiB",
        "--disk-block-bytes", "1MiB", "--disk-random-ops", "64", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    bundle = json.loads(out.read_bytes())
    _valid(bundle)
    step = bundle["steps"]["disk"]
    assert step["status"] == "ok"
    result = step["result"]
    write, read, rand = result["phases"]
    assert [p["phase"] for p in (write, read, rand)] == ["seq_write", "seq_read", "rand_read"]
    assert len(write["blocks_ns"]) == len(read["blocks_ns"]) == 4
    assert write["bytes"] == read["bytes"] == 4 << 20 and write["fsync_ns"] >= 0
    assert read["mismatched_blocks"] == 0
    assert rand["ops"] == len(rand["ops_ns"]) == 64 and rand["io_bytes"] == 4096
    expected_gbps = write["bytes"] / (sum(write["blocks_ns"]) + write["fsync_ns"])
    assert write["GBps"] == pytest.approx(expected_gbps)
    assert result["mode"] in ("direct", "buffered")
    stat = os.statvfs(checkpoints)
    assert result["capacity"]["f_blocks"] == stat.f_blocks
    assert result["capacity"]["total_bytes"] == stat.f_blocks * stat.f_frsize
    assert result["backing"]["mount_point"] and result["backing"]["fstype"]
    assert list(checkpoints.iterdir()) == []  # the probe file and its folder are gone
    assert "disk" in bundle["steps"] and "node" not in bundle["steps"]


def test_run_measures_the_disk_only_when_asked(tmp_path):
    skip = "inventory,environment,bench,loadtest,calibrate,netprobe,authprobe"
    out = tmp_path / "run.json"
    done = harness(
        "run", "--skip", skip, "--disk-path", str(tmp_path), "--disk-bytes", "2MiB",
        "--disk-block-bytes", "1MiB", "--disk-random-ops", "8", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    steps = json.loads(out.read_bytes())["steps"]
    assert steps["disk"]["status"] == "ok" and "node" not in steps
    done = harness("run", "--skip", skip, "--out", str(out))
    assert "disk" not in json.loads(out.read_bytes())["steps"]


def test_a_filesystem_refusing_direct_io_is_measured_buffered(tmp_path, monkeypatch):
    monkeypatch.setattr(diskprobe, "_direct_works", lambda directory: (False, "refused"))
    result = diskprobe.run_disk(
        str(tmp_path), total_bytes=2 << 20, block_bytes=1 << 20, random_ops=4
    )
    assert result["mode"] == "buffered" and result["mode_reason"] == "refused"
    assert result["cache_drop"] == "posix_fadvise DONTNEED after fsync"
    assert result["phases"][1]["mismatched_blocks"] == 0


def test_each_phase_stops_at_its_time_limit(tmp_path):
    result = diskprobe.run_disk(
        str(tmp_path), total_bytes=8 << 20, block_bytes=1 << 20, seconds=0, random_ops=50
    )
    write, read, rand = result["phases"]
    assert (len(write["blocks_ns"]), write["stopped"]) == (1, "time")
    assert (len(read["blocks_ns"]), read["stopped"]) == (1, "size")  # what was written
    assert (rand["ops"], rand["stopped"]) == (1, "time")


def test_a_missing_path_or_too_little_space_skips_with_the_reason(tmp_path):
    done = harness("disk", "--disk-path", str(tmp_path / "absent"))
    step = json.loads(done.stdout)
    assert step["status"] == "skipped" and "is not a directory" in step["reason"]
    with pytest.raises(diskprobe.DiskProbeError, match="too little"):
        diskprobe.run_disk(str(tmp_path), total_bytes=1 << 50, block_bytes=1 << 20)


@pytest.mark.parametrize(
    "text,size",
    [("4096", 4096), ("4MiB", 4 << 20), ("1GiB", 1 << 30), ("512M", 512 << 20), ("1GB", 10**9)],
)
def test_sizes_read_binary_and_decimal_units(text, size):
    assert diskprobe.parse_size(text) == size


@pytest.mark.parametrize("text", ["", "3x", "-1", "0", "MiB"])
def test_a_size_that_is_not_one_is_refused(text):
    with pytest.raises(ValueError, match="not a size"):
        diskprobe.parse_size(text)


MOUNTINFO = """\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
40 22 259:1 / /mnt/checkpoints rw,noatime shared:20 - xfs /dev/md0 rw,attr2
41 22 0:27 / /mnt/checkpoints-old rw - tmpfs tmpfs rw
"""


def test_the_mount_behind_a_path_is_the_longest_mount_point_holding_it():
    mount = diskprobe.mount_of("/mnt/checkpoints/run-1", MOUNTINFO)
    assert mount == {
        "mount_point": "/mnt/checkpoints",
        "dev": "259:1",
        "fstype": "xfs",
        "source": "/dev/md0",
    }
    assert diskprobe.mount_of("/mnt/checkpoints-old", MOUNTINFO)["fstype"] == "tmpfs"
    assert diskprobe.mount_of("/home/someone", MOUNTINFO)["fstype"] == "ext4"


def test_the_block_device_names_its_disk_and_the_drives_under_a_raid(tmp_path):
    block = tmp_path / "devices" / "md0"
    (block / "queue").mkdir(parents=True)
    (block / "slaves").mkdir()
    for drive in ("nvme1n1", "nvme0n1"):
        (block / "slaves" / drive).mkdir()
    (block / "queue" / "rotational").write_text("0\n")
    (block / "queue" / "logical_block_size").write_text("512\n")
    (block / "size").write_text("60000000000\n")
    (tmp_path / "block").mkdir()
    (tmp_path / "block" / "md0").symlink_to(block)
    (tmp_path / "dev" / "block").mkdir(parents=True)
    (tmp_path / "dev" / "block" / "9:0").symlink_to(block)
    partition = tmp_path / "devices" / "nvme2n1" / "nvme2n1p1"
    partition.mkdir(parents=True)
    (partition / "partition").write_text("1\n")
    (tmp_path / "dev" / "block" / "259:3").symlink_to(partition)
    device = diskprobe.block_device(9, 0, sysfs=str(tmp_path))
    assert device["disk"] == "md0" and device["slaves"] == ["nvme0n1", "nvme1n1"]
    assert device["rotational"] is False and device["logical_block_bytes"] == 512
    assert device["size_bytes"] == 60000000000 * 512
    assert diskprobe.block_device(259, 3, sysfs=str(tmp_path))["disk"] == "nvme2n1"
    assert diskprobe.block_device(1, 99, sysfs=str(tmp_path)) == {}


# --- inside the node ---------------------------------------------------------------------


def test_the_topology_of_every_pair_from_a_captured_nvlink_file():
    with open(fixture_path("constructed", "topo-m-4x-a100.txt"), encoding="utf-8") as handle:
        parsed = nodeprobe.topology_pairs(nodeprobe.parse_topology(handle.read()))
    assert parsed["gpus"] == ["GPU0", "GPU1", "GPU2", "GPU3"]
    assert len(parsed["pairs"]) == 6
    assert {(p["kind"], p["nvlinks"], p["link"]) for p in parsed["pairs"]} == {
        ("nvlink", 12, "NV12")
    }


def test_the_topology_of_every_pair_from_a_captured_pcie_file():
    with open(fixture_path("constructed", "topo-m-4x-pcie.txt"), encoding="utf-8") as handle:
        parsed = nodeprobe.topology_pairs(nodeprobe.parse_topology(handle.read()))
    links = {(p["a"], p["b"]): p["kind"] for p in parsed["pairs"]}
    assert links == {
        ("GPU0", "GPU1"): "PIX",
        ("GPU0", "GPU2"): "NODE",
        ("GPU0", "GPU3"): "SYS",
        ("GPU1", "GPU2"): "NODE",
        ("GPU1", "GPU3"): "SYS",
        ("GPU2", "GPU3"): "SYS",
    }


@pytest.mark.parametrize(
    "cell,kind",
    [
        ("NV18", ("nvlink", 18)),
        (" NV4 ", ("nvlink", 4)),
        ("PIX", ("PIX", None)),
        ("PXB", ("PXB", None)),
        ("PHB", ("PHB", None)),
        ("NODE", ("NODE", None)),
        ("SYS", ("SYS", None)),
        (" X ", ("self", None)),
        ("SOC", ("other", None)),
    ],
)
def test_each_link_of_the_matrix_is_named(cell, kind):
    assert nodeprobe.link_kind(cell) == kind


def test_bus_bandwidth_is_nccl_tests_algbw_times_two_n_minus_one_over_n():
    assert nodeprobe.bus_factor(2) == 1.0
    assert nodeprobe.bus_factor(8) == 1.75
    # 1 GB all-reduced in 10 ms over 8 ranks: algbw 100 GB/s, busbw 175 GB/s.
    assert nodeprobe.bus_bandwidth_gbps(10**9, 0.010, 8) == pytest.approx(175.0)


def test_the_all_reduce_time_of_a_repetition_is_the_mean_over_the_ranks():
    # Rank 1 is 2 ms slower each time: the repetitions' means are 11, 12 and 13 ms.
    summary = nodeprobe.allreduce_summary(
        10**9, [[10_000_000, 11_000_000, 12_000_000], [12_000_000, 13_000_000, 14_000_000]]
    )
    assert summary["time_ns_median"] == 12_000_000
    assert summary["algbw_GBps"] == pytest.approx(10**9 / 12_000_000)
    assert summary["busbw_GBps"] == pytest.approx(10**9 / 12_000_000 * 1.0)
    assert nodeprobe.allreduce_summary(10**9, []) == {}


def test_copy_bandwidth_is_bytes_over_each_repetitions_nanoseconds():
    rates = nodeprobe.rates_gbps(1_000_000, [1_000, 2_000, 4_000, 0])
    assert rates == {"median": 500.0, "best": 1000.0, "n": 3}
    assert nodeprobe.rates_gbps(1, []) == {}


def test_without_torch_the_node_step_keeps_the_topology_and_says_why(tmp_path):
    out = tmp_path / "node.json"
    topo = fixture_path("constructed", "topo-m-4x-a100.txt")
    done = harness("node", "--topo", topo, "--out", str(out))
    assert done.returncode == 0, done.stderr
    bundle = json.loads(out.read_bytes())
    _valid(bundle)
    result = bundle["steps"]["node"]["result"]
    assert result["topology"]["artifact"] == "topo-m-4x-a100.txt"
    assert [a["name"] for a in bundle["artifacts"]] == ["topo-m-4x-a100.txt"]
    assert result["backend"] is None and result["allreduce"] is None
    assert result["skipped"] == [
        {"what": "copies, all-reduce, matmul repeats", "reason": "torch is not installed"}
    ]


def test_without_torch_nor_a_topology_the_step_is_unavailable(monkeypatch):
    from diligence_harness import sources, torchprobe

    monkeypatch.setattr(torchprobe, "load_torch", lambda: (None, "torch is not installed"))
    not_found = {"ok": False, "reason": "not found"}
    monkeypatch.setattr(sources, "run_tool", lambda args, timeout_s: not_found)
    with pytest.raises(nodeprobe.Unavailable, match="torch is not installed; and nvidia-smi"):
        nodeprobe.run_node(topo_path=None, evidence=Evidence(secrets=[]))


def test_the_same_topology_is_recorded_once_beside_the_inventory():
    evidence = Evidence(secrets=[])
    evidence.artifact("nvidia-smi-topo-m.txt", "A")
    assert nodeprobe.add_artifact_once(evidence, "nvidia-smi-topo-m.txt", "A") == (
        "nvidia-smi-topo-m.txt"
    )
    assert nodeprobe.add_artifact_once(evidence, "nvidia-smi-topo-m.txt", "B") == (
        "node-nvidia-smi-topo-m.txt"
    )
    assert [a["name"] for a in evidence.artifacts] == [
        "nvidia-smi-topo-m.txt",
        "node-nvidia-smi-topo-m.txt",
    ]


@pytest.mark.parametrize(
    "name,definition",
    [
        ("node-4x-a100-recorded-example.json", "node_result"),
        ("disk-nvme-recorded-example.json", "disk_result"),
    ],
)
def test_the_recorded_examples_match_the_published_schema(name, definition):
    with open(fixture_path("constructed", name), encoding="utf-8") as handle:
        recorded = json.load(handle)
    published = schema.load_schema()
    part = {"$defs": published["$defs"], "$ref": f"#/$defs/{definition}"}
    jsonschema.Draft202012Validator(part).validate(recorded)
    assert schema.validate(recorded, part) == []
