"""Demo access matrix and network plan for the demo case.

The matrix is the default (docs/rules/access.md#access-matrix), with one shortcut the
reviewer caught: the data engineer was also given cluster admin, which together with
data write is a segregation-of-duties violation. The history keeps that version; the
grant was then withdrawn, every control is in place with its evidence, and tariq marked
the matrix reviewed. The network plan's typed RTT is an estimate of 210 ms against a 400
ms first-token budget (over half of it); each offer's own RTT comes from the demo
network probe (``apps.evidence.demo_network``), which puts one offer within target, one
over target and one over half the budget. The assessment keeps raw data at home, and
every link of the plan says it sends only de-identified or feature data.
"""

from decimal import Decimal

from apps.access.defaults import default_matrix_payload
from apps.access.models import AccessMatrix
from apps.access.services import access_matrix_review, access_matrix_save, network_plan_save

CONTROL_STATUS = {
    "mfa_entry": (
        "in_place",
        "Teleport bastion with WebAuthn; config in infra repo, ticket SEC-412.",
    ),
    "short_lived_credentials": ("in_place", "OIDC-issued 1 h certificates; static keys disabled."),
    "secrets_in_kms": ("in_place", "All secrets in KMS; CI registry tokens removed (SEC-418)."),
    "egress_allow_list": ("in_place", "Egress proxy allow-list, change SEC-421."),
    "audit_and_recording": (
        "in_place",
        "Session recording on; logs copied off-site daily (SEC-425).",
    ),
    "key_rotation": ("in_place", "Quarterly rotation job, last run recorded in SEC-430."),
    "revocation_on_leaving": ("in_place", "HR leaver feed disables SSO and bastion access."),
}


def seed(*, case, users) -> None:
    if AccessMatrix.objects.filter(case=case).exists():
        return
    tariq = users["tariq"]
    payload = default_matrix_payload()
    access_matrix_save(
        actor=tariq, case=case, reason="Started from the least-privilege default", **payload
    )
    payload["grants"].append(
        {
            "role": "data_engineer",
            "permission": "cluster_admin",
            "justification": "Needs to restart the storage daemons during the first sync.",
        }
    )
    payload["controls"] = [
        {"key": key, "status": status, "evidence": evidence}
        for key, (status, evidence) in CONTROL_STATUS.items()
    ]
    payload["periods"] = {
        "key_rotation_days": 90,
        "credential_lifetime_hours": 1,
        "log_retention_days": 180,
    }
    access_matrix_save(
        actor=tariq,
        case=case,
        reason="Controls assessed with the platform team; storage restarts for data engineering",
        expected_version=1,
        **payload,
    )
    payload["grants"].pop()
    matrix = access_matrix_save(
        actor=tariq,
        case=case,
        reason="Cluster admin withdrawn: the platform team restarts the storage daemons",
        expected_version=2,
        **payload,
    )
    access_matrix_review(actor=tariq, matrix=matrix, note="Quarterly review with the platform team")
    network_plan_save(
        actor=tariq,
        case=case,
        fields={
            "target_latency_ms": Decimal("400"),
            "user_to_gateway_ms": Decimal("8"),
            "estimated_rtt_ms": Decimal("210"),
            "rtt_source": "mtr, office gateway → Aurora ap-southeast-1, 100 probes (by hand)",
            "queueing_and_first_token_ms": Decimal("260"),
            "multi_node_training_in_one_cluster": True,
            "notes": "Inference only for now; fine-tuning would run inside one vendor cluster.",
        },
        # The assessment concludes that raw data stays (apps.assessments.demo): each link
        # says it sends only de-identified or feature data (docs/rules/access.md#data-paths).
        links=[
            {
                "workload": "online_inference",
                "link": "encrypted_tunnel",
                "data_sent": "deidentified",
                "notes": "Prompts are de-identified at the gateway.",
            },
            {"workload": "batch_inference", "link": "public_internet", "data_sent": "deidentified"},
            {
                "workload": "data_sync",
                "link": "dedicated_line",
                "data_sent": "deidentified",
                "notes": "The wiki retrieval index: embeddings, no documents.",
            },
        ],
    )
