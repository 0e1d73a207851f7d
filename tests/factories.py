"""Factories build records through the services, so history is written as in production."""

from decimal import Decimal

from apps.cases.services import case_create
from apps.offers.services import declared_spec_update, offer_create
from apps.vendors.services import vendor_create

FULL_SPEC = {
    "memory_per_card_gib": Decimal("140.4"),
    "cards_per_node": 8,
    "intra_node_interconnect": "nvlink",
    "intra_node_bandwidth_gbps": Decimal("900"),
    "inter_node_network": "infiniband",
    "inter_node_bandwidth_gbit": Decimal("3200"),
    "local_nvme_tb": Decimal("30.72"),
    "driver_version": "550.127.05",
    "cuda_version": "12.4",
    "runtime_versions": "vLLM 0.6.4",
}

_counter = {"n": 0}


def _next() -> int:
    _counter["n"] += 1
    return _counter["n"]


def make_case(actor, **fields):
    fields.setdefault("name", f"Case {_next()}")
    return case_create(actor=actor, **fields)


def make_vendor(actor, **fields):
    n = _next()
    fields.setdefault("name", f"Vendor {n}")
    fields.setdefault("jurisdiction", "Singapore")
    return vendor_create(actor=actor, **fields)


def make_offer(actor, case, *, vendor=None, spec=None, **fields):
    fields.setdefault("accelerator_model", "NVIDIA H200 SXM 141GB")
    fields.setdefault("accelerator_count", 64)
    fields.setdefault("unit_price", Decimal("3.10"))
    fields.setdefault("billing_basis", "per_hour")
    fields.setdefault("prepayment_ratio", Decimal("0.3"))
    fields.setdefault("contract_term_months", 12)
    offer = offer_create(actor=actor, case=case, vendor=vendor or make_vendor(actor), **fields)
    if spec is not None:
        declared_spec_update(
            actor=actor, spec=offer.declared_spec, fields=spec, reason="From the quote"
        )
        offer.refresh_from_db()
    return offer


def restore_default_templates() -> None:
    """Publish the clause templates the migrations publish, when a transactional test's
    flush has emptied the tables (versions 1 and 2, as a migrated database has them)."""
    from importlib import import_module

    from django.apps import apps

    from apps.contracts.models import ChecklistTemplate

    if ChecklistTemplate.objects.exists():
        return
    import_module("apps.contracts.migrations.0002_default_template").publish_default(apps, None)
    import_module("apps.contracts.migrations.0005_default_template_v2").publish_v2(apps, None)
