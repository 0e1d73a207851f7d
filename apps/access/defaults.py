"""The starting points of docs/rules/access.md: default matrix, controls and workload links.

A new matrix starts from the documented least-privilege example; every default
grant carries its justification, so a fresh matrix has no SoD violation.
"""

from django.utils.translation import gettext_lazy as _

# (key, name, kind, is_write). Cluster admin, job submit and data write change
# the remote environment; the rest only read (docs/rules/access.md#access-matrix).
DEFAULT_PERMISSIONS = (
    ("cluster_admin", _("Cluster admin"), "cluster_admin", True),
    ("job_submit", _("Job submit"), "job_submit", True),
    ("data_read", _("Data read"), "data_read", False),
    ("data_write", _("Data write"), "data_write", True),
    ("log_view", _("Log view"), "log_view", False),
    ("billing_view", _("Billing view"), "billing_view", False),
)

# (key, name, is_audit_role, {permission: justification}) — docs/rules/access.md#access-matrix.
DEFAULT_ROLES = (
    (
        "platform_admin",
        _("Platform admin"),
        False,
        {
            "cluster_admin": _("Operates the remote cluster: nodes, drivers, quotas."),
            "job_submit": _("Runs maintenance and acceptance jobs."),
            "log_view": _("Diagnoses incidents from cluster logs."),
            "billing_view": _("Watches spend against the budget guard-rails."),
        },
    ),
    (
        "algorithm_engineer",
        _("Algorithm engineer"),
        False,
        {
            "job_submit": _("Runs inference and training jobs."),
            "data_read": _("Reads the source data sets; read-only by design."),
            "log_view": _("Debugs their own jobs."),
        },
    ),
    (
        "data_engineer",
        _("Data engineer"),
        False,
        {
            "job_submit": _("Runs data preparation and sync jobs."),
            "data_read": _("Checks what was synchronised."),
            "data_write": _("Loads de-identified data sets and returns artifacts."),
            "log_view": _("Debugs sync and preparation jobs."),
        },
    ),
    (
        "audit_compliance",
        _("Audit / compliance"),
        True,
        {
            "log_view": _("Reviews access and operation logs."),
            "billing_view": _("Audits spend and billing basis."),
        },
    ),
)

# (key, title) — docs/rules/access.md#access-controls.
DEFAULT_CONTROLS = (
    ("mfa_entry", _("Single audited entry (bastion or zero-trust gateway) with MFA")),
    ("short_lived_credentials", _("Short-lived credentials; long-lived access keys disabled")),
    ("secrets_in_kms", _("Secrets held in a KMS, never in code repositories or image layers")),
    (
        "egress_allow_list",
        _("Egress allow-list: model service port, object storage, image registry only"),
    ),
    ("audit_and_recording", _("Access audit and session recording, logs kept off-site")),
    ("key_rotation", _("Keys rotated quarterly")),
    ("revocation_on_leaving", _("Access revoked as soon as someone leaves")),
)

# docs/rules/access.md#network-plan: workload → (key metric, recommended link).
DEFAULT_WORKLOAD_LINKS = {
    "online_inference": (_("Time to first token, tail latency"), "encrypted_tunnel"),
    "batch_inference": (_("Total throughput"), "public_internet"),
    "multi_node_training": (_("Inter-node bandwidth"), "in_cluster_rdma"),
    "data_sync": (_("Effective bandwidth"), "dedicated_line"),
}


def default_matrix_payload() -> dict:
    """The default matrix in the shape ``access_matrix_save`` takes."""
    return {
        "roles": [
            {"key": key, "name": str(name), "is_audit_role": audit}
            for key, name, audit, _grants in DEFAULT_ROLES
        ],
        "permissions": [
            {"key": key, "name": str(name), "kind": kind, "is_write": is_write}
            for key, name, kind, is_write in DEFAULT_PERMISSIONS
        ],
        "grants": [
            {"role": role, "permission": permission, "justification": str(why)}
            for role, _name, _audit, grants in DEFAULT_ROLES
            for permission, why in grants.items()
        ],
        "controls": [
            {"key": key, "status": "missing", "evidence": ""} for key, _title in DEFAULT_CONTROLS
        ],
    }
