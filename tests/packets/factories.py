"""A small case with Chinese text, issued through the same task as production."""

import threading
from decimal import Decimal

from apps.packets.models import AuditPacket, PacketRequest
from apps.packets.services import packet_request_create
from apps.scorecards.services import scorecard_save
from apps.sizing.services import compute_demand_save
from tests.factories import FULL_SPEC, make_case, make_offer, make_vendor

ORGANISATION_NAME = "华东算力有限公司 Example Org"  # the packets' tests' organisation
CHINESE_CASE = "华东推理集群采购"
CHINESE_VENDOR = "华东算力云（上海）有限公司"

DEMAND = {
    "mode": "inference",
    "model_preset": "llama-3.1-70b",
    "weight_dtype": "bf16",
    "kv_dtype": "fp16",
    "context_tokens": 32768,
    "target_concurrency": 600,
    "tensor_parallel": 8,
    "card_memory_gib": Decimal("140.4"),
    "reserve_pct": Decimal("15"),
}


def make_packet_case(actor, *, offers=2):
    case = make_case(actor, name=CHINESE_CASE, requirements="数据不出境；推理服务。")
    compute_demand_save(actor=actor, case=case, fields=DEMAND)
    vendor = make_vendor(actor, name=CHINESE_VENDOR, jurisdiction="China")
    first = make_offer(actor, case, vendor=vendor, spec=FULL_SPEC)
    scorecard_save(
        actor=actor, offer=first, scores={"pricing": {"score": 4, "comment": "价格合理"}}
    )
    for _ in range(offers - 1):
        make_offer(actor, case)  # declared spec left empty: unconfirmed
    return case


def issue_packet(actor, case, django_capture_on_commit_callbacks) -> AuditPacket:
    with django_capture_on_commit_callbacks(execute=True):
        request = packet_request_create(actor=actor, case=case)
    request = PacketRequest.objects.get(pk=request.pk)
    assert request.status == PacketRequest.Status.DONE, request.error
    return request.packet


def issue_module_packet(tmp_path_factory, build):
    """A real packet issued once for a module's tests (``module_db``), with the settings
    ``tests/packets/conftest.py`` gives each test, its key and file in folders of its own:
    ``build(capture)`` makes the case and issues the packet. Returns the folder of its
    stored file and the packet; ``packet_for_test`` hands it to one test."""
    from django.test import TestCase, override_settings

    folder = tmp_path_factory.mktemp("module-packet")
    with override_settings(
        PACKET_SIGNING_DIR=folder / "signing",
        MEDIA_ROOT=folder / "media",
        ORGANISATION_NAME=ORGANISATION_NAME,
    ):
        packet = build(TestCase.captureOnCommitCallbacks)
    return folder / "media", packet


def packet_for_test(issued) -> AuditPacket:
    """The module's packet (``issue_module_packet``) for one test: a copy of it, its file
    in the test's storage, so a test that changes either changes only its own."""
    import copy

    from tests.stored import store_folder

    media, packet = issued
    store_folder(media)
    return copy.deepcopy(packet)


def make_stored_packet(
    actor, case, *, content: bytes = b"%PDF-1.7\n% not a real packet\n", kind=None
):
    """An issued-packet row with a small stored file, for pages that only list and serve it
    (a whole-case packet, or the deliverable ``kind``)."""
    import hashlib

    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage
    from django.utils import timezone

    from apps.core.services import tracked_create
    from apps.packets.services import _reserve_number, packet_request_progress
    from apps.packets.signing import get_signer

    request = _reserve_number(actor=actor, case=case, **({"kind": kind} if kind else {}))
    content += request.number.encode() + b"\n"  # each packet's bytes, and digest, its own
    digest = hashlib.sha256(content).hexdigest()
    stored = default_storage.save(f"packets/{request.number}.pdf", ContentFile(content))
    packet_request_progress(request, percent=100, step="Issued", status=PacketRequest.Status.DONE)
    return tracked_create(
        AuditPacket,
        actor=actor,
        reason="Packet issued",
        request=request,
        case=case,
        organisation=request.organisation,
        number=request.number,
        issued_by=actor,
        file=stored,
        sha256=digest,
        size_bytes=len(content),
        page_count=1,
        manifest_sha256="0" * 64,
        signer_subject=get_signer().subject,
        signer_certificate_sha256=get_signer().fingerprint_sha256,
        signer_certificate_pem=get_signer().certificate_pem,
        signed_at=timezone.now(),
    )


def held(monkeypatch, module, name: str) -> threading.Event:
    """Make ``module.name`` wait until the returned event is set (two minutes at most):
    a test sees the packet's render at a chosen point however fast the machine is."""
    release = threading.Event()
    original = getattr(module, name)

    def when_released(*args, **kwargs):
        release.wait(timeout=120)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, when_released)
    return release
