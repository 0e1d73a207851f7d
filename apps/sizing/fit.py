"""Does an offer's hardware cover the case's compute demand? A pure rule, for every workload.

The requirement spec and the declared spec state (docs/rules/sizing.md#demand-fit) cards
per node, the intra-node interconnect, an RDMA-class inter-node network and local NVMe,
because that is what decides whether a plan runs at all:

- GPUs are rented in whole nodes: the GPUs a plan needs are rounded up to
  whole nodes of the offer's node size, and the offer must hold that many.
- A plan that spans nodes (a training job on more than one node, or an
  inference instance wider than a node) synchronises over the inter-node
  network, which must be RDMA-class (InfiniBand or RoCE): over plain
  Ethernet adding cards adds little.
- A training job writes checkpoints to local disk (written at fixed
  steps, the latest few kept to roll back to, uploaded asynchronously). One
  checkpoint holds what a resume needs — weights, the FP32 master copy and the
  optimizer states (gradients are recomputed) — written sharded over the job's
  nodes, so their local NVMe together must hold the checkpoints kept.

Inference is re-sized on the offer's own card memory, training likewise, so an
offer with smaller cards needs more of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import ROUND_CEILING, Decimal

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.core import formats
from apps.sizing.calculator import InferenceSizing, OfferCapacity, offer_capacity
from apps.sizing.training import TrainingSizing, size_training

RDMA_NETWORKS = frozenset({"infiniband", "roce"})
DEFAULT_REPLICAS = 1
# Blank means two: a checkpoint replaces the last good one only once it is complete.
DEFAULT_CHECKPOINTS_KEPT = 2
TB = 10**12  # local NVMe is sold in decimal terabytes


@dataclass(frozen=True)
class OfferHardware:
    """What the offer and its declared spec say about the hardware ("" or None: not stated)."""

    card_count: int
    card_memory_gib: Decimal  # the declared memory, else the demand's own
    cards_per_node: int | None
    inter_node_network: str
    local_nvme_tb: Decimal | None


@dataclass(frozen=True)
class DemandFit:
    """One offer against the demand; ``shortfalls`` name each thing it cannot meet."""

    mode: str
    gpus_needed: int  # 0 when no instance or replica fits on this offer's cards
    cards_per_node: int | None
    nodes_needed: int | None  # None when the node size is not declared
    gpus_in_whole_nodes: int | None
    gpus_offered: int
    multi_node: bool
    checkpoint_bytes: int | None = None  # training only
    checkpoints_kept: int | None = None
    disk_needed_bytes: int | None = None
    disk_offered_bytes: int | None = None
    capacity: OfferCapacity | None = None  # inference: instances and sequences served
    summary: tuple[str, ...] = ()
    shortfalls: tuple[str, ...] = ()

    @property
    def meets_target(self) -> bool:
        return not self.shortfalls

    @property
    def message(self) -> str:
        """The working and every shortfall, in one paragraph for pages and the packet."""
        return " ".join((*self.summary, *self.shortfalls))


def demand_fit(
    *,
    sizing: InferenceSizing | TrainingSizing,
    hardware: OfferHardware,
    replicas: int | None = None,
    checkpoints_kept: int | None = None,
) -> DemandFit:
    """Check one offer against an inference or a training sizing."""
    if isinstance(sizing, InferenceSizing):
        return _inference_fit(sizing, hardware)
    return _training_fit(
        sizing,
        hardware,
        replicas=replicas or DEFAULT_REPLICAS,
        kept=checkpoints_kept or DEFAULT_CHECKPOINTS_KEPT,
    )


def _inference_fit(sizing: InferenceSizing, hardware: OfferHardware) -> DemandFit:
    tp = sizing.inputs.tensor_parallel
    capacity = offer_capacity(
        sizing=sizing,
        tensor_parallel=tp,
        card_count=hardware.card_count,
        card_memory_gib=hardware.card_memory_gib,
    )
    summary = [capacity.message]
    if capacity.instances_needed == 0:
        # The instance serves nothing on these cards: the message says why.
        return _fit("inference", 0, hardware, False, summary, [capacity.message], capacity=capacity)
    gpus = capacity.instances_needed * tp
    cpn = hardware.cards_per_node
    multi_node = cpn is not None and tp > cpn
    shortfalls = _node_shortfalls(gpus, hardware, summary, multi_node=multi_node)
    if multi_node:
        assert cpn is not None
        why = _("one instance of %(tp)s cards spans %(nodes)s nodes") % {
            "tp": tp,
            "nodes": math.ceil(tp / cpn),
        }
        shortfalls += _network_shortfalls(hardware, why)
    return _fit("inference", gpus, hardware, multi_node, summary, shortfalls, capacity=capacity)


def _training_fit(
    sizing: TrainingSizing, hardware: OfferHardware, *, replicas: int, kept: int
) -> DemandFit:
    resized = size_training(replace(sizing.inputs, card_memory_gib=hardware.card_memory_gib))
    if not resized.fits:
        reason = _("On this offer's cards of %(gib)s GiB no replica fits: %(why)s") % {
            "gib": _plain(hardware.card_memory_gib),
            "why": resized.warnings[0],
        }
        return _fit("training", 0, hardware, False, [], [reason])
    gpus = resized.cards * replicas
    summary = [
        ngettext(
            "One replica needs %(cards)s card of %(gib)s GiB; %(replicas)s replica(s): "
            "%(gpus)s GPUs.",
            "One replica needs %(cards)s cards of %(gib)s GiB; %(replicas)s replica(s): "
            "%(gpus)s GPUs.",
            resized.cards,
        )
        % {
            "cards": f"{resized.cards:,}",
            "gib": _plain(hardware.card_memory_gib),
            "replicas": f"{replicas:,}",
            "gpus": f"{gpus:,}",
        }
    ]
    cpn = hardware.cards_per_node
    nodes = math.ceil(gpus / cpn) if cpn else None
    multi_node = nodes is not None and nodes > 1
    shortfalls = _node_shortfalls(gpus, hardware, summary, multi_node=multi_node)
    if multi_node:
        why = _("the job spans %(nodes)s nodes") % {"nodes": nodes}
        shortfalls += _network_shortfalls(hardware, why)
    # What a resume needs; gradients are recomputed from the next batch.
    checkpoint = resized.model_states_bytes - resized.gradients_bytes
    disk_needed = checkpoint * kept
    disk_offered = None
    if hardware.local_nvme_tb is None:
        shortfalls.append(
            _("The declared spec does not state local NVMe, so the checkpoints have no known room.")
        )
    elif nodes is not None:
        disk_offered = math.floor(nodes * hardware.local_nvme_tb * TB)
        line = _(
            "Checkpoints: %(kept)s × %(size)s TB = %(needed)s TB on the local NVMe of "
            "%(nodes)s node(s) × %(per_node)s TB = %(offered)s TB."
        ) % {
            "kept": kept,
            "size": _tb(checkpoint),
            "needed": _tb(disk_needed),
            "nodes": nodes,
            "per_node": _plain(hardware.local_nvme_tb),
            "offered": _tb(disk_offered),
        }
        summary.append(line)
        if disk_offered < disk_needed:
            shortfalls.append(
                _(
                    "Local disk for checkpoints is short by %(short)s TB: %(kept)s checkpoints "
                    "of %(size)s TB need %(needed)s TB, the plan's nodes have %(offered)s TB."
                )
                % {
                    "short": _tb(disk_needed - disk_offered, up=True),
                    "kept": kept,
                    "size": _tb(checkpoint),
                    "needed": _tb(disk_needed),
                    "offered": _tb(disk_offered),
                }
            )
    return _fit(
        "training",
        gpus,
        hardware,
        multi_node,
        summary,
        shortfalls,
        checkpoint_bytes=checkpoint,
        checkpoints_kept=kept,
        disk_needed_bytes=disk_needed,
        disk_offered_bytes=disk_offered,
    )


def _node_shortfalls(
    gpus: int, hardware: OfferHardware, summary: list[str], *, multi_node: bool
) -> list[str]:
    """Round the GPUs up to whole nodes and compare with the offer's GPUs."""
    cpn = hardware.cards_per_node
    if not cpn:
        if gpus > hardware.card_count:
            return [_short_gpus(gpus, hardware.card_count), _no_node_size()]
        return [_no_node_size()]
    nodes = math.ceil(gpus / cpn)
    whole = nodes * cpn
    summary.append(
        ngettext(
            "%(gpus)s GPUs needed = %(nodes)s whole node of %(cpn)s cards (%(whole)s GPUs); "
            "the offer has %(offered)s.",
            "%(gpus)s GPUs needed = %(nodes)s whole nodes of %(cpn)s cards (%(whole)s GPUs); "
            "the offer has %(offered)s.",
            nodes,
        )
        % {
            "gpus": f"{gpus:,}",
            "nodes": f"{nodes:,}",
            "cpn": cpn,
            "whole": f"{whole:,}",
            "offered": f"{hardware.card_count:,}",
        }
    )
    if whole > hardware.card_count:
        return [_short_gpus(whole, hardware.card_count, nodes=nodes, cpn=cpn)]
    return []


def _short_gpus(needed: int, offered: int, *, nodes: int | None = None, cpn: int = 0) -> str:
    if nodes is None:
        return _("Needs %(needed)s GPUs; the offer has %(offered)s (short by %(short)s).") % {
            "needed": f"{needed:,}",
            "offered": f"{offered:,}",
            "short": f"{needed - offered:,}",
        }
    return _(
        "Needs %(nodes)s whole nodes of %(cpn)s cards (%(needed)s GPUs); the offer has "
        "%(offered)s (short by %(short)s)."
    ) % {
        "nodes": f"{nodes:,}",
        "cpn": cpn,
        "needed": f"{needed:,}",
        "offered": f"{offered:,}",
        "short": f"{needed - offered:,}",
    }


def _no_node_size() -> str:
    return _("The declared spec does not state cards per node, so whole nodes cannot be counted.")


def _network_shortfalls(hardware: OfferHardware, why: str) -> list[str]:
    network = hardware.inter_node_network
    if network in RDMA_NETWORKS:
        return []
    if not network:
        stated = _("the declared spec states no inter-node network")
    elif network == "none":
        stated = _("the offer has no inter-node network")
    else:
        stated = _("its inter-node network is Ethernet / TCP, without RDMA")
    return [
        _(
            "Multi-node: %(why)s, which needs an RDMA-class interconnect between nodes "
            "(InfiniBand or RoCE); %(stated)s."
        )
        % {"why": why, "stated": stated}
    ]


def _fit(
    mode: str,
    gpus: int,
    hardware: OfferHardware,
    multi_node: bool,
    summary: list[str],
    shortfalls: list[str],
    **extra,
) -> DemandFit:
    cpn = hardware.cards_per_node
    nodes = math.ceil(gpus / cpn) if cpn else None
    return DemandFit(
        mode=mode,
        gpus_needed=gpus,
        cards_per_node=cpn,
        nodes_needed=nodes,
        gpus_in_whole_nodes=nodes * cpn if nodes is not None and cpn else None,
        gpus_offered=hardware.card_count,
        multi_node=multi_node,
        summary=tuple(summary),
        shortfalls=tuple(shortfalls),
        **extra,
    )


def _plain(value: Decimal) -> str:
    return formats.number(value)


def _tb(value_bytes: int, *, up: bool = False) -> str:
    """Decimal terabytes, two places; a shortfall rounds up so it never reads 0.00."""
    value = Decimal(value_bytes) / TB
    if up:
        value = value.quantize(Decimal("0.01"), rounding=ROUND_CEILING)
    return formats.number(value, 2)
