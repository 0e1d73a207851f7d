"""Template v1 holds every must-check clause of seed 000 §3 and 004 §8 (DESIGN §2.4)."""

import pytest

from apps.contracts.models import ChecklistTemplate

# key → sub-points, in order. Each line cites the seed phrase it carries.
EXPECTED = {
    # 000 §3 可用性承诺(SLA)数值、统计口径、赔偿方式
    "sla": ["SLA value", "Measurement basis", "Compensation"],
    # 000 §3 计划内维护窗口的频率与提前通知期
    "planned_maintenance": ["Frequency", "Advance notice"],
    # 000 §3 卡型与卡数是否锁定,供应商是否有权降级替换
    "hardware_lock": ["Card model locked", "Card count locked", "downgrade or substitute"],
    # 000 §3 配额与优先级规则,业务高峰是否可能被其他租户挤占
    "quota_priority": ["Quota and priority rules", "crowded out by other tenants"],
    # 000 §3 数据与中间产物的删除证明与删除时限
    "data_deletion": ["Proof of deletion of data and intermediate artifacts", "Deletion deadline"],
    # 000 §3 审计权:是否允许接入方自有监控与日志导出
    "audit_rights": ["Our own monitoring", "Log export"],
    # 000 §3 计费口径:按秒/按小时、跨区流量费、本地盘与对象存储是否独立计费
    "billing_basis": [
        "per second or per hour",
        "Cross-region traffic",
        "Local disk billed separately",
        "Object storage billed separately",
    ],
    # 000 §3 终止与退出条款:数据导出窗口、镜像交付格式、有无锁定罚则
    "termination_exit": ["Data export window", "Image delivery format", "Lock-in penalties"],
    # 000 §3 预付款比例,溢价约三到五成
    "prepayment": ["Prepayment ratio", "30–50 %"],
    # 000 §2 上游供应方对客户地域构成是否有比例要求
    "upstream_constraints": ["non-restricted regions", "tighten"],
    # 004 §8.1 合同、授权文件与规格说明,来源不明的设备不得接入生产; §8.2 出口管制
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
    assert item.guidance.startswith("Seed ")


def test_only_prepayment_and_upstream_constraints_may_be_not_applicable(v1):
    optional = set(v1.items.filter(required=False).values_list("key", flat=True))
    assert optional == {"prepayment", "upstream_constraints"}


def test_the_default_version_is_in_history(v1):
    row = v1.history.get()
    assert row.history_type == "+"
    assert "DESIGN §2.4" in row.history_change_reason
    assert v1.items.first().history.count() == 1
