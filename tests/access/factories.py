"""Access matrices and network plans built through the services, as in production."""

from decimal import Decimal

from apps.access.defaults import DEFAULT_CONTROLS, default_matrix_payload
from apps.access.services import access_matrix_save, network_plan_save


def make_matrix(actor, case, *, reason="", **changes):
    """The default matrix of docs/rules/access.md#access-matrix, optionally with lists replaced."""
    payload = default_matrix_payload()
    payload.update(changes)
    return access_matrix_save(actor=actor, case=case, reason=reason, **payload)


# The periods of controls in place: quarterly keys, one-hour credentials, a year of logs.
PERIODS_IN_PLACE = {
    "key_rotation_days": 90,
    "credential_lifetime_hours": 1,
    "log_retention_days": 365,
}


def controls_in_place() -> list[dict]:
    """Every control in place with an evidence note, as approval asks."""
    return [
        {"key": key, "status": "in_place", "evidence": f"Checked with the platform team: {key}"}
        for key, _title in DEFAULT_CONTROLS
    ]


def make_matrix_in_place(actor, case, *, reason="", **changes):
    """The default matrix with every control in place, with its evidence and periods."""
    return make_matrix(
        actor,
        case,
        reason=reason,
        **{"controls": controls_in_place(), "periods": PERIODS_IN_PLACE, **changes},
    )


PLAN_FIELDS = {
    "target_latency_ms": Decimal("400"),
    "user_to_gateway_ms": Decimal("8"),
    "estimated_rtt_ms": Decimal("120"),
    "rtt_source": "mtr from the office gateway to ap-southeast-1, 2026-01-12",
    "queueing_and_first_token_ms": Decimal("200"),
    "multi_node_training_in_one_cluster": True,
    "notes": "",
}
PLAN_LINKS = [
    {"workload": "online_inference", "key_metric": "TTFT, P99", "link": "encrypted_tunnel"},
    {"workload": "data_sync", "key_metric": "", "link": "dedicated_line"},
]


def make_plan(actor, case, *, links=None, **fields):
    return network_plan_save(
        actor=actor,
        case=case,
        fields={**PLAN_FIELDS, **fields},
        links=PLAN_LINKS if links is None else links,
    )
