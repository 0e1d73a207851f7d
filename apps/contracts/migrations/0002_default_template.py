"""Publish the default clause checklist template, version 1 (docs/rules/contracts.md#default-template).

The items are the must-check clauses of docs/rules/contracts.md (必查条款清单): the
prepayment premium, the upstream customer-region constraint and the
authorization documents among them.
They are written out here, frozen, so that later code changes can never alter
what version 1 said; organisations publish their own versions in the app.
"""

from django.db import migrations
from django.utils import timezone

DEFAULT_ITEMS = [
    {
        "key": "sla",
        "title": "Service level agreement (SLA)",
        "sub_points": [
            "Availability commitment: the SLA value",
            "Measurement basis: how availability is counted",
            "Compensation when the SLA is missed",
        ],
        "guidance": "可用性承诺(SLA)数值、统计口径、赔偿方式.",
        "required": True,
    },
    {
        "key": "planned_maintenance",
        "title": "Planned maintenance",
        "sub_points": [
            "Frequency of planned maintenance windows",
            "Advance notice period",
        ],
        "guidance": "计划内维护窗口的频率与提前通知期.",
        "required": True,
    },
    {
        "key": "hardware_lock",
        "title": "Card model and count locked",
        "sub_points": [
            "Card model locked",
            "Card count locked",
            "Vendor's right to downgrade or substitute",
        ],
        "guidance": "卡型与卡数是否锁定,供应商是否有权降级替换.",
        "required": True,
    },
    {
        "key": "quota_priority",
        "title": "Quota and priority rules",
        "sub_points": [
            "Quota and priority rules",
            "Risk of being crowded out by other tenants at business peaks",
        ],
        "guidance": "配额与优先级规则,业务高峰是否可能被其他租户挤占.",
        "required": True,
    },
    {
        "key": "data_deletion",
        "title": "Deletion of data and intermediate artifacts",
        "sub_points": [
            "Proof of deletion of data and intermediate artifacts",
            "Deletion deadline",
        ],
        "guidance": "数据与中间产物的删除证明与删除时限.",
        "required": True,
    },
    {
        "key": "audit_rights",
        "title": "Audit rights",
        "sub_points": [
            "Our own monitoring is allowed",
            "Log export",
        ],
        "guidance": "审计权:是否允许接入方自有监控与日志导出.",
        "required": True,
    },
    {
        "key": "billing_basis",
        "title": "Billing basis",
        "sub_points": [
            "Billed per second or per hour",
            "Cross-region traffic fees",
            "Local disk billed separately",
            "Object storage billed separately",
        ],
        "guidance": (
            "计费口径:按秒/按小时、是否收取跨区流量费、本地盘与对象存储是否独立计费."
        ),
        "required": True,
    },
    {
        "key": "termination_exit",
        "title": "Termination and exit",
        "sub_points": [
            "Data export window",
            "Image delivery format",
            "Lock-in penalties",
        ],
        "guidance": (
            "终止与退出条款:数据导出窗口、镜像交付格式、有无锁定罚则. "
            "Exit within a bounded time is a hard requirement: image "
            "rebuildable, data fully exportable, orchestration files portable."
        ),
        "required": True,
    },
    {
        "key": "prepayment",
        "title": "Prepayment ratio and premium",
        "sub_points": [
            "Prepayment ratio",
            "Premium over ordinary customers (reported 30–50 %)",
        ],
        "guidance": (
            "预付款比例显著高于普通海外客户(有报道称溢价约三到五成); decide "
            "with finance and risk. Not applicable only when nothing is paid in advance."
        ),
        "required": False,
    },
    {
        "key": "upstream_constraints",
        "title": "Upstream constraints",
        "sub_points": [
            "Required share of customers from non-restricted regions",
            "Supply conditions the upstream provider may tighten at any time",
        ],
        "guidance": (
            "上游供应方对客户地域构成是否有比例要求; 非受管制地区客户占比; "
            "供应侧条件可能随时收紧. Not applicable only when the vendor states none exist."
        ),
        "required": False,
    },
    {
        "key": "authorization_documents",
        "title": "Authorization documents",
        "sub_points": [
            "Contract retained",
            "Licences and authorization documents retained",
            "Written spec retained",
            "Export-control licence status of the hardware",
            "Hardware of unknown origin may not enter production",
        ],
        "guidance": (
            "留存合同、授权文件与规格说明,来源不明的高性能设备不得接入生产; "
            "遵守出口管制与当地法律."
        ),
        "required": True,
    },
]

REASON = "Default template v1 published"


def publish_default(apps, schema_editor):
    Template = apps.get_model("contracts", "ChecklistTemplate")
    Item = apps.get_model("contracts", "TemplateItem")
    if Template.objects.filter(number=1).exists():
        return
    template = Template.objects.create(number=1, note="Standard must-check clauses")
    _record(apps, "HistoricalChecklistTemplate", template, ["number", "note", "published_by_id"])
    for number, fields in enumerate(DEFAULT_ITEMS, start=1):
        item = Item.objects.create(template=template, number=number, **fields)
        _record(
            apps,
            "HistoricalTemplateItem",
            item,
            ["template_id", "number", "key", "title", "sub_points", "guidance", "required"],
        )


def _record(apps, history_model, instance, names):
    # Migrations use frozen models without simple-history's signals, so the
    # creation is written to history here, as every other record's is.
    History = apps.get_model("contracts", history_model)
    History.objects.create(
        id=instance.pk,
        created_at=instance.created_at,
        updated_at=instance.updated_at,
        version=instance.version,
        history_date=timezone.now(),
        history_type="+",
        history_change_reason=REASON,
        **{name: getattr(instance, name) for name in names},
    )


def unpublish_default(apps, schema_editor):
    Template = apps.get_model("contracts", "ChecklistTemplate")
    Template.objects.filter(number=1, checklists__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [("contracts", "0001_initial")]

    operations = [migrations.RunPython(publish_default, unpublish_default)]
