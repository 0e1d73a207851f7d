"""Every sentence the rules generate reads in Chinese on a Chinese page.

Acceptance criteria, the expected cost of a month, the price normalisation and the
endpoint security and raw-inventory checks each produce sentences from numbers. In
zh-hans each must come out in Chinese: with Chinese in it and no run of three English
words left over (product names, standards and units aside). The verification's checks
are stored in English and worded anew when shown, so they are read through
``in_words`` as the pages read them, and one page is fetched over HTTP in Chinese.
"""

import re
from dataclasses import replace
from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import translation

from apps.acceptance import rules as acceptance
from apps.costs import rules as costs
from apps.evidence.inventory import MESSAGES
from apps.evidence.rules import raw_inventory, security
from apps.evidence.wording import in_words
from apps.scorecards import pricing
from tests.acceptance.measures import THREE_FAULTS, correctness, fault, ladder, level, soak
from tests.test_i18n import _compiled_catalogue  # noqa: F401  (compiles the catalogue)

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}
HAN = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_RUN = re.compile(r"\b[A-Za-z][A-Za-z'’]*(?:\s+[A-Za-z][A-Za-z'’]*){2,}\b")
# Names kept in English in Chinese text: standards, product and table names.
NAMES = (
    "Too Many Requests",
    "CUDA Toolkit and Corresponding Driver Versions",
    "NVIDIA CUDA Toolkit",
    "PCI ID Repository",
    "Machine Learning Engineering",
)
# A card's product name ("NVIDIA GeForce RTX 4090 24GB") is kept as the vendor writes it.
PRODUCT = re.compile(r"NVIDIA(?: GeForce)?(?: [A-Z0-9][\w-]*)+")
COUNTS = re.compile(r"(?:\w+: \d+)(?:, \w+: \d+)*")
SLO = acceptance.Slo(p95_ttft_ms=1500, error_rate_pct=0.5, peak_memory_pct=90)


def assert_chinese(text: str) -> None:
    assert HAN.search(text), f"no Chinese in {text!r}"
    assert_no_english(text)


def assert_no_english(text: str) -> None:
    """No English words left: a text with a lower-case word has Chinese, and no run of three
    English words remains (numbers, symbols and units such as "< 90 %" need no Chinese)."""
    if re.search(r"\b(?!(?:ms|bytes)\b)[a-z]{2,}\b", text):
        assert HAN.search(text), f"no Chinese in {text!r}"
    rest = PRODUCT.sub("", text)
    for name in NAMES:
        rest = rest.replace(name, "")
    leftover = ENGLISH_RUN.findall(rest)
    assert not leftover, f"English left in {text!r}: {leftover}"


def _check(key, status, measured="", title="驱动版本"):
    return acceptance.VerificationCheck(key, title, status, measured)


def _criteria():
    """Each criterion in each of its states: every kind of sentence it can say."""
    # What engineers typed is shown as typed: here, in Chinese.
    stability = [
        replace(fault("network"), activity="断网 30 秒"),
        replace(fault("node_killed", resumed=False), activity="杀掉节点 2"),
        replace(
            fault("maintenance", resumed=None, duplicated=True, outcome="failed"),
            activity="模拟维护",
        ),
    ]
    recorded = acceptance.ResultFacts("correctness", "failed", "人工抽查")
    return [
        acceptance.soak_criterion(None, 30),
        acceptance.soak_criterion(soak(minutes=60, restarts=[29]), 30),
        acceptance.health_criterion(None),
        acceptance.health_criterion(soak(checks=(180, 179))),
        acceptance.gpu_errors_criterion(None),
        acceptance.gpu_errors_criterion(soak(xid=[(600.0, "GPU-1", 79)], ecc=2)),
        acceptance.gpu_errors_criterion(soak(ecc=None, xid_measured=False)),
        acceptance.gpu_errors_criterion(soak(ecc=None)),
        acceptance.gpu_errors_criterion(soak(xid_measured=False)),
        acceptance.checks_criterion("versions", "版本", "声明的版本", []),
        acceptance.checks_criterion(
            "versions", "版本", "声明的版本", [_check("v", "not_measured")]
        ),
        acceptance.checks_criterion("versions", "版本", "声明的版本", [_check("v", "fail")]),
        *acceptance.connectivity_layer(
            acceptance.AcceptanceInputs(
                acceptance.PlanCriteria(),
                SLO,
                verification_checks=(_check("versions.driver", "pass"),),
            )
        ).criteria,
        acceptance.correctness_criterion(None, Decimal("100")),
        acceptance.correctness_criterion(correctness(0, 0), Decimal("100")),
        acceptance.correctness_criterion(correctness(9, 10), Decimal("100")),
        acceptance.ladder_criterion(None, (1, 4)),
        acceptance.ladder_criterion(ladder(level(1, n=20), level(4, p95=None)), (1, 4, 8)),
        acceptance.safe_level_criterion(None, SLO, 8),
        acceptance.safe_level_criterion(ladder(level(1, p95=2000.0)), SLO, None),
        acceptance.safe_level_criterion(ladder(level(1), level(4)), SLO, 8),
        acceptance.memory_criterion(None, SLO),
        acceptance.memory_criterion(ladder(level(1, memory=95.0)), SLO),
        *acceptance.stability_criteria([], 3, acceptance.REQUIRED_FAULT_KINDS),
        *acceptance.stability_criteria(stability, 3, acceptance.REQUIRED_FAULT_KINDS),
        *acceptance.stability_criteria(THREE_FAULTS, 3, acceptance.REQUIRED_FAULT_KINDS),
        *acceptance.manual_criteria("correctness", [recorded]),
    ]


def test_every_acceptance_criterion_speaks_chinese():
    with translation.override("zh-hans"):
        criteria = _criteria()
        for criterion in criteria:
            assert_chinese(criterion.title)
            if criterion.status != acceptance.PASSED:
                assert_chinese(criterion.explanation)
            for text in (criterion.required, criterion.measured, criterion.reason):
                assert_no_english(text)
        assert "连续运行无法读取内核日志（Xid）和 GPU 的 ECC 计数器" in [c.reason for c in criteria]
    with translation.override("en"):
        english = _criteria()
    # The English wording is unchanged: the same sentences, built the same way.
    assert (
        english[3].explanation
        == "Health checks: measured 179 of 180 passed, required every health check passes"
    )


def test_a_bad_ladder_is_refused_in_chinese():
    with translation.override("zh-hans"), pytest.raises(ValueError) as error:
        acceptance.parse_ladder("1, x")
    assert str(error.value) == "'x' 不是正整数"


CARD_TERMS = costs.OfferTerms("per_hour", Decimal("2.5"), 8, 12, Decimal("0.2"))


def _cost_lines():
    usage = costs.PeriodUsage(
        period=date(2026, 10, 1),
        instance_hours=Decimal("700"),
        gpu_hours=Decimal("2000"),
        tokens_in=5_000_000,
        tokens_out=1_000_000,
        storage_gib_months=Decimal("100"),
        cross_region_gib=Decimal("50"),
        amount=Decimal("20000"),
        requests=1000,
    )
    card = costs.RateCard(
        CARD_TERMS,
        gpus_per_instance=8,
        price_per_million_tokens_in=Decimal("0.5"),
        price_per_million_tokens_out=Decimal("1.5"),
        storage_per_gib_month=Decimal("0.02"),
        cross_region_per_gib=Decimal("0.09"),
        assumed_tokens_in_per_request=2000,
    )
    lines = list(costs.expected_cost(usage, card).lines)
    for basis, price in (
        ("per_month", Decimal("1500")),
        ("reserved", Decimal("90000")),
        ("", None),
    ):
        terms = costs.OfferTerms(basis, price, 8, 12, Decimal("0"))
        lines += costs.expected_cost(usage, costs.RateCard(terms)).lines
    causes = costs.period_causes(usage, card, costs.expected_cost(usage, card))
    bare = costs.cross_region_traffic(
        usage, costs.RateCard(CARD_TERMS), costs.expected_cost(usage, costs.RateCard(CARD_TERMS))
    )
    assert {c.key for c in causes} == {
        "idle_instances",
        "long_contexts",
        "price_differs",
    }
    assert bare is not None
    return lines + [c.detail for c in causes] + [bare.detail]


def _price_lines():
    lines = []
    for basis, price in (
        ("per_second", Decimal("0.0008")),
        ("per_hour", Decimal("2.5")),
        ("per_month", Decimal("1500")),
        ("reserved", Decimal("90000")),
    ):
        lines += pricing.cost_per_gpu_hour(
            unit_price=price,
            billing_basis=basis,
            gpu_count=8,
            term_months=12,
            prepayment_ratio=Decimal("0.2"),
            utilisation=Decimal("0.8"),
        ).explanation
    for nodes in (1, 3):
        lines += pricing.capacity_cost(
            nodes=nodes,
            cards_per_node=8,
            cost_per_gpu_hour=Decimal("2.5"),
            hours=Decimal("100"),
            currency="USD",
        ).explanation
    return lines


def test_cost_working_causes_and_price_explanations_speak_chinese():
    with translation.override("zh-hans"):
        lines = _cost_lines() + _price_lines()
    assert len(lines) > 20
    for line in lines:
        assert_chinese(line)
    with translation.override("en"):
        assert _price_lines()[-1].startswith("For the plan: 24 GPUs × 100 h × 2.5")


def _probe(name, status, expected=401):
    return {"probe": name, "ran": True, "status": status, "expected": expected}


SECURITY_CASES = [
    None,  # the step did not run
    {"probes": []},  # nothing recorded
    {  # refused as expected, a wrong answer, no answer, a burst refused with HTTP 429
        "probes": [
            _probe("no_token", 401),
            _probe("wrong_token", 200),
            _probe("forbidden_token", "timeout", 403),
            {**_probe("rate_limit", 429), "declared_rps": 2.0, "requests": 9,
             "status_counts": {"200": 3, "429": 6}},
        ]
    },
    {"probes": [{**_probe("rate_limit", 200), "requests": 9, "status_counts": {"200": 9}}]},
    {"probes": [{**_probe("rate_limit", 401), "requests": 9, "status_counts": {"401": 9}}]},
    {"probes": [{**_probe("rate_limit", None), "requests": 9, "status_counts": {"error": 9}}]},
    {"probes": [{**_probe("rate_limit", 200), "declared_rps": 1.0, "status_counts": {"200": 2}}]},
]  # fmt: skip


@pytest.mark.parametrize("result", SECURITY_CASES)
@pytest.mark.parametrize("declared_rps", [None, 5])
def test_endpoint_security_judgements_speak_chinese(result, declared_rps):
    checks = security.judge(result, declared_rps)
    with translation.override("zh-hans"):
        for check in checks:
            for field in ("detail", "expected", "tolerance", "source"):
                assert_chinese(in_words(getattr(check, field)))
            if check.measured and "×" not in str(check.measured):
                assert_chinese(in_words(check.measured))


def test_raw_inventory_checks_speak_chinese():
    no_output = raw_inventory.checks(raw_inventory.Facts(raw_smi=[]), raw_inventory.Context())
    findings = " ".join(
        [
            MESSAGES["mig_undeclared"] % {"instances": 2},
            MESSAGES["unlisted_memory"] % {"used": 2048},
        ]
    )
    stored = [
        raw_inventory.UUIDS % {"count": 8, "distinct": 7},
        "; ".join(raw_inventory.ATTACHED % {"attached": n, "listed": n} for n in (8, 4)),
        raw_inventory.VERSIONS % {"driver": "550.54.15", "cuda": "12.4"},
        raw_inventory.PARTITIONING % {"mig": "Enabled", "virtualisation": "None"},
        raw_inventory.MEMORY_USE % {"used": 2048, "processes": 0},
        findings,
    ]
    for check in no_output:
        stored += [check.detail, check.expected, check.source]
    with translation.override("zh-hans"):
        for text in stored:
            assert_chinese(in_words(text))
        assert in_words(findings).count("。") == 2
        for check in no_output:  # titles are msgids, translated by the page as they are
            assert_chinese(translation.gettext(check.title))
    # What is stored stays English: an approval relies on the values, in any language.
    assert no_output[0].detail == "The bundle carries no nvidia-smi -q -x output."


def test_a_sentence_the_rules_never_wrote_is_shown_as_it_is():
    with translation.override("zh-hans"):
        assert in_words("timeout after 30 s") == "timeout after 30 s"
        assert in_words(None) == ""
        assert in_words(42) == "42"


def test_the_evidence_page_shows_the_probe_judgement_in_chinese(
    people, client, django_capture_on_commit_callbacks
):
    from tests.approvals.factories import make_ready_case
    from tests.evidence.test_endpoint_security import PASSING, _upload
    from tests.evidence.test_endpoint_security import _probe as probe

    case, offer, _offers = make_ready_case(people)
    failing = [probe("no_token", 200, 401), *PASSING[1:]]
    bundle = _upload(people, offer, failing, django_capture_on_commit_callbacks)
    client.force_login(people["aude"])
    english = client.get(reverse("evidence:case", args=[case.pk])).content.decode()
    assert "where HTTP 401 (refused: not authenticated) was expected" in english
    page = client.get(reverse("evidence:case", args=[case.pk]), **ZH).content.decode()
    assert "端点返回 HTTP 200（已接受），而预期应为 HTTP 401（拒绝：未认证）。" in page
    assert "was expected" not in page
    detail = client.get(reverse("evidence:detail", args=[bundle.pk]), **ZH).content.decode()
    assert "仅限 HTTP 401" in detail
    assert "refused as expected" not in detail


def _declared(**more):
    from apps.evidence.rules import Context

    slo = {"p95_ttft_ms": 1500, "error_rate_pct": Decimal("0.5"), "peak_memory_pct": 90}
    return Context(declared={"accelerator_model": "H100", "cards_per_node": 8, **more}, slo=slo)


def _level(c, n, p95, errors=0, tok=(100.0, 130.0)):
    from apps.evidence.recompute import spread

    return {
        "concurrency": c,
        "n": n,
        "errors": errors,
        "error_rate": errors / n,
        "ttft_ms": {"n": n - errors, "p50": p95 / 2, "p95": p95},
        "output_tok_s": spread(list(tok)),
        "effective_concurrency": [c * 0.5],
    }


def _service_network_and_version_checks():
    """The network, version, environment and load-test checks, in their usual states."""
    from apps.evidence.rules import Facts, network, service, versions

    context = _declared(inter_node_network="infiniband")
    context.declared.update(driver_version="550.54", cuda_version="12.4")
    env = {
        "dev_shm": {"total_bytes": 64 * 2**20},
        "ulimits": {"open_files": {"soft": 1024}, "locked_memory_bytes": {"soft": 8 << 20}},
        "clock_sync": {"adjtimex": {"synchronised": False}},
        "software": {"cuda_runtime": "12.4"},
    }
    driver = {"driver_version": "550.54.15", "cuda_driver_version": "12.4"}
    found = versions.checks(Facts(environment=env, driver=driver), context)
    found += versions.checks(Facts(), _declared())
    probes = [{"host": "api:443", "rtt_ms": {"n": 20, "p50": 60.0}, "loss": 0.0}]
    found += [
        network.check_rtt([], 100.0),
        network.check_rtt(probes, 100.0),
        network.check_rtt(probes, None),
    ]
    levels = [_level(1, 200, 300.0, errors=2), _level(8, 200, 2100.0), _level(32, 40, 3000.0)]
    found += service.checks(Facts(levels=levels), context)
    found += service.checks(Facts(levels=[_level(4, 40, 3000.0)]), context)
    found += service.checks(Facts(), context)
    found += _performance_checks(context)
    found += _identity_checks()
    return found


def _identity_checks():
    """Count, model, memory, allocation probe, sources and interposer: spoofed and missing."""
    from apps.evidence.rules import Facts, identity

    spoofed = {
        "uuid": "GPU-1",
        "nvml": {
            "name": "NVIDIA H100 80GB HBM3",
            "pci_device_id": "0x2684",  # an RTX 4090's PCI id
            "memory_total_mib": 16384,
            "ecc_mode_current": "Enabled",
            "mig_mode_current": "Enabled",
        },
        "cuda": {"name": "NVIDIA GeForce RTX 4090", "memory_total_mib": 8000},
    }
    facts = Facts(
        gpus=[spoofed],
        gpu_count={"cuda": 1, "nvml": 2},
        sources={"cuda_runtime": {"status": "ok"}, "nvml": {"status": "ok"}},
        shims={"ld_preload_env": "", "ld_so_preload": {"content": "/lib/x.so"}},
        alloc_probe=[{"device": "cuda:0", "ok": True, "touched_bytes": 2**34}],
    )
    context = _declared(memory_per_card_gib=80)
    return [
        *identity.checks(facts, context),
        *identity.checks(Facts(), _declared(cards_per_node=None)),
        identity.check_alloc_probe(Facts(alloc_probe=[{"device": "cuda:0", "ok": False}])),
    ]


def _performance_checks(context):
    """Matmul, bandwidth, burst against sustained, slowest GPU, round spread; no benchmark."""
    from apps.evidence.rules import Facts, performance

    medians = {"cuda:0": [790, 640], "cuda:1": [795, 800], "cuda:2": [600, 610]}
    matmul = [
        {"device": device, "dtype": "bf16", "regime": "sustained", "median": value}
        for device, values in medians.items()
        for value in values
    ]
    matmul.append({"device": "cuda:0", "dtype": "bf16", "regime": "burst", "median": 900.0})
    memory = [{"device": "cuda:0", "kernel": "copy", "best": 2500.0, "median": 2500.0}]
    bench = {"backend": "cuda", "matmul": matmul, "memory_bw": memory}
    h100 = [{"nvml": {"name": "NVIDIA H100 80GB HBM3", "pci_device_id": "0x2330"}}]
    return [
        *performance.checks(Facts(gpus=h100, bench=bench), context),
        *performance.checks(Facts(bench={"backend": "python-fallback"}), context),
        *performance.checks(Facts(bench={"backend": "cuda", "matmul": matmul[:1]}), context),
    ]


def test_network_version_and_load_test_checks_speak_chinese():
    checks = _service_network_and_version_checks()
    assert len(checks) > 20
    with translation.override("zh-hans"):
        for check in checks:
            assert_chinese(in_words(check.title))
            for field in ("detail", "measured", "expected", "tolerance", "source"):
                text = getattr(check, field)
                # The sources' counts ("cuda: 1, nvml: 2") name the interfaces read.
                if text and not isinstance(text, int) and not COUNTS.fullmatch(str(text)):
                    if field == "source":
                        # A datasheet figure's citation names its public source by its title.
                        text = text.split("; peak: ")[0]
                    assert_no_english(in_words(text))
                    if re.search(r"[a-z]{3,}", PRODUCT.sub("", str(text))):
                        assert HAN.search(in_words(text)), (check.key, field, text)


def test_likely_causes_and_next_steps_speak_chinese():
    from apps.evidence import troubleshooting

    sentences = [troubleshooting.GENERAL]
    for _prefix, causes, steps in troubleshooting.TABLE:
        sentences += [*causes, *steps]
    with translation.override("zh-hans"):
        for sentence in sentences:
            assert_chinese(in_words(sentence))


def _sizing_sentences():
    """Every warning and offer message of the sizing calculator, for inference and training."""
    from apps.sizing.calculator import offer_capacity, size_inference
    from apps.sizing.training import TrainingInputs, size_training
    from tests.sizing.test_calculator import DEMO_INPUTS, H100_GIB, LLAMA_8B, inference

    sizing = size_inference(DEMO_INPUTS)
    texts = [
        *size_inference(inference(card_memory_gib=40)).warnings,  # weights do not fit
        *size_inference(inference(card_memory_gib=Decimal("80"), tensor_parallel=2)).warnings,
        *size_inference(inference(tensor_parallel=3)).warnings,  # heads do not split
        *size_inference(inference(tensor_parallel=16)).warnings,  # more cards than KV heads
        *size_inference(inference(context_tokens=1_000_000)).warnings,
    ]
    for cards, tp, memory in ((72, 8, Decimal("140.4")), (4, 8, 141), (16, 1, 80), (200, 8, 141)):
        texts.append(
            offer_capacity(
                sizing=sizing, tensor_parallel=tp, card_count=cards, card_memory_gib=memory
            ).message
        )
    base = TrainingInputs(
        architecture=LLAMA_8B,
        card_memory_gib=H100_GIB,
        micro_batch_sequences=64,
        sequence_tokens=8192,
    )
    texts += size_training(base).warnings
    texts += size_training(replace(base, micro_batch_sequences=1, card_memory_gib=24)).warnings
    return [t for t in texts if t]


def test_sizing_warnings_and_offer_messages_speak_chinese():
    with translation.override("zh-hans"):
        texts = _sizing_sentences()
    assert len(texts) >= 8
    for text in texts:
        assert_chinese(text)
    with translation.override("en"):
        english = _sizing_sentences()
    assert any(t.startswith("This offer gives 9 instances, you need 8 (1 spare)") for t in english)


def test_what_changed_since_a_decision_speaks_chinese():
    from apps.evidence.rules.composition import value_changes

    before = {
        "verdict": "verified",
        "checks": {
            "identity.device_count": ["pass", 8, 8],
            "performance.matmul.bf16": ["pass", "700.0 TFLOP/s", None],
            "network.rtt": ["pass", 1, 1],
        },
        "blocked": [],
        "bundle": "a" * 64,
    }
    after = {
        "verdict": "failed",
        "checks": {
            "identity.device_count": ["fail", 7, 8],
            "performance.matmul.bf16": ["pass", "720.0 TFLOP/s", None],
            "versions.cuda": ["not_measured", None, "12.4"],
        },
        "blocked": ["other_machine:2"],
    }
    with translation.override("zh-hans"):
        changes = value_changes(before, after)
    assert changes == [
        "改由另一个证据包核验",
        "结论 已核验 → 未通过",
        "identity.device_count 通过 → 未通过",
        "network.rtt 不再检查",
        "performance.matmul.bf16 实测值 700.0 TFLOP/s → 720.0 TFLOP/s",
        "versions.cuda 新增检查（未测量）",
        "有来自另一台机器的证据包",
    ]


def _refused_inputs():
    from apps.sizing.calculator import instances_from_cards
    from apps.sizing.inputs import architecture_from

    return [
        lambda: instances_from_cards(card_count=-1, tensor_parallel=1),
        lambda: architecture_from({"model_preset": "no-such-model"}),
        lambda: architecture_from({}),
        lambda: pricing.capacity_cost(
            nodes=-1, cards_per_node=8, cost_per_gpu_hour=Decimal("2.5"), hours=None
        ),
        lambda: pricing.capacity_cost(
            nodes=1, cards_per_node=8, cost_per_gpu_hour=Decimal("-1"), hours=None
        ),
    ]


@pytest.mark.parametrize("index", range(5))
def test_refused_sizing_and_pricing_inputs_are_worded_in_chinese(index):
    call = _refused_inputs()[index]
    with translation.override("zh-hans"), pytest.raises(ValueError) as refused:
        call()
    assert_chinese(str(refused.value))
    with translation.override("en"), pytest.raises(ValueError) as english:
        call()
    assert not re.search(r"[\u4e00-\u9fff]", str(english.value))
