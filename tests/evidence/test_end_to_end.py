"""End to end on the CPU: the harness runs against its mock and uploads to a live server."""

import json
import subprocess
import sys

import pytest

from apps.evidence.models import EvidenceBundle
from apps.evidence.services import harness_token_create
from tests.evidence.conftest import harness_env, run_harness
from tests.factories import FULL_SPEC, make_case, make_offer


@pytest.mark.django_db(transaction=True)
def test_harness_uploads_and_the_verification_shows_the_device_mismatch(
    live_server, mock_endpoint, tariq, tmp_path
):
    case = make_case(tariq)
    offer = make_offer(tariq, case, accelerator_model="NVIDIA H100 SXM5 80GB", spec=FULL_SPEC)
    issued = harness_token_create(actor=tariq, case=case, offer=offer)
    upload = f"{live_server.url}/api/v1/evidence/"
    out = tmp_path / "bundle.json"
    result = run_harness(
        mock_endpoint,
        out,
        "--upload",
        upload,
        "--token",
        issued.token,
        "--nonce",
        issued.record.nonce,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert issued.token not in out.read_text()  # the harness never writes the token down
    receipt = json.loads((tmp_path / "bundle.json.upload.json").read_text())
    assert receipt["http_status"] == 201

    bundle = EvidenceBundle.objects.select_related("verification").get()
    checks = {c["key"]: c for c in bundle.verification.checks}
    assert bundle.verification.verdict == "failed"
    assert checks["identity.device_count"]["status"] == "fail"  # 1 GPU seen, 8 declared
    assert checks["identity.sku"]["status"] == "fail"
    assert (
        "RTX 4090 24GB is not the declared NVIDIA H100 SXM5 80GB"
        in checks["identity.sku"]["detail"]
    )
    assert bundle.client_summary_disagreements == []

    again = subprocess.run(
        [sys.executable, "-m", "diligence_harness", "upload", str(out)]
        + ["--upload", upload, "--token", issued.token],
        env=harness_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(again.stdout)["http_status"] == 200
    assert EvidenceBundle.objects.count() == 1
