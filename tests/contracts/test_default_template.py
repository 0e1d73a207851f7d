"""Template v1 holds every must-check clause of docs/rules/contracts.md."""

import pytest

from apps.contracts.models import ChecklistTemplate

# key → sub-points, in order. Each line names the must-check item of
# docs/rules/contracts.md it carries.
EXPECTED = {
    # item 1: SLA value, how availability is measured, compensation
    "sla": ["SLA value", "Measurement basis", "Compensation"],
    # item 2: maintenance frequency and advance notice
    "planned_maintenance": ["Frequency", "Advance notice"],
    # item 3: card model and count locked; right to downgrade or substitute
    "hardware_lock": ["Card model locked", "Card count locked", "downgrade or substitute"],
    # item 4: quota and priority; crowded out by other tenants at peak
    "quota_priority": ["Quota and priority rules", "crowded out by other tenants"],
    # item 5: proof and deadline of deleting data and intermediate artefacts
    "data_deletion": ["Proof of deletion of data and intermediate artifacts", "Deletion deadline"],
    # item 6: audit rights: own monitoring, log export
    "audit_rights": ["Our own monitoring", "Log export"],
    # item 7: billing basis, cross-region traffic, disk and object storage billed apart
    "billing_basis": [
        "per second or per hour",
        "Cross-region traffic",
        "Local disk billed separately",
        "Object storage billed separately",
    ],
    # item 8: termination and exit: export window, image format, lock-in penalties
    "termination_exit": ["Data export window", "Image delivery format", "Lock-in penalties"],
    # item 9: prepayment ratio, a premium of about 30–50 %
    "prepayment": ["Prepayment ratio", "30–50 %"],
    # item 10: upstream customer-region quotas
    "upstream_constraints": ["non-restricted regions", "tighten"],
    # item 11: contract, licences and written spec; no hardware of unknown origin in
    # production; export control
    "authorization_documents": [
        "Contract",
        "Licences",
        "Written spec",
        "Export-control",
        "unknown origin may not enter production",
    ],
}


@pytest.fixture
def v1(db):
    return ChecklistTemplate.objects.get(number=1)


def test_default_template_has_the_eleven_items_in_design_order(v1):
    assert [item.key for item in v1.items.order_by("number")] == list(EXPECTED)
    assert [item.number for item in v1.items.order_by("number")] == list(range(1, 12))


@pytest.mark.parametrize("key,fragments", EXPECTED.items(), ids=list(EXPECTED))
def test_every_seed_sub_point_is_present(v1, key, fragments):
    item = v1.items.get(key=key)
    assert len(item.sub_points) == len(fragments)
    for point, fragment in zip(item.sub_points, fragments):
        assert fragment.lower() in point.lower()
    assert item.guidance  # guidance for every item, naming no internal document
    assert "Seed" not in item.guidance and "§" not in item.guidance


def test_only_prepayment_and_upstream_constraints_may_be_not_applicable(v1):
    optional = set(v1.items.filter(required=False).values_list("key", flat=True))
    assert optional == {"prepayment", "upstream_constraints"}


def test_the_default_version_is_in_history(v1):
    row = v1.history.get()
    assert row.history_type == "+"
    assert row.history_change_reason == "Default template v1 published"
    assert v1.items.first().history.count() == 1
