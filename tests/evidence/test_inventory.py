"""The server's own inventory from the raw `nvidia-smi -q -x` output: real captures and spoofs.

Every real capture of the fixtures (SOURCES.md) is read and judged; each spoof is
one of them with one lie in it, and each lie is flagged by the server whatever
the client's findings say.
"""

import pytest
from diligence_harness import skus as harness_skus
from django.urls import reverse
from rest_framework.test import APIClient

from apps.evidence import datasheet, gpu_tables, inventory
from apps.evidence.models import EvidenceBundle
from apps.evidence.rules import Context, Facts, raw_inventory, verdict, verify
from tests.evidence import spoofs
from tests.evidence.factories import bundle_for, make_token, serialise
from tests.factories import FULL_SPEC, make_case, make_offer

WHOLE = {"accelerator_model": "whatever the offer says", "cards_per_node": 1}


def logs(text: str, name: str = "nvidia-smi-q-x.xml") -> list[inventory.SmiLog]:
    return inventory.read_artifacts([(name, text.encode("utf-8"))])


def found(text: str, declared: dict | None = None) -> set[tuple[str, str, str]]:
    return {
        (f.code, f.severity, f.text)
        for f in inventory.findings(logs(text), WHOLE if declared is None else declared)
    }


def statuses(text: str, declared: dict | None = None, client: list | None = None) -> dict:
    facts = Facts(raw_smi=logs(text), client_findings=client or [])
    checks = raw_inventory.checks(facts, Context(declared=WHOLE if declared is None else declared))
    return {c.key: c.status for c in checks}


KEYS = [topic.key for topic in raw_inventory.TOPICS]

# Real captures (SOURCES.md), each rented as whole cards: what the server finds, and the
# checks that do not pass. Three captures were trimmed by their contributors (attached_gpus
# above the GPUs listed); two hide the PCI id (a VM printing 000000DE, a redaction); one runs
# MIG; one predates nvidia-smi printing a CUDA version.
REAL = [
    ("a100-sxm4-80gb-mig-1x-v12.xml",
     {("INV-ATTACHED", "warn", "attached_more"), ("INV-MIG", "fail", "mig_whole_declared")},
     {"identity.smi_attached": "warn", "identity.smi_partitioning": "fail"}),
    ("a10g-1x-v11.xml", {("INV-SKU-UNCONFIRMED", "warn", "pci_missing")},
     {"identity.smi_product": "warn"}),
    ("tesla-t4-1x-v11.xml", set(), {}),
    ("rtx-3090-1x-v12.xml", {("INV-SKU-UNCONFIRMED", "warn", "pci_missing")},
     {"identity.smi_product": "warn"}),
    ("rtx-4090-1x-v12.xml", set(), {}),
    ("tesla-v100s-pcie-32gb-8x-v11.xml", set(), {}),
    ("rtx-2070-2x-v13.xml", set(), {}),
    ("rtx-pro-6000-blackwell-maxq-1x-v13.xml", set(), {}),
    ("tesla-v100-sxm3-32gb-1x-v10.xml", {("INV-ATTACHED", "warn", "attached_more")},
     {"identity.smi_attached": "warn"}),
    ("gtx-1070-2x-v9.xml", {("INV-ATTACHED", "warn", "attached_more")},
     {"identity.smi_attached": "warn", "versions.smi_driver_cuda": "not_measured"}),
    ("rtx-4000-sff-ada-1x-v13.xml", set(), {}),
    ("tesla-p100-pcie-16gb-1x-v11.xml", set(), {}),
    ("rtx-3060-1x-v12.xml", set(), {}),
]  # fmt: skip


def test_every_real_capture_is_in_the_table():
    assert sorted(p.name for p in spoofs.FIXTURES.glob("*.xml")) == sorted(r[0] for r in REAL)


@pytest.mark.parametrize("fixture,expected,not_passing", REAL, ids=[r[0] for r in REAL])
def test_real_captures(fixture, expected, not_passing):
    text = spoofs.real(fixture)
    assert found(text) == expected
    assert statuses(text) == {key: not_passing.get(key, "pass") for key in KEYS}


def test_every_real_card_is_identified_by_its_pci_id_name_and_memory():
    for fixture, *_ in REAL:
        for gpu in logs(spoofs.real(fixture))[0].gpus:
            product = gpu_tables.by_pci_id(gpu.pci_device_id)
            if product is None:  # the A10G VM and the redacted 3090: no PCI id to go by
                assert gpu.pci_device_id is None, fixture
                continue
            assert gpu_tables.claim_of(gpu.name).allows(product), fixture
            low, high = gpu_tables.memory_window_mib(product.memory_gb[0])
            assert low <= gpu.memory_total_mib <= high, fixture


H200 = {"accelerator_model": "NVIDIA H200 SXM 141GB", "cards_per_node": 8}

# (spoof, made of, declared, the finding the server must make, the check and its status)
SPOOFS = [
    ("renamed L4 claiming H200", lambda: spoofs.l4("NVIDIA H200"), H200,
     ("INV-SKU-NAME", "fail", "name_other_product"), "identity.smi_product", "fail"),
    ("renamed L4 claiming H200 NVL", lambda: spoofs.l4("NVIDIA H200 NVL"), H200,
     ("INV-SKU-NAME", "fail", "name_other_product"), "identity.smi_product", "fail"),
    ("renamed RTX 4090 claiming H200",
     lambda: spoofs.renamed(spoofs.real("rtx-4090-1x-v12.xml"), "NVIDIA H200"), H200,
     ("INV-SKU-NAME", "fail", "name_other_product"), "identity.smi_product", "fail"),
    ("RTX 4090 named as its look-alike 4090 D",
     lambda: spoofs.renamed(spoofs.real("rtx-4090-1x-v12.xml"), "NVIDIA GeForce RTX 4090 D"),
     WHOLE, ("INV-SKU-NAME", "fail", "name_other_product"), "identity.smi_product", "fail"),
    ("known PCI id under a name of no card",
     lambda: spoofs.renamed(spoofs.real("rtx-4090-1x-v12.xml"), "NVIDIA Accelerator"), WHOLE,
     ("INV-SKU-NAME", "fail", "name_not_of_pci"), "identity.smi_product", "fail"),
    ("H200 name on a PCI id the table does not know",
     lambda: spoofs.pci_id(spoofs.renamed(spoofs.real("rtx-4090-1x-v12.xml"), "NVIDIA H200"),
                           "220610DE"), H200,
     ("INV-SKU-UNCONFIRMED", "warn", "pci_unknown"), "identity.smi_product", "fail"),
    ("... and its 24 GB are not an H200's",
     lambda: spoofs.pci_id(spoofs.renamed(spoofs.real("rtx-4090-1x-v12.xml"), "NVIDIA H200"),
                           "220610DE"), H200,
     ("INV-SKU-MEMORY", "fail", "memory_off"), "identity.smi_product", "fail"),
    ("H200 memory on an RTX 4090",
     lambda: spoofs.memory(spoofs.real("rtx-4090-1x-v12.xml"), 143771), WHOLE,
     ("INV-SKU-MEMORY", "fail", "memory_off"), "identity.smi_product", "fail"),
    ("L40S memory rewritten to 16384 MiB",
     lambda: spoofs.memory(spoofs.pci_id(spoofs.renamed(spoofs.real("rtx-4090-1x-v12.xml"),
                                                        "NVIDIA L40S"), "26B910DE"), 16384),
     WHOLE, ("INV-SKU-MEMORY", "fail", "memory_off"), "identity.smi_product", "fail"),
    ("duplicated UUID", lambda: spoofs.duplicated_uuid(spoofs.real("rtx-2070-2x-v13.xml")),
     WHOLE, ("INV-DUP-UUID", "fail", "uuid_duplicate"), "identity.smi_uuids", "fail"),
    ("duplicated UUID among eight",
     lambda: spoofs.duplicated_uuid(spoofs.real("tesla-v100s-pcie-32gb-8x-v11.xml")), WHOLE,
     ("INV-DUP-UUID", "fail", "uuid_duplicate"), "identity.smi_uuids", "fail"),
    ("attached count one above the GPUs listed",
     lambda: spoofs.attached(spoofs.real("rtx-2070-2x-v13.xml"), 3), WHOLE,
     ("INV-ATTACHED", "warn", "attached_more"), "identity.smi_attached", "warn"),
    ("attached count one below the GPUs listed",
     lambda: spoofs.attached(spoofs.real("rtx-2070-2x-v13.xml"), 1), WHOLE,
     ("INV-ATTACHED", "fail", "attached_fewer"), "identity.smi_attached", "fail"),
    ("driver too old for the CUDA version",
     lambda: spoofs.versions(spoofs.real("rtx-4090-1x-v12.xml"), cuda="12.4"), WHOLE,
     ("INV-DRIVER-CUDA", "fail", "driver_too_old"), "versions.smi_driver_cuda", "fail"),
    ("driver too new for the CUDA version",
     lambda: spoofs.versions(spoofs.real("rtx-4090-1x-v12.xml"), driver="550.54.14"), WHOLE,
     ("INV-DRIVER-CUDA", "fail", "driver_too_new"), "versions.smi_driver_cuda", "fail"),
    ("CUDA 'Not Found'",
     lambda: spoofs.versions(spoofs.real("rtx-4090-1x-v12.xml"), cuda="Not Found"), WHOLE,
     ("INV-CUDA-UNKNOWN", "warn", "cuda_unknown"), "versions.smi_driver_cuda", "warn"),
    ("CUDA 'N/A'", lambda: spoofs.versions(spoofs.real("tesla-t4-1x-v11.xml"), cuda="N/A"),
     WHOLE, ("INV-CUDA-UNKNOWN", "warn", "cuda_unknown"), "versions.smi_driver_cuda", "warn"),
    ("driver 'N/A'", lambda: spoofs.versions(spoofs.real("tesla-t4-1x-v11.xml"), driver="N/A"),
     WHOLE, ("INV-DRIVER-CUDA", "warn", "driver_unknown"), "versions.smi_driver_cuda", "warn"),
    ("vGPU where whole cards are declared",
     lambda: spoofs.virtualisation(spoofs.real("tesla-t4-1x-v11.xml"), "VGPU"), WHOLE,
     ("INV-VIRT", "fail", "vgpu_whole_declared"), "identity.smi_partitioning", "fail"),
    ("vGPU host where whole cards are declared",
     lambda: spoofs.virtualisation(spoofs.real("rtx-4090-1x-v12.xml"), "Host VGPU"), WHOLE,
     ("INV-VIRT", "fail", "vgpu_whole_declared"), "identity.smi_partitioning", "fail"),
    ("memory in use and no process listed",
     lambda: spoofs.without_processes(spoofs.real("rtx-4000-sff-ada-1x-v13.xml")), WHOLE,
     ("INV-UNLISTED-MEMORY", "warn", "unlisted_memory"), "identity.smi_unlisted_memory", "warn"),
    ("a busy V100S whose processes were hidden",
     lambda: spoofs.without_processes(spoofs.real("tesla-v100s-pcie-32gb-8x-v11.xml")), WHOLE,
     ("INV-UNLISTED-MEMORY", "warn", "unlisted_memory"), "identity.smi_unlisted_memory", "warn"),
    ("MIG enabled where whole cards are declared",
     lambda: spoofs.real("a100-sxm4-80gb-mig-1x-v12.xml"), WHOLE,
     ("INV-MIG", "fail", "mig_whole_declared"), "identity.smi_partitioning", "fail"),
]  # fmt: skip


@pytest.mark.parametrize(
    "label,make,declared,finding,key,status", SPOOFS, ids=[s[0] for s in SPOOFS]
)
def test_each_spoof_is_flagged(label, make, declared, finding, key, status):
    text = make()
    assert finding in found(text, declared)
    assert statuses(text, declared)[key] == status


def test_the_l4_the_spoofs_are_made_of_is_a_plain_l4():
    assert found(spoofs.l4()) == set()


def test_pass_through_is_a_whole_card_not_a_vgpu():
    for fixture in ("tesla-t4-1x-v11.xml", "tesla-p100-pcie-16gb-1x-v11.xml"):
        text = spoofs.real(fixture)
        assert "<virtualization_mode>Pass-Through</virtualization_mode>" in text
        assert statuses(text)["identity.smi_partitioning"] == "pass"
    spoofed = spoofs.virtualisation(spoofs.real("rtx-4090-1x-v12.xml"), "Pass-Through")
    assert found(spoofed) == set()


@pytest.mark.parametrize(
    "declared,finding,status",
    [
        (WHOLE, ("INV-MIG", "fail", "mig_whole_declared"), "fail"),
        (
            {"accelerator_model": "NVIDIA A100 80GB, MIG 3g.40gb"},
            ("INV-MIG", "info", "mig_declared"),
            "pass",
        ),
        ({}, ("INV-MIG", "warn", "mig_undeclared"), "warn"),
    ],
)
def test_mig_is_judged_against_what_the_offer_declares(declared, finding, status):
    text = spoofs.real("a100-sxm4-80gb-mig-1x-v12.xml")
    assert finding in found(text, declared)
    assert statuses(text, declared)["identity.smi_partitioning"] == status


# (driver, CUDA as nvidia-smi printed them, the finding or None); the table's minimum
# drivers are the GA rows of "CUDA Toolkit and Corresponding Driver Versions".
PAIRS = [
    ("535.54.03", "12.2", None),
    ("535.216.01", "12.2", None),  # the long-term branch stays on 12.2
    ("550.40.07", "12.4", None),  # a 550 beta, before the 12.4 toolkit's 550.54.14
    ("565.57.01", "12.7", None),  # no 12.7 toolkit shipped; R565 reports it
    ("595.84", "13.2", None),  # a two-part driver version (a real capture)
    ("520.06", "11.8", None),  # Windows numbering of the same branch
    ("410.104", "10.0", None),
    ("600.10", "13.3", None),  # newer than the table: only the minimum is known
    ("530.30.02", "12.2", "driver_too_old"),
    ("470.82.01", "12.0", "driver_too_old"),
    ("550.54.14", "12.2", "driver_too_new"),
    ("580.65.06", "12.8", "driver_too_new"),
    ("418.39", "8.0", "driver_too_new"),
]


@pytest.mark.parametrize("driver,cuda,expected", PAIRS)
def test_driver_and_cuda_pairs(driver, cuda, expected):
    text = spoofs.versions(spoofs.real("rtx-4090-1x-v12.xml"), driver=driver, cuda=cuda)
    texts = {t for code, _s, t in found(text) if code == "INV-DRIVER-CUDA"}
    assert texts == ({expected} if expected else set())


@pytest.mark.parametrize(
    "printed", ["Not Found", "N/A", "[N/A]", "Not Supported", "Unknown Error", "12", "twelve"]
)
def test_a_cuda_placeholder_is_unknown_not_a_crash_and_not_a_pass(printed):
    text = spoofs.versions(spoofs.real("rtx-4090-1x-v12.xml"), cuda=printed)
    assert found(text) == {("INV-CUDA-UNKNOWN", "warn", "cuda_unknown")}
    assert statuses(text)["versions.smi_driver_cuda"] == "warn"


def test_an_empty_or_absent_cuda_version_is_not_measured():
    empty = spoofs.versions(spoofs.real("rtx-4090-1x-v12.xml"), cuda="")
    absent = spoofs.real("gtx-1070-2x-v9.xml")
    for text in (empty, absent):
        assert statuses(text)["versions.smi_driver_cuda"] == "not_measured"


def test_the_client_inventory_check_reads_a_placeholder_as_unknown():
    from apps.evidence.rules import versions

    facts = Facts(driver={"driver_version": "535.86.05", "cuda_driver_version": "Not Found"})
    check = versions.check_cuda(facts, Context(declared={"cuda_version": "12.4"}))
    assert check.status == "not_measured"


@pytest.mark.parametrize(
    "name,claims",
    [
        ("NVIDIA H200", "H200"),
        ("NVIDIA H200 NVL", "NVIDIA H200 NVL"),
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB"),
        ("NVIDIA H20", "H20"),
        ("NVIDIA GH200 480GB", None),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA A10G", "A10G"),
        ("Tesla V100S-PCIE-32GB", "V100S"),
        ("Tesla V100-SXM3-32GB", "NVIDIA Tesla V100 SXM3 32GB"),
        ("NVIDIA GeForce RTX 4090 D", "RTX 4090 D"),
        ("GRID T4-8C", "T4"),
        ("NVIDIA RTX 4000 SFF Ada Generation", "RTX 4000 SFF Ada"),
    ],
)
def test_what_a_name_claims(name, claims):
    claim = gpu_tables.claim_of(name)
    assert (claim.label if claim else None) == claims


def test_the_table_holds_every_card_of_the_datasheet_with_its_memory():
    for sku in datasheet.SKUS:
        for pci in sku.pci_device_ids.value:
            product = gpu_tables.by_pci_id(pci)
            assert product is not None, pci
            assert sku.marketed_memory_gb.value in product.memory_gb, sku.key
            reported = sku.memory_total_mib.value
            if reported is not None:
                low, high = gpu_tables.memory_window_mib(sku.marketed_memory_gb.value)
                assert low <= reported <= high, sku.key


def test_the_table_holds_every_card_of_the_harness():
    for pci, sku in harness_skus.KNOWN_SKUS.items():
        product = gpu_tables.by_pci_id(pci)
        assert product is not None, pci
        assert gpu_tables.claim_of(sku["family"]).allows(product), pci
        if sku["memory_mib"]:
            windows = [gpu_tables.memory_window_mib(gb) for gb in product.memory_gb]
            assert any(low <= sku["memory_mib"] <= high for low, high in windows), pci


@pytest.mark.parametrize(
    "data,reason",
    [
        (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><nvidia_smi_log/>', "entity"),
        (b"<nvidia_smi_log><gpu>", "not XML"),
        (b"\xff\xfe<nvidia_smi_log/>", "UTF-8"),
    ],
)
def test_an_unreadable_output_is_a_finding_not_a_crash(data, reason):
    [log] = inventory.read_artifacts([("nvidia-smi-q-x.xml", data)])
    assert reason in log.error
    checks = {c.key: c for c in raw_inventory.checks(Facts(raw_smi=[log]), Context(declared=WHOLE))}
    assert checks["identity.smi_product"].status == "warn"
    assert checks["identity.smi_uuids"].status == "not_measured"


def test_other_xml_is_not_read_as_nvidia_smi_output():
    assert inventory.read_artifacts([("other.xml", b"<report><gpu/></report>")]) == []


def test_without_the_raw_output_nothing_is_measured():
    checks = raw_inventory.checks(Facts(raw_smi=None), Context(declared=WHOLE))
    assert {c.status for c in checks} == {"not_measured"}
    assert verdict(checks) == "insufficient"  # not a pass


def _harness_findings(text: str) -> list[dict]:
    from diligence_harness.inventory import build_inventory
    from diligence_harness.nvsmi import parse_nvidia_smi_xml

    return build_inventory(nvml_doc=parse_nvidia_smi_xml(text), cuda=None, pci=None)[1]


def test_the_harness_holds_the_same_driver_table_and_words():
    from diligence_harness import driver_cuda

    assert driver_cuda.CUDA_MINIMUM_DRIVER == gpu_tables.CUDA_MINIMUM_DRIVER
    for key, words in driver_cuda.MESSAGES.items():
        assert words == inventory.MESSAGES[key], key


VERSION_CASES = [(driver, cuda) for driver, cuda, _expected in PAIRS] + [
    (None, cuda) for cuda in ("Not Found", "N/A", "[N/A]", "Unknown Error", "12", "")
] + [("N/A", None), ("N/A", "12.2")]  # fmt: skip


@pytest.mark.parametrize("driver,cuda", VERSION_CASES)
def test_the_harness_flags_driver_and_cuda_as_the_server_does(driver, cuda):
    """The harness's own check of the pair agrees with the server's, word for word, and the
    server shows it beside its own (docs/rules/evidence.md#environment-checks)."""
    text = spoofs.versions(spoofs.real("rtx-4090-1x-v12.xml"), driver=driver, cuda=cuda)
    codes = ("INV-DRIVER-CUDA", "INV-CUDA-UNKNOWN")
    server = {
        (f.code, f.severity, inventory.MESSAGES[f.text] % f.params)
        for f in inventory.findings(logs(text), WHOLE)
        if f.code in codes
    }
    client = _harness_findings(text)
    assert {(f["id"], f["severity"], f["message"]) for f in client if f["id"] in codes} == server
    facts = Facts(raw_smi=logs(text), client_findings=client)
    [check] = [
        c
        for c in raw_inventory.checks(facts, Context(declared=WHOLE))
        if c.key == "versions.smi_driver_cuda"
    ]
    assert not any(inventory.disagrees(row) for row in check.findings)


def test_the_client_agreeing_is_shown_beside_the_server():
    text = spoofs.l4("NVIDIA H200")
    facts = Facts(raw_smi=logs(text), client_findings=_harness_findings(text))
    [check] = [
        c
        for c in raw_inventory.checks(facts, Context(declared=H200))
        if c.key == "identity.smi_product"
    ]
    [row] = check.findings
    assert row["code"] == "INV-SKU-NAME" and row["client"]["severity"] == "fail"
    assert not inventory.disagrees(row)


def test_the_client_silent_or_wrong_is_shown_and_the_server_decides():
    t4 = spoofs.real("tesla-t4-1x-v11.xml")
    uuid = logs(t4)[0].gpus[0].uuid
    # An older harness called Pass-Through a vGPU; an edited bundle dropped the rename.
    old_harness = {"id": "INV-VIRT", "severity": "warn", "subject": uuid, "message": "vGPU"}
    facts = Facts(raw_smi=logs(t4), client_findings=[old_harness])
    checks = {c.key: c for c in raw_inventory.checks(facts, Context(declared=WHOLE))}
    [row] = checks["identity.smi_partitioning"].findings
    assert row["severity"] is None and row["client"]["severity"] == "warn"
    assert inventory.disagrees(row)
    assert checks["identity.smi_partitioning"].status == "pass"  # the server's reading decides

    renamed = spoofs.l4("NVIDIA H200")
    facts = Facts(raw_smi=logs(renamed), client_findings=[])
    checks = {c.key: c for c in raw_inventory.checks(facts, Context(declared=H200))}
    [row] = checks["identity.smi_product"].findings
    assert row["client"] is None and inventory.disagrees(row)
    assert checks["identity.smi_product"].status == "fail"


@pytest.mark.parametrize(
    "label,make,declared,finding,key,status", SPOOFS, ids=[s[0] for s in SPOOFS]
)
def test_the_verdict_does_not_depend_on_the_client_findings(
    label, make, declared, finding, key, status
):
    text = make()
    with_findings = Facts(raw_smi=logs(text), client_findings=_harness_findings(text))
    without = Facts(raw_smi=logs(text))
    context = Context(declared=declared)
    judged = [verify(facts, context) for facts in (with_findings, without)]
    assert [c.status for c in judged[0]] == [c.status for c in judged[1]]
    assert verdict(judged[0]) == verdict(judged[1])


# --- through the API and the evidence page ------------------------------------------------------


@pytest.fixture
def h200_offer(tariq):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)  # 8× H200 SXM 141GB per node
    issued = make_token(tariq, case, offer)
    return {"case": case, "offer": offer, "token": issued.token, "record": issued.record}


def _upload(world, document) -> EvidenceBundle:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world['token']}")
    raw = serialise(bundle_for(document, world["record"]))
    response = client.post("/api/v1/evidence/", data=raw, content_type="application/json")
    assert response.status_code == 201, response.json()
    return EvidenceBundle.objects.select_related("verification").get(pk=response.json()["id"])


def test_a_renamed_l4_uploaded_with_its_findings_edited_out_fails_on_the_server(
    h200_offer, cpu_bundle, browser_as
):
    spoofed = spoofs.l4("NVIDIA H200")
    edited = spoofs.with_nvidia_smi(cpu_bundle, spoofed, client_findings=[])
    bundle = _upload(h200_offer, edited)
    checks = {c["key"]: c for c in bundle.verification.checks}
    assert bundle.verification.verdict == "failed"
    assert checks["identity.smi_product"]["status"] == "fail"
    assert (
        "claims H200, but PCI device id 0x27b8 is NVIDIA L4"
        in checks["identity.smi_product"]["detail"]
    )

    page = browser_as("priya").get(reverse("evidence:detail", args=[bundle.pk])).content.decode()
    assert "Inventory findings from the raw nvidia-smi output" in page
    assert (
        "The name NVIDIA H200 claims H200, but PCI device id 0x27b8 is NVIDIA L4: a name alone "
        "never identifies a card." in page
    )
    assert "The harness and the server disagree; the server's finding counts." in page
    assert "Name, PCI device id and memory name one card" in page

    chinese = browser_as("priya").get(
        reverse("evidence:detail", args=[bundle.pk]), HTTP_ACCEPT_LANGUAGE="zh-CN"
    )
    text = chinese.content.decode()
    assert "名称 NVIDIA H200 声称是 H200，但 PCI 设备 ID 0x27b8 是 NVIDIA L4" in text
    assert "名称、PCI 设备 ID 与显存指向同一张卡" in text


def test_the_same_spoof_with_or_without_the_client_findings_gets_the_same_verdict(
    h200_offer, cpu_bundle, browser_as
):
    spoofed = spoofs.l4("NVIDIA H200")
    with_findings = _upload(h200_offer, spoofs.with_nvidia_smi(cpu_bundle, spoofed))
    without = _upload(h200_offer, spoofs.with_nvidia_smi(cpu_bundle, spoofed, client_findings=None))
    assert with_findings.sha256 != without.sha256
    assert with_findings.verification.verdict == without.verification.verdict == "failed"
    assert [(c["key"], c["status"]) for c in with_findings.verification.checks] == [
        (c["key"], c["status"]) for c in without.verification.checks
    ]
    product = next(
        c for c in with_findings.verification.checks if c["key"] == "identity.smi_product"
    )
    assert product["findings"][0]["client"]["severity"] == "fail"  # the harness saw it too
    page = browser_as("aude").get(reverse("evidence:detail", args=[with_findings.pk]))
    assert "the name does not fit the PCI device id" in page.content.decode()


def test_a_failing_inventory_check_says_what_to_look_at_next():
    facts = Facts(raw_smi=logs(spoofs.l4("NVIDIA H200")))
    checks = {c.key: c for c in verify(facts, Context(declared=H200))}
    assert any("PCI ID Repository" in step for step in checks["identity.smi_product"].next_steps)
    text = spoofs.versions(spoofs.real("rtx-4090-1x-v12.xml"), cuda="12.4")
    checks = {c.key: c for c in verify(Facts(raw_smi=logs(text)), Context(declared=WHOLE))}
    assert any("edited" in cause for cause in checks["versions.smi_driver_cuda"].causes)
