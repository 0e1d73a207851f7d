"""Between nodes (`net-serve` and `net-peer`), from the gateway (`gateway`), and the
versions and image the environment step records: loopback only, under a second each."""

import json
import os
import socket
import subprocess
import sys
import time

import jsonschema
import pytest
from conftest import HARNESS_ROOT
from diligence_harness import environment, schema
from diligence_harness.netpeer import (
    NetServerThread,
    echo_rtt,
    rate_gbit,
    rdma_devices,
    run_netpeer,
    throughput_gbit_s,
    transfer,
)


def harness(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=HARNESS_ROOT)
    return subprocess.run(
        [sys.executable, "-m", "diligence_harness", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def write_port(root, device: str, port: str, rate: str, link_layer: str, state="4: ACTIVE"):
    folder = root / "class" / "infiniband" / device / "ports" / port
    folder.mkdir(parents=True)
    (folder / "rate").write_text(rate + "\n")
    (folder / "link_layer").write_text(link_layer + "\n")
    (folder / "state").write_text(state + "\n")
    (folder / "phys_state").write_text("5: LinkUp\n")


def test_both_directions_rtt_and_no_loss_on_loopback(tmp_path):
    with NetServerThread() as server:
        result = run_netpeer(
            server.peer, duration_s=0.2, streams=2, count=5, sysfs_root=str(tmp_path)
        )
    assert result["rtt"]["method"] == "tcp_echo" and result["rtt"]["loss"] == 0
    assert len(result["rtt"]["rtt_ms_raw"]) == 5 and result["rtt"]["jitter_ms"] is not None
    send, receive = result["throughput"]
    assert (send["direction"], receive["direction"]) == ("send", "receive")
    for transfer_ in (send, receive):
        assert transfer_["gbit_s"] > 0
        for stream in transfer_["per_stream"]:
            assert stream["error"] is None and len(stream["samples"]) >= 2
            times = [t for t, _ in stream["samples"]]
            assert times == sorted(times)
            # The last sample is the count the receiving side confirmed.
            assert stream["samples"][-1][1] == stream["confirmed_bytes"] > 0
    assert result["rdma"]["devices"] == [] and result["rdma"]["present"] is False


def test_the_throughput_is_every_streams_bytes_over_the_latest_time():
    streams = [{"samples": [[5, 10], [1_000, 500]]}, {"samples": [[2_000, 1_500]]}]
    assert throughput_gbit_s(streams) == (500 + 1_500) * 8 / 2_000
    assert throughput_gbit_s([{"samples": []}]) is None


def test_a_peer_that_is_not_there_loses_every_round_trip_and_moves_nothing():
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # bound, never listening: connects are refused
        rtt = echo_rtt("127.0.0.1", port, count=2, interval_s=0.01, timeout_s=0.5)
        moved = transfer("127.0.0.1", port, "send", duration_s=0.1, streams=2, timeout_s=0.5)
    assert rtt["loss"] == 1.0 and rtt["rtt_ms_raw"] == [] and rtt["errors"]
    assert moved["gbit_s"] is None and all(s["error"] for s in moved["per_stream"])


def test_rdma_devices_and_their_link_rates_from_sysfs(tmp_path):
    write_port(tmp_path, "mlx5_0", "1", "400 Gb/sec (4X NDR)", "InfiniBand")
    write_port(tmp_path, "mlx5_1", "1", "200 Gb/sec (2X HDR)", "Ethernet", state="1: DOWN")
    listed = rdma_devices(str(tmp_path))
    assert listed["present"] is True
    ports = {d["name"]: d["ports"][0] for d in listed["devices"]}
    assert ports["mlx5_0"]["rate"] == "400 Gb/sec (4X NDR)" and ports["mlx5_0"]["rate_gbit"] == 400
    assert ports["mlx5_0"]["link_layer"] == "InfiniBand"
    assert ports["mlx5_1"]["link_layer"] == "Ethernet" and ports["mlx5_1"]["state"] == "1: DOWN"
    assert rate_gbit("10 Gb/sec (1X QDR)") == 10 and rate_gbit("unknown") is None


def valid(document: dict) -> None:
    assert schema.validate(document) == []
    jsonschema.Draft202012Validator(schema.load_schema()).validate(document)


def test_net_serve_and_net_peer_write_a_valid_bundle(tmp_path):
    write_port(tmp_path, "mlx5_0", "1", "400 Gb/sec (4X NDR)", "InfiniBand")
    env = dict(os.environ, PYTHONPATH=HARNESS_ROOT)
    serving = subprocess.Popen(
        [sys.executable, "-m", "diligence_harness", "net-serve"]
        + ["--host", "127.0.0.1", "--port", "0", "--max-seconds", "20"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    try:
        port = json.loads(serving.stdout.readline())["port"]
        out = tmp_path / "peer.json"
        done = harness(
            "net-peer", "--peer", f"127.0.0.1:{port}", "--peer-duration-s", "0.2",
            "--peer-streams", "2", "--peer-count", "3", "--sysfs-root", str(tmp_path),
            "--nonce", "n-1", "--out", str(out),
        )  # fmt: skip
    finally:
        serving.terminate()
        serving.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_bytes())
    valid(document)
    assert document["run_role"] == "machine"
    step = document["steps"]["netpeer"]
    assert step["status"] == "ok" and "gateway" not in document["steps"]
    assert [t["gbit_s"] > 0 for t in step["result"]["throughput"]] == [True, True]
    assert step["result"]["rdma"]["devices"][0]["ports"][0]["rate_gbit"] == 400


def test_net_serve_stops_by_itself():
    started = time.monotonic()
    done = harness("net-serve", "--host", "127.0.0.1", "--port", "0", "--max-seconds", "0.2")
    assert done.returncode == 0 and time.monotonic() - started < 10
    assert json.loads(done.stdout.splitlines()[0])["event"] == "listening"


def test_the_gateway_probe_is_a_bundle_of_its_own_marked_as_such(tmp_path):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        port = listener.getsockname()[1]
        out = tmp_path / "gateway.json"
        done = harness(
            "gateway", "--endpoint", f"http://127.0.0.1:{port}/v1", "--net-count", "3",
            "--case", "7", "--nonce", "n-2", "--out", str(out),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_bytes())
    valid(document)
    assert document["run_role"] == "gateway"
    step = document["steps"]["gateway"]["result"]
    assert step["role"] == "gateway" and step["endpoint"] == f"http://127.0.0.1:{port}"
    [probe] = step["probes"]
    assert probe["method"] == "tcp_connect" and probe["loss"] == 0 and probe["count"] == 3
    assert {document["steps"][name]["status"] for name in ("netprobe", "inventory")} == {"skipped"}


def test_upload_needs_a_token_and_a_file():
    assert harness("gateway", "--endpoint", "http://x:1", "--upload", "http://y").returncode == 2
    refused = harness("gateway", "--endpoint", "http://x:1", "--upload", "http://y", "--token", "t")
    assert refused.returncode == 2 and "--out" in refused.stderr


def test_run_never_runs_the_gateway_probe():
    from diligence_harness.cli import build_parser
    from diligence_harness.steps import NOT_IN_RUN, OPTIONAL_STEPS

    assert "gateway" in NOT_IN_RUN and OPTIONAL_STEPS["netpeer"] == "peer"
    args = build_parser().parse_args(["run", "--out", "b.json", "--peer", "node-2:5201"])
    assert args.peer == "node-2:5201" and args.peer_duration_s == 3.0


@pytest.mark.parametrize(
    ("code", "version"), [(22105, "2.21.5"), (2708, "2.7.8"), (21903, "2.19.3")]
)
def test_nccl_version_codes(code, version):
    assert environment.nccl_version_code(code) == version


def test_the_image_digest_from_the_flag_an_environment_variable_or_a_reference(monkeypatch):
    digest = "sha256:" + "ab" * 32
    for name in environment.DIGEST_VARS + environment.IMAGE_VARS:
        monkeypatch.delenv(name, raising=False)
    assert environment.container(f"registry.example/serve@{digest}")["image_digest"] == digest
    monkeypatch.setenv("IMAGE_DIGEST", digest.upper().replace("SHA256", "sha256"))
    found = environment.container()
    assert found["image_digest"] == digest and found["image_digest_source"] == "env:IMAGE_DIGEST"
    monkeypatch.setenv("IMAGE_DIGEST", "latest")
    reason = environment.container()["image_digest_reason"]
    assert reason == "env:IMAGE_DIGEST is not a sha256 digest"


def test_serving_runtimes_are_read_without_importing_them(monkeypatch):
    software = environment.software()
    assert software["python"] and "vllm" in software and "sglang" in software
    assert environment.distribution_version("no-such-distribution-xyz") is None
    assert environment.distribution_version("no-such-distribution-xyz", "pip") is not None
    assert "vllm" not in sys.modules
