"""Pure rules about offers and declared specs.

docs/rules/offers.md#declared-spec lists what a written spec sheet must state; any
missing item turn the spec "unconfirmed", shown as such everywhere.
"""

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext_lazy as _

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

# (field, label). Offer-level commercial terms are part of the written spec too.
OFFER_REQUIRED = (
    ("accelerator_model", _("accelerator model")),
    ("accelerator_count", _("accelerator count")),
    ("billing_basis", _("billing basis")),
    ("unit_price", _("unit price")),
    ("prepayment_ratio", _("prepayment ratio")),
    ("contract_term_months", _("contract term")),
)
SPEC_REQUIRED = (
    ("memory_per_card_gib", _("memory per card")),
    ("cards_per_node", _("cards per node")),
    ("intra_node_interconnect", _("intra-node interconnect")),
    ("intra_node_bandwidth_gbps", _("intra-node bandwidth")),
    ("inter_node_network", _("inter-node network")),
    ("inter_node_bandwidth_gbit", _("inter-node bandwidth floor")),
    ("local_nvme_tb", _("local NVMe capacity")),
    ("driver_version", _("driver version")),
    ("cuda_version", _("CUDA version")),
    ("runtime_versions", _("runtime versions")),
)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


@dataclass(frozen=True)
class SpecStatus:
    missing: tuple[str, ...]
    total_memory_gib: Decimal | None

    @property
    def confirmed(self) -> bool:
        return not self.missing


def declared_spec_status(offer: Any, spec: Any | None) -> SpecStatus:
    """Which required items are missing from an offer's written spec."""
    missing = [str(label) for field, label in OFFER_REQUIRED if _empty(getattr(offer, field))]
    if spec is None:
        missing += [str(label) for _field, label in SPEC_REQUIRED]
        return SpecStatus(missing=tuple(missing), total_memory_gib=None)
    for field, label in SPEC_REQUIRED:
        # A single-node offer has no inter-node link, so no bandwidth floor to state.
        if field == "inter_node_bandwidth_gbit" and spec.inter_node_network == "none":
            continue
        if _empty(getattr(spec, field)):
            missing.append(str(label))
    total = None
    if spec.memory_per_card_gib is not None and offer.accelerator_count:
        total = spec.memory_per_card_gib * offer.accelerator_count
    return SpecStatus(missing=tuple(missing), total_memory_gib=total)
