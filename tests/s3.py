"""A local S3-compatible server for the storage tests: moto's server, on 127.0.0.1.

``MotoServer`` runs ``python -m moto.server`` as a child process on a free port of
the loopback interface (nothing leaves the machine); ``stop()`` takes it away, as an
object store that goes down would, and ``start()`` brings up a fresh, empty one.
"""

import ctypes
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import boto3
from botocore.config import Config

REGION = "us-east-1"
ACCESS_KEY = "diligence-test"
SECRET_KEY = "diligence-test-secret"  # moto accepts any pair
START_SECONDS = 30


def _die_with_parent() -> None:
    """In the child: end when the test run ends, however it ends (Linux; elsewhere a no-op)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class MotoServer:
    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.port = 0

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "MotoServer":
        self.port = _free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"moto server exited with {self.process.returncode}")
            try:
                with urllib.request.urlopen(f"{self.endpoint_url}/moto-api/", timeout=1):
                    return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("moto server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def client(self):
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            config=Config(retries={"mode": "standard", "max_attempts": 1}),
        )

    def new_bucket(self) -> str:
        name = f"diligence-{uuid.uuid4().hex[:20]}"
        self.client().create_bucket(Bucket=name)
        return name


def bucket_keys(client, bucket: str) -> list[str]:
    """Every object's key in ``bucket``, sorted."""
    keys: list[str] = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        keys += [entry["Key"] for entry in page.get("Contents", ())]
    return sorted(keys)


def empty_bucket(client, bucket: str) -> None:
    for key in bucket_keys(client, bucket):
        client.delete_object(Bucket=bucket, Key=key)
    client.delete_bucket(Bucket=bucket)
