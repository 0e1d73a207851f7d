"""Likely causes and what to look at next, for each failing or warning check.

Drawn from common troubleshooting practice for remote GPU services and the
known ways GPUs are misreported or spoofed. The order matters:
locate the layer first (network → environment → framework → business; compute,
queueing or network) before changing parameters, one change at a time.
"""

from apps.evidence.rules import FAIL, WARN, Check
from apps.evidence.wording import phrase, phrases

GENERAL = phrase(
    "Locate the layer first (network → environment → framework → business), then the side "
    "(client or server), then resources; change one parameter at a time."
)

# (key prefix, causes, next steps); the first matching prefix wins.
TABLE: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "identity.device_count",
        (
            "CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES hide GPUs from the container",
            "MIG or vGPU exposes one instance per process",
            "The vendor delivered fewer cards than the written spec",
        ),
        (
            "Compare the visible-devices variables and attached_gpus in the bundle",
            "Open a ticket with the vendor: the runtime's count is what you can use",
        ),
    ),
    (
        "identity.sku",
        (
            "A look-alike SKU sharing the die (H800/H20 for H100, 4090D for 4090)",
            "A user-space shim rewriting the NVML name (as HAMi-core and softmig do)",
            "A substituted or downgraded model, which the contract should forbid",
        ),
        (
            "Read the PCI device and subsystem ids from lspci/sysfs outside the container",
            "Compare the matmul and bandwidth fingerprint with the datasheet's healthy fraction",
            "Ask for the authorisation documents and written spec",
        ),
    ),
    (
        "identity.memory",
        (
            "ECC changes the visible size on GDDR parts (L40S 46068 MiB with ECC on)",
            "GB vs GiB confusion in the written spec (H200 141 GB = 143771 MiB)",
            "An LD_PRELOAD shim rewriting memory totals (softmig shows an L40S as 16384 MiB)",
            "MIG or vGPU slicing",
        ),
        (
            "Run the allocate-and-touch probe (needs torch on the box)",
            "Check ECC and MIG modes in the raw nvidia-smi XML",
        ),
    ),
    (
        "identity.alloc_probe",
        (
            "Memory that is not there, or oversubscribed to host memory (UVM or a shim)",
            "Another tenant holding device memory",
        ),
        ("Re-run the probe on an idle GPU; compare write GB/s with HBM bandwidth",),
    ),
    (
        "identity.sources_agree",
        (
            "NVML answers rewritten in user space while the runtime or kernel sees the truth",
            "The inventory was edited after the run (it no longer matches the raw XML)",
            "Device ordering differs (join on UUID / bus id, never index)",
        ),
        ("Trust the runtime's answer and open a ticket",),
    ),
    (
        "identity.interposer",
        ("A GPU-sharing or spoofing shim (HAMi-core/softmig) is loaded",),
        ("Ask the vendor why; re-run in a clean container without LD_PRELOAD",),
    ),
    (
        "identity.smi_uuids",
        ("The nvidia-smi output was edited: one card listed twice to make up the count",),
        ("Ask for nvidia-smi -L and lspci -nn run from the vendor's console; count the cards",),
    ),
    (
        "identity.smi_attached",
        (
            "GPUs hidden from the container (CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES)",
            "The nvidia-smi output was trimmed or edited after it was printed",
        ),
        ("Compare with lspci -nn and /proc/driver/nvidia/gpus on the host",),
    ),
    (
        "identity.smi_product",
        (
            "A card renamed in user space or in the output: the name claims one card, the PCI "
            "id belongs to another",
            "A look-alike of the same die (H800 or H20 for H100, RTX 4090 D for RTX 4090)",
            "Memory rewritten by a GPU-sharing shim, or a board with modified memory",
        ),
        (
            "Read the PCI device id with lspci -nn outside the container and look it up in the "
            "PCI ID Repository",
            "Compare the matmul and bandwidth results with the card's datasheet",
        ),
    ),
    (
        "versions.smi_driver_cuda",
        (
            "Driver or CUDA version edited in the output",
            "nvidia-smi could not load the driver's CUDA library (it prints Not Found)",
        ),
        (
            "Compare with /proc/driver/nvidia/version and run nvidia-smi again",
            "Check the pair against NVIDIA's CUDA Toolkit release notes (driver versions table)",
        ),
    ),
    (
        "identity.smi_partitioning",
        ("The card is shared: MIG instances or a vGPU instead of the whole card declared",),
        ("Ask the vendor for whole cards (MIG disabled, no vGPU), as the offer declares",),
    ),
    (
        "identity.smi_unlisted_memory",
        (
            "Another container or tenant holds memory on the card; inside a container NVML "
            "lists only that container's processes",
        ),
        ("Re-run on an idle card and ask the vendor about tenant isolation",),
    ),
    (
        "versions",
        (
            "Image not pinned by digest; runtime version drift",
            "Defaults left in place: /dev/shm too small, low file limits — the usual "
            "'runs locally, hangs remotely'",
        ),
        (
            "Pin the image by tag and digest; write runtime versions into the start-up check",
            "Declare shm size, ulimits and NTP in the job spec and check them at start",
        ),
    ),
    (
        "performance",
        (
            "Power cap or shared cooling: sustained falls below burst",
            "A look-alike or cut-down SKU behind a familiar name",
            "Noisy neighbour or time-slicing; MIG/vGPU",
            "Silent TF32, small shapes or a different cuBLAS version",
        ),
        (
            "Check enforced against default power limit and clock-event reasons in telemetry",
            "Re-run with all other GPUs idle, then loaded; compare rounds",
            "Results differing widely between vendors point at spec or isolation problems",
        ),
    ),
    (
        "service.ttft",
        (
            "Cold start: weights loading, replicas not warmed up",
            "Queue backlog; max_wait_ms too high; inputs too long",
            "Network RTT eating the budget",
        ),
        (
            "Send warm-up requests of fixed length; tune max_wait_ms; split long inputs",
            "Add replicas and fail fast on queue timeout",
        ),
    ),
    (
        "service.error_rate",
        (
            "Timeouts shorter than long generations (sporadic 5xx without logs)",
            "Rate limiting or quota on the vendor's side",
            "Out of memory at this concurrency: weights + KV cache over budget",
        ),
        (
            "Derive the timeout from the P99 output length; stream responses",
            "Lower max_batch_size and concurrency and re-measure peak memory",
        ),
    ),
    (
        "service.max_concurrency",
        (
            "Throughput far below baseline: batching limit too small, padding from mixed "
            "lengths, CPU-side preprocessing",
            "Continuous batching not enabled",
        ),
        (
            "Look at per-GPU utilisation to tell 'compute saturated' from 'waiting in queue'",
            "Bucket by length or enable variable-length batching",
        ),
    ),
    (
        "service.throughput_at_slo",
        (
            "The server queues requests past its capacity: batch size or KV cache too small "
            "for the arrival rate",
            "The declared throughput was measured closed-loop or without the service levels",
            "Long or uneven prompts: prefill delays the first token of every request behind it",
        ),
        (
            "Compare the rate steps: where the P95 time to first token starts to climb is "
            "where the queue builds",
            "Ask the vendor how the declared throughput was measured (arrival rate, SLO, "
            "prompt lengths) and re-run the rate search on the case's own prompt set",
        ),
    ),
    (
        "service.round_cv",
        (
            "Noisy neighbour or throttling between rounds",
            "Autoscaling flapping on averages",
        ),
        ("Re-run at a quiet hour; ask about tenant isolation and reserved capacity",),
    ),
    (
        "service.client_limited",
        ("The load generator's machine is the bottleneck, not the server",),
        ("Run the harness on a bigger client or lower the ladder; see the calibrate step",),
    ),
    (
        "network",
        (
            "Users far from the serving region",
            "Port not open, egress allow-list missing, middlebox blocking",
        ),
        (
            "Serve from a region closer to the users rather than squeezing the model",
            "Probe hop by hop: local → access point → jump host → service port",
        ),
    ),
)


# Inside the node and the local disk.
TABLE += (
    (
        "interconnect.topology",
        (
            "PCIe cards sold as an NVLink (SXM/HGX) board, or NVLink bridges joining only pairs",
            "NVLink links down or the fabric manager not running on an NVSwitch system",
            "The cards seen are a share of the node (CUDA_VISIBLE_DEVICES, a container)",
        ),
        (
            "Read nvidia-smi topo -m and nvidia-smi nvlink -s on the host",
            "Ask the vendor for the board model (SXM/HGX or PCIe) in writing",
        ),
    ),
    (
        "interconnect.bandwidth",
        (
            "Peer access between the cards disabled (ACS, IOMMU or a virtual machine): "
            "copies go through host memory",
            "NVLink links degraded or down; the cards on PCIe behind different sockets",
            "A datasheet figure for both directions read as one direction",
        ),
        (
            "Run nccl-tests all_reduce_perf on the node and compare the bus bandwidth",
            "Check nvidia-smi nvlink -s for inactive links and nvidia-smi topo -p2p r",
        ),
    ),
    (
        "interconnect.integrity",
        (
            "A card computing wrong results without an error (silent data corruption)",
            "Unstable memory or overheating; an ECC error not yet reported",
        ),
        (
            "Run DCGM diagnostics (dcgmi diag -r 3) and gpu-burn on the card",
            "Take the card out of service and ask the vendor for a replacement",
        ),
    ),
    (
        "disk.capacity",
        (
            "The checkpoint path is on the system disk, not on the NVMe drives",
            "Fewer or smaller drives than declared; the drives not joined into one volume",
        ),
        (
            "List the drives with lsblk and point --disk-path at the NVMe volume",
            "Ask the vendor how the declared NVMe is mounted",
        ),
    ),
    (
        "disk.throughput",
        (
            "Network or cloud block storage behind the path instead of local NVMe",
            "A SATA drive, or a drive full or worn out",
            "Direct I/O refused: the filesystem is in memory or on the network",
        ),
        (
            "Run fio with --direct=1 on the checkpoint path and compare",
            "Check the device behind the path (lsblk, /sys/block/*/queue/rotational)",
        ),
    ),
)

# The reference training step.
TABLE += (
    (
        "training.throughput",
        (
            "A card computing wrong results, or gradients not averaged across the cards "
            "(a broken NCCL or a mismatched library)",
            "Numerical trouble on the card: a loss that turns into NaN under bfloat16",
        ),
        (
            "Run DCGM diagnostics (dcgmi diag -r 3) and nccl-tests on the node",
            "Run the training step again with NCCL_DEBUG=INFO and read which rank differs",
        ),
    ),
    (
        "training.checkpoint",
        (
            "The disk returned other bytes than were written (a failing drive or controller)",
            "The checkpoint path is on a filesystem that lost the file's end (a full disk, "
            "a network filesystem dropping writes)",
        ),
        (
            "Run the disk step on the checkpoint path and look for blocks read back different",
            "Check dmesg for I/O errors and the free space at the checkpoint path",
        ),
    ),
)

# Stored on each check in English and worded for the reader where shown
# (apps.evidence.wording).
for _prefix, _causes, _steps in TABLE:
    phrases(*_causes, *_steps)


def annotate(check: Check) -> Check:
    if check.status not in (FAIL, WARN):
        return check
    for prefix, causes, next_steps in TABLE:
        if check.key.startswith(prefix):
            check.causes = list(causes)
            check.next_steps = [*next_steps, GENERAL]
            return check
    check.next_steps = [GENERAL]
    return check
