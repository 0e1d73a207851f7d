"""Demo: Lena's signed-off assessment for the demo case, built through the services.

No customer personal data leaves (the case's requirement), access must be fully
logged, and the exit path is ready: the derived constraints are "data may not
leave" and "one audited entry point". The facts auditors ask for are recorded with
no gap: the two datasets that leave, the model's weight files with their SHA-256
(listed by Tariq), encryption at rest and in transit, and logs kept 180 days.
"""

from apps.assessments.services import (
    Answers,
    assessment_create,
    assessment_sign_off,
    audit_facts_save,
    dataset_add,
    weight_file_add,
)

DEMO_ANSWERS = {
    "purpose": ("inference", "Online inference for the internal chat assistant."),
    "purpose_declared": ("yes", "Declared in the compute request of this case."),
    "data_classified": ("yes", "Prompts are classified 'internal'; no customer records."),
    "raw_data_leaves": ("no", "Prompts are de-identified at the gateway before they leave."),
    "personal_information": ("yes", "Employee names may appear in prompts."),
    "important_data": ("no", "Nothing notified or published as important data."),
    "export_assessment_completed": ("no", "Not needed while only de-identified data leaves."),
    "upstream_region_constraints": ("no", "No customer-region quota in the vendors' terms."),
    "access_personnel_defined": ("yes", "Platform team and two on-call engineers."),
    "access_traceable": ("yes", "Bastion with MFA and session recording."),
    "access_logging_required": ("yes", "Internal audit policy requires full logging."),
    "lawful_source": ("yes", "Prompts from our own employees under the IT policy."),
    "deidentification_rules": ("yes", "Names and IDs hashed at the gateway."),
    "retention_period": ("yes", "Prompts are not stored remotely; logs kept 180 days."),
    "audit_requirements": ("yes", "Model version, caller and latency logged per request."),
    "cross_border_legal_basis": ("yes", "Only de-identified data leaves."),
    "export_control_licence": ("yes", "Vendors confirm licensed H200 deployments in writing."),
    "authorization_documents": ("yes", "Contracts and written specs on file."),
    "image_rebuildable": ("yes", "Images built from our own Dockerfiles by digest."),
    "data_fully_exportable": ("yes", "No data stored remotely beyond the cache."),
    "orchestration_portable": ("yes", "Plain Kubernetes manifests, no vendor API."),
    "exit_bounded_time": ("yes", "Tested move to a second region in a drill."),
    "prc_collected_in_china": ("yes", ""),
    "prc_ciio": ("no", ""),
    "prc_art5_exemption": ("none", ""),
    "exporter_established": ("cn", "The organisation is established in Shanghai."),
    "gdpr_subjects_in_eea": ("no", "Employees and prompts are all in mainland China."),
    "importer_country": ("other", "The vendors sit in Singapore, Japan and Malaysia."),
    "exporter_role": ("controller", ""),
    "importer_role": ("processor", "The vendors only run our workloads on our instructions."),
    "transfer_derogation": ("not_applicable", "Neither the EU nor the UK rules apply."),
    "gdpr_scc_signed": ("not_applicable", ""),
    "gdpr_tia_done": ("not_applicable", ""),
    "uk_transfer_tool_signed": ("not_applicable", ""),
    "uk_tra_done": ("not_applicable", ""),
}
DEMO_NUMBERS = {
    "exit_bounded_time": 14,
    "prc_individuals_non_sensitive": 0,
    "prc_individuals_sensitive": 0,
}

DEMO_DATASETS = (
    {
        "name": "Chat prompts, de-identified at the gateway",
        "size_gb": "4.20",
        "data_format": "JSON Lines",
        "sensitivity": "internal",
        "sync_window": "Streamed while in use; nothing kept remotely",
    },
    {
        "name": "Internal wiki retrieval index",
        "size_gb": "38.00",
        "data_format": "Vector index files",
        "sensitivity": "internal",
        "sync_window": "Weekly, Sundays 02:00–04:00 UTC",
    },
)
DEMO_WEIGHT_FILES = (
    {
        "file_name": "llama-3.1-70b-instruct-part-1-of-2.safetensors",
        "sha256": "1165ab1fd55798b7d18f4981b3e0bf9aec52938de2d77545509bd4258003e88b",
        "size_bytes": 70_560_000_000,
    },
    {
        "file_name": "llama-3.1-70b-instruct-part-2-of-2.safetensors",
        "sha256": "c193dc283c5ef63a330b25e1bbf63530f25ef2b45b6152962cb9ff99416be9ff",
        "size_bytes": 70_560_000_000,
    },
)
DEMO_FACTS = {
    "encryption_at_rest": "yes",
    "encryption_at_rest_mechanism": "AES-256 on the vendor's NVMe volumes; keys in our own KMS",
    "encryption_in_transit": "yes",
    "encryption_in_transit_mechanism": "TLS 1.3 from our gateway; WireGuard between sites",
    "log_retention_days": 180,
}


def seed(*, case, users) -> None:
    answers: Answers = {
        key: {"value": value, "note": note} for key, (value, note) in DEMO_ANSWERS.items()
    }
    for key, number in DEMO_NUMBERS.items():
        answers.setdefault(key, {})["number"] = number
    assessment = assessment_create(
        actor=users["lena"],
        case=case,
        answers=answers,
        conclusion=(
            "Only de-identified prompts leave; no personal information is sent abroad in "
            "identifiable form, so no export mechanism is needed under the 2024 provisions. "
            "All access goes through the audited bastion. Re-assess before any training use."
        ),
    )
    for dataset in DEMO_DATASETS:
        dataset_add(actor=users["lena"], assessment=assessment, fields=dict(dataset))
    for weight_file in DEMO_WEIGHT_FILES:
        weight_file_add(actor=users["tariq"], assessment=assessment, fields=dict(weight_file))
    audit_facts_save(
        actor=users["lena"],
        assessment=assessment,
        fields=dict(DEMO_FACTS),
        reason="Read from the vendors' security annexes",
    )
    assessment_sign_off(actor=users["lena"], assessment=assessment)
