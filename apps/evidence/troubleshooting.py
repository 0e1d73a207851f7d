"""Likely causes and what to look at next, for each failing or warning check.

From the troubleshooting tables of seed 000 §六 and seed 004 §六 and the
pitfalls of harness-anchors (§0, §3.3, §4). Both seeds insist on the order:
locate the layer first (network → environment → framework → business; compute,
queueing or network) before changing parameters, one change at a time.
"""

from apps.evidence.rules import FAIL, WARN, Check

GENERAL = (
    "Locate the layer first (network → environment → framework → business), then the side "
    "(client or server), then resources; change one parameter at a time "
    "[seed 000 §六, seed 004 §六]."
)

# (key prefix, causes, next steps); the first matching prefix wins.
TABLE: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "identity.device_count",
        (
            "CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES hide GPUs from the container "
            "[harness-anchors §3.3]",
            "MIG or vGPU exposes one instance per process [§3.3]",
            "The vendor delivered fewer cards than the written spec [seed 004 §2]",
        ),
        (
            "Compare the visible-devices variables and attached_gpus in the bundle",
            "Open a ticket with the vendor: the runtime's count is what you can use [seed 004 §2]",
        ),
    ),
    (
        "identity.sku",
        (
            "A look-alike SKU sharing the die (H800/H20 for H100, 4090D for 4090) "
            "[harness-anchors §0 item 4, §4.1]",
            "A user-space shim rewriting the NVML name [§0 item 4, HAMi-core/softmig]",
            "A substituted or downgraded model, which the contract should forbid "
            "[DESIGN §2.4 item 3]",
        ),
        (
            "Read the PCI device and subsystem ids from lspci/sysfs outside the container",
            "Compare the matmul and bandwidth fingerprint with the datasheet's healthy fraction",
            "Ask for the authorisation documents and written spec [seed 004 §八]",
        ),
    ),
    (
        "identity.memory",
        (
            "ECC changes the visible size on GDDR parts (L40S 46068 MiB with ECC on) [§3.3]",
            "GB vs GiB confusion in the written spec (H200 141 GB = 143771 MiB) [§3.3]",
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
            "Memory that is not there, or oversubscribed to host memory (UVM or a shim) "
            "[harness-anchors §6 idea 3]",
            "Another tenant holding device memory",
        ),
        ("Re-run the probe on an idle GPU; compare write GB/s with HBM bandwidth",),
    ),
    (
        "identity.sources_agree",
        (
            "NVML answers rewritten in user space while the runtime or kernel sees the truth "
            "[§6 idea 1]",
            "The inventory was edited after the run (it no longer matches the raw XML)",
            "Device ordering differs (join on UUID / bus id, never index) [§3.3]",
        ),
        ("Trust the runtime's answer and open a ticket [seed 004 §2]",),
    ),
    (
        "identity.interposer",
        ("A GPU-sharing or spoofing shim (HAMi-core/softmig) is loaded [harness-anchors §0]",),
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
            "Image not pinned by digest; runtime version drift [seed 004 §六 环境不一致]",
            "Defaults left in place: /dev/shm too small, low file limits — the usual "
            "'runs locally, hangs remotely' [seed 000 §4 step 6]",
        ),
        (
            "Pin the image by tag and digest; write runtime versions into the start-up check "
            "[seed 004 §六]",
            "Declare shm size, ulimits and NTP in the job spec and check them at start "
            "[seed 000 §4 step 6]",
        ),
    ),
    (
        "performance",
        (
            "Power cap or shared cooling: sustained falls below burst [harness-anchors §6 idea 4]",
            "A look-alike or cut-down SKU behind a familiar name [§4.1]",
            "Noisy neighbour or time-slicing; MIG/vGPU [§6 idea 14]",
            "Silent TF32, small shapes or a different cuBLAS version [§4.2]",
        ),
        (
            "Check enforced against default power limit and clock-event reasons in telemetry",
            "Re-run with all other GPUs idle, then loaded; compare rounds",
            "Results differing widely between vendors point at spec or isolation problems "
            "[seed 004 §2]",
        ),
    ),
    (
        "service.ttft",
        (
            "Cold start: weights loading, replicas not warmed up [seed 004 §六 首字时延高; "
            "seed 000 §六 首个 token 延迟抖动大]",
            "Queue backlog; max_wait_ms too high; inputs too long [seed 004 §六]",
            "Network RTT eating the budget [seed 000 §4]",
        ),
        (
            "Send warm-up requests of fixed length; tune max_wait_ms; split long inputs "
            "[seed 004 §六]",
            "Add replicas and fail fast on queue timeout [seed 000 §六]",
        ),
    ),
    (
        "service.error_rate",
        (
            "Timeouts shorter than long generations (sporadic 5xx without logs) [seed 004 §六]",
            "Rate limiting or quota on the vendor's side [seed 000 §六 供应商侧限流或降级]",
            "Out of memory at this concurrency: weights + KV cache over budget [seed 004 §六]",
        ),
        (
            "Derive the timeout from the P99 output length; stream responses [seed 004 §六]",
            "Lower max_batch_size and concurrency and re-measure peak memory [seed 004 §六]",
        ),
    ),
    (
        "service.max_concurrency",
        (
            "Throughput far below baseline: batching limit too small, padding from mixed "
            "lengths, CPU-side preprocessing [seed 000 §六, seed 004 §六 吞吐远低于基线]",
            "Continuous batching not enabled [seed 004 §六]",
        ),
        (
            "Look at per-GPU utilisation to tell 'compute saturated' from 'waiting in queue' "
            "[seed 004 §六]",
            "Bucket by length or enable variable-length batching [seed 000 §六]",
        ),
    ),
    (
        "service.round_cv",
        (
            "Noisy neighbour or throttling between rounds [DESIGN §2.7]",
            "Autoscaling flapping on averages [seed 004 §六 实例频繁扩缩容抖动]",
        ),
        ("Re-run at a quiet hour; ask about tenant isolation and reserved capacity",),
    ),
    (
        "service.client_limited",
        ("The load generator's machine is the bottleneck, not the server [§2.3]",),
        ("Run the harness on a bigger client or lower the ladder; see the calibrate step",),
    ),
    (
        "network",
        (
            "Users far from the serving region [seed 000 §4]",
            "Port not open, egress allow-list missing, middlebox blocking [seed 000 §六 "
            "连接超时、握手失败]",
        ),
        (
            "Serve from a region closer to the users rather than squeezing the model [seed 000 §4]",
            "Probe hop by hop: local → access point → jump host → service port [seed 000 §六]",
        ),
    ),
)


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
