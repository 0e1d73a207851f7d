"""The case's requirement spec: derived from the sizing, and each offer checked against it.

docs/rules/sizing.md#requirement-spec: a spec sheet written on the demand side, in no vendor's
terms: card tier, memory per card, card count, parallel strategy (tensor /
pipeline / data parallel), cards per node, the intra-node interconnect and
the inter-node network class as separate items, the inter-node bandwidth
floor, local fast disk and the job's duration; for serving, also the
targets (tokens/s, requests/s at the SLOs). Every item is a floor: an offer
is short of it, equal to it, or over it, and a shortfall is named in words.

The spec may state a tolerance (0–50 %): an offer short of a numeric figure by
at most that share is within tolerance, for the tech lead to accept, instead of
short. Classes (card tier, interconnect, network), the parallel strategy, the
term and the endpoint's rate limit never take it (``TOLERANT_FIELDS``).

Plain functions on plain values, so the page, the API, the packet and the
tests all judge the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from enum import StrEnum
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from apps.core import formats
from apps.evidence import datasheet
from apps.offers.models import Interconnect, InterNodeNetwork
from apps.sizing.calculator import CARDS_PER_NODE, InferenceSizing
from apps.sizing.fit import DEFAULT_CHECKPOINTS_KEPT, DEFAULT_REPLICAS, TB
from apps.sizing.models import CardTier, RequiredInterconnect, RequiredNetwork
from apps.sizing.training import TrainingSizing

REQUIREMENT_FIELDS = (
    "card_tier",
    "memory_per_card_gib",
    "card_count",
    "tensor_parallel",
    "pipeline_parallel",
    "data_parallel",
    "cards_per_node",
    "intra_node_interconnect",
    "intra_node_bandwidth_gbps",
    "inter_node_network",
    "inter_node_bandwidth_gbit",
    "local_nvme_tb",
    "term_months",
    "throughput_tokens_per_s",
    "throughput_requests_per_s",
)
# What the spec states besides its items: the tolerance is no floor of its own.
SPEC_FIELDS = (*REQUIREMENT_FIELDS, "tolerance_pct")
# The numeric floors an offer may fall short of by the spec's tolerance and be weighed
# instead of refused. Not the parallel strategy (a tensor-parallel group does not split
# across nodes), the term (the capacity ends before the job does) or the endpoint's rate
# limit (requests past it are refused, not served slower); never a class.
TOLERANT_FIELDS = frozenset(
    {
        "memory_per_card_gib",
        "card_count",
        "cards_per_node",
        "intra_node_bandwidth_gbps",
        "inter_node_bandwidth_gbit",
        "local_nvme_tb",
        "throughput_tokens_per_s",
        "throughput_requests_per_s",
    }
)

# Dense BF16 TFLOP/s per card, from the card's datasheet, each tier's floor.
TIER_FLOORS = {CardTier.ENTRY: 100, CardTier.MID: 300, CardTier.HIGH: 700, CardTier.TOP: 2000}
TIER_RANK: dict[str, int] = {tier.value: rank for rank, tier in enumerate(TIER_FLOORS, start=1)}
# Weakest first; an offer's link is ranked on the same scale as the requirement.
INTERCONNECT_RANK = {RequiredInterconnect.PCIE: 1, RequiredInterconnect.NVLINK: 2}
OFFER_INTERCONNECT_RANK = {"pcie": 1, "nvlink": 2}  # "other": cannot be ranked
NETWORK_RANK = {RequiredNetwork.ETHERNET: 1, RequiredNetwork.RDMA: 2}
OFFER_NETWORK_RANK = {"none": 0, "ethernet": 1, "roce": 2, "infiniband": 2}
HOURS_PER_MONTH = Decimal(730)  # 8,760 hours a year ÷ 12
# Units counted in words ("1 card", "8 cards"), not written after the number.
CARDS, MONTHS = "cards", "months"


class Verdict(StrEnum):
    SHORT = "short"
    WITHIN_TOLERANCE = "within_tolerance"  # short, but by no more than the spec's tolerance
    EQUAL = "equal"
    OVER = "over"
    NOT_STATED = "not_stated"  # required, but the offer does not say (or cannot be ranked)
    NOT_REQUIRED = "not_required"


# The codes of the case's findings register an offer's check raises
# (docs/rules/findings.md): short of a floor, short within the spec's tolerance, or not
# saying.
REGISTER_FINDINGS = (
    "sizing.requirement_short",
    "sizing.requirement_within_tolerance",
    "sizing.requirement_not_stated",
)

VERDICT_LABELS = {
    Verdict.SHORT: gettext_lazy("Short"),
    Verdict.WITHIN_TOLERANCE: gettext_lazy("Within tolerance"),
    Verdict.EQUAL: gettext_lazy("Equal"),
    Verdict.OVER: gettext_lazy("Over"),
    Verdict.NOT_STATED: gettext_lazy("Not stated"),
    Verdict.NOT_REQUIRED: gettext_lazy("Not required"),
}


@dataclass(frozen=True)
class FieldCheck:
    """One item of the requirement against what the offer declares."""

    field: str
    label: str
    required: str  # as read, "—" when not required
    offered: str  # as read, "—" when not stated
    verdict: Verdict
    shortfall: str = ""  # one sentence when short, within tolerance or not stated
    tolerance: str = ""  # the spec's tolerance, as read, when the item is within it

    @property
    def is_short(self) -> bool:
        return bool(self.shortfall)

    @property
    def within_tolerance(self) -> bool:
        return self.verdict == Verdict.WITHIN_TOLERANCE

    @property
    def verdict_label(self) -> str:
        return str(VERDICT_LABELS[self.verdict])


@dataclass(frozen=True)
class RequirementCheck:
    """Every item of the requirement against one offer."""

    checks: tuple[FieldCheck, ...]

    @property
    def shortfalls(self) -> list[str]:
        """Every item the offer falls short of, within tolerance or not, or does not state:
        each one a finding of the register, none met silently."""
        return [check.shortfall for check in self.checks if check.shortfall]

    @property
    def within_tolerance(self) -> list[str]:
        """The shortfalls within the spec's tolerance: for the tech lead to accept."""
        return [check.shortfall for check in self.checks if check.within_tolerance]

    @property
    def meets(self) -> bool:
        """Nothing short: an item within tolerance is still short of its figure."""
        return not self.shortfalls


@dataclass(frozen=True)
class OfferDeclared:
    """What an offer and its declared spec say, as the requirement reads it (None: not stated)."""

    accelerator_model: str
    card_count: int | None
    memory_per_card_gib: Decimal | None
    cards_per_node: int | None
    intra_node_interconnect: str
    intra_node_bandwidth_gbps: Decimal | None
    inter_node_network: str
    inter_node_bandwidth_gbit: Decimal | None
    local_nvme_tb: Decimal | None
    term_months: int | None
    throughput_tokens_per_s: Decimal | None
    throughput_requests_per_s: Decimal | None
    rate_limit_rps: Decimal | None


def offer_declared(offer: Any, spec: Any | None) -> OfferDeclared:
    """Read an offer and its declared spec (either may be a plain namespace in tests)."""

    def stated(name: str) -> Any:
        return getattr(spec, name, None) if spec is not None else None

    return OfferDeclared(
        accelerator_model=offer.accelerator_model or "",
        card_count=offer.accelerator_count,
        memory_per_card_gib=stated("memory_per_card_gib"),
        cards_per_node=stated("cards_per_node"),
        intra_node_interconnect=stated("intra_node_interconnect") or "",
        intra_node_bandwidth_gbps=stated("intra_node_bandwidth_gbps"),
        inter_node_network=stated("inter_node_network") or "",
        inter_node_bandwidth_gbit=stated("inter_node_bandwidth_gbit"),
        local_nvme_tb=stated("local_nvme_tb"),
        term_months=offer.contract_term_months,
        throughput_tokens_per_s=stated("throughput_tokens_per_s"),
        throughput_requests_per_s=stated("throughput_requests_per_s"),
        rate_limit_rps=stated("rate_limit_rps"),
    )


def shown_value(field: str, value: Any) -> str:
    """One requirement item as a reader sees it, with its unit; "—" when not set."""
    if value is None or value == "":
        return "—"
    choices = {
        "card_tier": CardTier.choices,
        "intra_node_interconnect": RequiredInterconnect.choices,
        "inter_node_network": RequiredNetwork.choices,
    }
    if field in choices:
        return _choice_label(choices[field], value)
    units = {
        "memory_per_card_gib": "GiB",
        "card_count": CARDS,
        "cards_per_node": CARDS,
        "intra_node_bandwidth_gbps": "GB/s",
        "inter_node_bandwidth_gbit": "Gbit/s",
        "local_nvme_tb": "TB",
        "term_months": MONTHS,
        "throughput_tokens_per_s": _("tokens/s"),
        "throughput_requests_per_s": _("requests/s"),
    }
    return _n(value, units.get(field, ""))


# --- Derived from the sizing ----------------------------------------------------------


@dataclass(frozen=True)
class Derivation:
    """The requirement items the sizing decides, each with the reason in one sentence."""

    values: dict[str, Any]
    reasons: dict[str, str]


def derive_requirement(
    *,
    sizing: InferenceSizing | TrainingSizing | None,
    card_memory_gib: Decimal,
    replicas: int | None = None,
    checkpoints_kept: int | None = None,
    hours_needed: Decimal | None = None,
) -> Derivation:
    """What the compute demand says of each item; the items it does not decide are absent."""
    values: dict[str, Any] = {"memory_per_card_gib": Decimal(card_memory_gib)}
    reasons = {"memory_per_card_gib": _("The card memory the sizing was computed with.")}
    if isinstance(sizing, InferenceSizing) and sizing.feasible:
        _derive_inference(sizing, values, reasons)
    elif isinstance(sizing, TrainingSizing) and sizing.fits:
        _derive_training(
            sizing,
            values,
            reasons,
            replicas=replicas or DEFAULT_REPLICAS,
            kept=checkpoints_kept or DEFAULT_CHECKPOINTS_KEPT,
        )
    if hours_needed:
        values["term_months"] = math.ceil(Decimal(hours_needed) / HOURS_PER_MONTH)
        reasons["term_months"] = _(
            "%(hours)s hours needed, in months of 730 hours, rounded up."
        ) % {"hours": formats.number(hours_needed)}
    return Derivation(values=values, reasons=reasons)


def _derive_inference(sizing: InferenceSizing, values: dict, reasons: dict) -> None:
    tp = sizing.inputs.tensor_parallel
    values.update(
        card_count=sizing.total_cards,
        tensor_parallel=tp,
        pipeline_parallel=1,
        data_parallel=sizing.instances,
        cards_per_node=tp,
    )
    reasons.update(
        card_count=_("%(instances)s instances × %(tp)s cards.")
        % {"instances": f"{sizing.instances:,}", "tp": tp},
        tensor_parallel=_("The cards one instance spreads its layers over."),
        pipeline_parallel=_("The sizing keeps each instance's layers whole on its cards."),
        data_parallel=_("The instances that serve the target concurrency side by side."),
        cards_per_node=_(
            "An instance's tensor-parallel group exchanges data at every layer, so it stays "
            "within one node."
        ),
    )
    if tp > 1:
        values["intra_node_interconnect"] = RequiredInterconnect.NVLINK
        reasons["intra_node_interconnect"] = _(
            "Tensor parallelism over %(tp)s cards needs the fast link inside a node."
        ) % {"tp": tp}


def _derive_training(
    sizing: TrainingSizing, values: dict, reasons: dict, *, replicas: int, kept: int
) -> None:
    cards = sizing.cards * replicas
    per_node = min(cards, CARDS_PER_NODE)
    nodes = math.ceil(cards / per_node)
    values.update(
        card_count=cards,
        tensor_parallel=1,
        pipeline_parallel=1,
        data_parallel=cards,
        cards_per_node=per_node,
    )
    reasons.update(
        card_count=_("%(replicas)s replica(s) × %(cards)s cards.")
        % {"replicas": f"{replicas:,}", "cards": f"{sizing.cards:,}"},
        tensor_parallel=_("The sizing shards the model states instead of splitting layers."),
        pipeline_parallel=_("The sizing shards the model states instead of cutting stages."),
        data_parallel=_("Fully sharded data parallel: every card trains on its own micro-batch."),
        cards_per_node=_(
            "A job of up to %(node)s cards fits in one node; a larger one is planned on "
            "nodes of %(node)s cards, the usual size of a node with a full intra-node link."
        )
        % {"node": CARDS_PER_NODE},
    )
    if per_node > 1:
        values["intra_node_interconnect"] = RequiredInterconnect.NVLINK
        reasons["intra_node_interconnect"] = _(
            "Sharded training gathers the model states over the cards at every layer."
        )
    if nodes > 1:
        values["inter_node_network"] = RequiredNetwork.RDMA
        reasons["inter_node_network"] = _(
            "The job spans %(nodes)s nodes; over plain Ethernet adding cards adds little."
        ) % {"nodes": nodes}
    # What a resume needs (fit.py): model states less the gradients, sharded over the nodes.
    checkpoint = sizing.model_states_bytes - sizing.gradients_bytes
    per_node_tb = (Decimal(checkpoint * kept) / nodes / TB).quantize(
        Decimal("0.01"), rounding=ROUND_CEILING
    )
    values["local_nvme_tb"] = max(per_node_tb, Decimal("0.01"))
    reasons["local_nvme_tb"] = _(
        "%(kept)s checkpoints of %(size)s TB, written sharded over %(nodes)s node(s)."
    ) % {
        "kept": kept,
        "size": formats.number(Decimal(checkpoint) / TB, 2),
        "nodes": nodes,
    }


def requirement_problems(values: Mapping[str, Any]) -> dict[str, str]:
    """A requirement that contradicts itself: field → why."""
    problems = {}
    tp, pp, dp = (values.get(n) for n in ("tensor_parallel", "pipeline_parallel", "data_parallel"))
    count, per_node = values.get("card_count"), values.get("cards_per_node")
    if tp and pp and dp and count and tp * pp * dp > count:
        problems["card_count"] = _(
            "The parallel strategy uses %(plan)s cards (%(tp)s × %(pp)s × %(dp)s); the card "
            "count must be at least that."
        ) % {"plan": f"{tp * pp * dp:,}", "tp": tp, "pp": pp, "dp": dp}
    if tp and per_node and tp > per_node:
        problems["cards_per_node"] = _(
            "A tensor-parallel group of %(tp)s cards stays within one node: cards per node "
            "must be at least %(tp)s."
        ) % {"tp": tp}
    return problems


# --- Each offer against the requirement ------------------------------------------------


def _n(value: Any, unit: str = "") -> str:
    """A number with its unit; counts of cards and months agree in number."""
    if value is None:
        return "—"
    text = formats.number(value)
    if unit in (CARDS, MONTHS):
        count = int(value) if Decimal(value) == int(value) else 2
        if unit == CARDS:
            return ngettext("%(n)s card", "%(n)s cards", count) % {"n": text}
        return ngettext("%(n)s month", "%(n)s months", count) % {"n": text}
    return f"{text} {unit}".strip()


def _numeric(
    field: str,
    label: str,
    unit: str,
    required: Any,
    offered: Any,
    *,
    less: str = "",
    tolerance_pct: Any = 0,
) -> FieldCheck:
    """A floor on a number: short, within the tolerance, equal or over, with the gap named.

    An offered ``v`` against a required ``r`` with a tolerance of ``t`` %: ``v >= r`` meets
    it; ``r × (1 − t/100) <= v < r`` is within tolerance; below that, short.
    """
    shown_required = _n(required, unit)
    if required is None:
        return FieldCheck(field, label, "—", _n(offered, unit), Verdict.NOT_REQUIRED)
    if offered is None:
        return _not_stated(field, label, shown_required)
    shown = _n(offered, unit)
    if Decimal(offered) == Decimal(required):
        return FieldCheck(field, label, shown_required, shown, Verdict.EQUAL)
    if Decimal(offered) > Decimal(required):
        return FieldCheck(field, label, shown_required, shown, Verdict.OVER)
    gap = Decimal(required) - Decimal(offered)
    tolerance = Decimal(tolerance_pct or 0) if field in TOLERANT_FIELDS else Decimal(0)
    if tolerance > 0 and gap <= Decimal(required) * tolerance / 100:
        shown_tolerance = formats.percent(tolerance, ratio=False)
        within = _(
            "%(label)s: the offer declares %(offered)s, %(short)s short of the %(required)s "
            "required (%(share)s): within the spec's %(tolerance)s tolerance, so the tech "
            "lead must accept it."
        ) % {
            "label": _capital(label),
            "offered": shown,
            "short": _n(gap, unit),
            "required": shown_required,
            "share": formats.percent(gap / Decimal(required)),
            "tolerance": shown_tolerance,
        }
        return FieldCheck(
            field,
            label,
            shown_required,
            shown,
            Verdict.WITHIN_TOLERANCE,
            within,
            tolerance=shown_tolerance,
        )
    text = less or _(
        "%(label)s: needs at least %(required)s; the offer declares %(offered)s "
        "(short by %(short)s)."
    )
    shortfall = text % {
        "label": _capital(label),
        "required": shown_required,
        "offered": shown,
        "short": _n(gap, unit),
    }
    return FieldCheck(field, label, shown_required, shown, Verdict.SHORT, shortfall)


def _ranked(
    field: str,
    label: str,
    *,
    required: str,
    required_rank: int | None,
    offered: str,
    offered_rank: int | None,
) -> FieldCheck:
    """A floor on a class (tier, link, network): ranked on one scale, weakest first."""
    if required_rank is None:
        return FieldCheck(field, label, "—", offered or "—", Verdict.NOT_REQUIRED)
    if offered_rank is None:
        return _not_stated(field, label, required, offered=offered)
    if offered_rank == required_rank:
        return FieldCheck(field, label, required, offered, Verdict.EQUAL)
    if offered_rank > required_rank:
        return FieldCheck(field, label, required, offered, Verdict.OVER)
    shortfall = _("%(label)s: needs %(required)s; the offer declares %(offered)s.") % {
        "label": _capital(label),
        "required": required,
        "offered": offered,
    }
    return FieldCheck(field, label, required, offered, Verdict.SHORT, shortfall)


def _not_stated(field: str, label: str, required: str, *, offered: str = "") -> FieldCheck:
    if offered:
        # Stated, but in terms that cannot be ranked against the requirement.
        shortfall = _(
            "%(label)s: needs %(required)s; the offer's “%(offered)s” cannot be checked against it."
        ) % {"label": _capital(label), "required": required, "offered": offered}
    else:
        shortfall = _("%(label)s: needs %(required)s; the offer does not state it.") % {
            "label": _capital(label),
            "required": required,
        }
    return FieldCheck(field, label, required, offered or "—", Verdict.NOT_STATED, shortfall)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _choice_label(choices: Any, value: str) -> str:
    return str(dict(choices).get(value, value))


def offer_tier(model_name: str) -> tuple[str | None, int | None, str]:
    """The tier of the named card by its datasheet: (tier, rank, as read); rank None: unknown.

    A card below the lowest floor ranks 0, below every tier.
    """
    sku = datasheet.by_name(model_name)
    tflops = sku.dense_tflops.value.get("bf16") if sku is not None else None
    if sku is None or tflops is None:
        return None, None, model_name
    reached = [tier for tier, floor in TIER_FLOORS.items() if tflops >= floor]
    tier = reached[-1] if reached else None
    shown = _("%(name)s: %(tflops)s dense BF16 TFLOP/s by its datasheet") % {
        "name": sku.name,
        "tflops": formats.number(tflops),
    }
    if tier is None:
        return None, 0, shown
    tier_shown = _("%(tier)s (%(card)s)") % {
        "tier": _choice_label(CardTier.choices, tier),
        "card": shown,
    }
    return tier, TIER_RANK[tier], tier_shown


def check_offer(requirement: Mapping[str, Any], offer: OfferDeclared) -> RequirementCheck:
    """Every item of the requirement against one offer's declared spec, field by field."""
    r = requirement
    tolerance = r.get("tolerance_pct") or 0  # applied to TOLERANT_FIELDS only
    checks = [_tier_check(r.get("card_tier") or "", offer)]
    checks.append(
        _numeric(
            "memory_per_card_gib",
            _("memory per card"),
            "GiB",
            r.get("memory_per_card_gib"),
            offer.memory_per_card_gib,
            tolerance_pct=tolerance,
        )
    )
    checks.append(
        _numeric(
            "card_count",
            _("card count"),
            CARDS,
            r.get("card_count"),
            offer.card_count,
            tolerance_pct=tolerance,
        )
    )
    checks.append(_parallel_check(r, offer))
    checks.append(
        _numeric(
            "cards_per_node",
            _("cards per node"),
            CARDS,
            r.get("cards_per_node"),
            offer.cards_per_node,
            tolerance_pct=tolerance,
        )
    )
    checks.append(
        _class_check(
            "intra_node_interconnect",
            _("intra-node interconnect"),
            required=r.get("intra_node_interconnect") or "",
            required_choices=RequiredInterconnect.choices,
            required_ranks=INTERCONNECT_RANK,
            offered=offer.intra_node_interconnect,
            offered_ranks=OFFER_INTERCONNECT_RANK,
            offered_labels=_offer_choice_labels("interconnect"),
        )
    )
    checks.append(
        _numeric(
            "intra_node_bandwidth_gbps",
            _("intra-node bandwidth"),
            "GB/s",
            r.get("intra_node_bandwidth_gbps"),
            offer.intra_node_bandwidth_gbps,
            tolerance_pct=tolerance,
        )
    )
    checks.append(
        _class_check(
            "inter_node_network",
            _("inter-node network"),
            required=r.get("inter_node_network") or "",
            required_choices=RequiredNetwork.choices,
            required_ranks=NETWORK_RANK,
            offered=offer.inter_node_network,
            offered_ranks=OFFER_NETWORK_RANK,
            offered_labels=_offer_choice_labels("network"),
        )
    )
    checks.append(
        _numeric(
            "inter_node_bandwidth_gbit",
            _("inter-node bandwidth floor"),
            "Gbit/s",
            r.get("inter_node_bandwidth_gbit"),
            offer.inter_node_bandwidth_gbit,
            tolerance_pct=tolerance,
        )
    )
    checks.append(
        _numeric(
            "local_nvme_tb",
            _("local NVMe per node"),
            "TB",
            r.get("local_nvme_tb"),
            offer.local_nvme_tb,
            tolerance_pct=tolerance,
        )
    )
    checks.append(
        _numeric(
            "term_months",
            _("job duration or term"),
            MONTHS,
            r.get("term_months"),
            offer.term_months,
            less=_(
                "%(label)s: the capacity is needed for %(required)s; the offer's term is "
                "%(offered)s (short by %(short)s)."
            ),
        )
    )
    checks.append(
        _numeric(
            "throughput_tokens_per_s",
            _("serving throughput (output tokens/s)"),
            _("tokens/s"),
            r.get("throughput_tokens_per_s"),
            offer.throughput_tokens_per_s,
            tolerance_pct=tolerance,
        )
    )
    checks.append(
        _numeric(
            "throughput_requests_per_s",
            _("serving throughput (requests/s)"),
            _("requests/s"),
            r.get("throughput_requests_per_s"),
            offer.throughput_requests_per_s,
            tolerance_pct=tolerance,
        )
    )
    target_rps = r.get("throughput_requests_per_s")
    if target_rps is not None and offer.rate_limit_rps is not None:
        # A declared rate limit below the target refuses the traffic with 429
        # (docs/rules/evidence.md#endpoint-security).
        checks.append(
            _numeric(
                "rate_limit_rps",
                _("endpoint rate limit"),
                _("requests/s"),
                target_rps,
                offer.rate_limit_rps,
                less=_(
                    "%(label)s: %(offered)s, below the target of %(required)s; requests past "
                    "it are refused (short by %(short)s)."
                ),
            )
        )
    return RequirementCheck(checks=tuple(checks))


def _offer_choice_labels(kind: str) -> dict[str, str]:
    choices = Interconnect.choices if kind == "interconnect" else InterNodeNetwork.choices
    return {value: str(label) for value, label in choices}


def _tier_check(required: str, offer: OfferDeclared) -> FieldCheck:
    label = _("card tier")
    shown_required = _choice_label(CardTier.choices, required) if required else ""
    rank: int | None = None
    shown = ""
    if offer.accelerator_model:
        _tier, rank, shown = offer_tier(offer.accelerator_model)
    if required and rank is None and offer.accelerator_model:
        shortfall = _(
            "%(label)s: needs %(required)s; the accelerator model “%(model)s” is not in the "
            "datasheet table, so its tier cannot be told."
        ) % {"label": _capital(label), "required": shown_required, "model": offer.accelerator_model}
        return FieldCheck(
            "card_tier",
            label,
            shown_required,
            offer.accelerator_model,
            Verdict.NOT_STATED,
            shortfall,
        )
    if rank == 0:
        shown = _("below every tier (%(card)s)") % {"card": shown}
    return _ranked(
        "card_tier",
        label,
        required=shown_required,
        required_rank=TIER_RANK.get(required) if required else None,
        offered=shown,
        offered_rank=rank,
    )


def _class_check(
    field: str,
    label: str,
    *,
    required: str,
    required_choices: Any,
    required_ranks: Mapping[Any, int],
    offered: str,
    offered_ranks: Mapping[str, int],
    offered_labels: Mapping[str, str],
) -> FieldCheck:
    return _ranked(
        field,
        label,
        required=_choice_label(required_choices, required) if required else "",
        required_rank=required_ranks.get(required) if required else None,
        offered=offered_labels.get(offered, offered),
        offered_rank=offered_ranks.get(offered),
    )


def _parallel_check(requirement: Mapping[str, Any], offer: OfferDeclared) -> FieldCheck:
    """The plan's tensor-parallel group must fit in one of the offer's nodes."""
    tp, pp, dp = (
        requirement.get(n) for n in ("tensor_parallel", "pipeline_parallel", "data_parallel")
    )
    label = _("parallel strategy")
    if not (tp or pp or dp):
        return FieldCheck(
            "parallel_strategy", label, "—", _n(offer.cards_per_node), Verdict.NOT_REQUIRED
        )
    plan = _("tensor %(tp)s × pipeline %(pp)s × data %(dp)s") % {
        "tp": tp or 1,
        "pp": pp or 1,
        "dp": dp or 1,
    }
    check = _numeric(
        "parallel_strategy",
        label,
        CARDS,
        tp or 1,
        offer.cards_per_node,
        less=_(
            "%(label)s: a tensor-parallel group of %(required)s stays within one node; the "
            "offer's nodes hold %(offered)s (short by %(short)s)."
        ),
    )
    offered = (
        _("nodes of %(cards)s") % {"cards": _n(offer.cards_per_node, CARDS)}
        if offer.cards_per_node
        else "—"
    )
    return FieldCheck(check.field, label, plan, offered, check.verdict, check.shortfall)
