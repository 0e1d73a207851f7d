"""Publish the default clause checklist template, version 2: plain-language guidance.

Version 1's guidance pointed at the internal notes it was drawn from. Version 2
keeps every item, sub-point and severity and says what to look for in plain
words, in English and Chinese, citing public sources. Version 1 stays as it was
published, with the checklists made from it. Nothing is published when the
organisation has already published a version of its own after version 1.
"""

from django.db import migrations
from django.utils import timezone

REASON = "Default template v2 published: guidance in plain language"

GUIDANCE = {
    "sla": (
        "Find the availability the vendor commits to, how it is measured, and what is "
        "paid back when it is missed. 可用性承诺(SLA)数值、统计口径、赔偿方式。"
    ),
    "planned_maintenance": (
        "How often planned maintenance may take capacity away, and how far ahead it is "
        "announced. 计划内维护窗口的频率与提前通知期。"
    ),
    "hardware_lock": (
        "The card model and count must be fixed in the contract; look for any right of "
        "the vendor to downgrade or substitute. 卡型与卡数是否锁定，供应商是否有权降级替换。"
    ),
    "quota_priority": (
        "How quota and priority are decided, and whether other tenants can crowd us out "
        "at peak times. 配额与优先级规则，业务高峰是否可能被其他租户挤占。"
    ),
    "data_deletion": (
        "The vendor must prove deletion of our data and intermediate artifacts, within a "
        "stated deadline. 数据与中间产物的删除证明与删除时限。"
    ),
    "audit_rights": (
        "We may run our own monitoring and export the logs. "
        "审计权：是否允许接入方自有监控与日志导出。"
    ),
    "billing_basis": (
        "Billed per second or per hour; cross-region traffic charged or not; local disk "
        "and object storage billed separately or not. "
        "计费口径：按秒/按小时、是否收取跨区流量费、本地盘与对象存储是否独立计费。"
    ),
    "termination_exit": (
        "The window to export our data, the format images are handed over in, and any "
        "lock-in penalty. Leaving within a bounded time is a hard requirement: images "
        "rebuildable elsewhere, data fully exportable, orchestration files portable. "
        "终止与退出条款：数据导出窗口、镜像交付格式、有无锁定罚则；须能在限定时间内退出。"
    ),
    "prepayment": (
        "Prepayment well above what other overseas customers pay (premiums of 30–50 % "
        "have been reported) is decided with finance and risk. Not applicable only when "
        "nothing is paid in advance. 预付款比例是否显著高于普通海外客户，须与财务、风控共同决定。"
    ),
    "upstream_constraints": (
        "Whether the upstream supplier requires a share of customers from non-restricted "
        "regions; such terms can tighten at any time. Not applicable only when the vendor "
        "states none exist. 上游供应方对客户地域构成是否有比例要求，供应侧条件可能随时收紧。"
    ),
    "authorization_documents": (
        "Keep the contract, the authorisation documents and the written spec; hardware of "
        "unknown origin may not enter production, and export-control law (the US Export "
        "Administration Regulations, the PRC Export Control Law) applies. "
        "留存合同、授权文件与规格说明，来源不明的设备不得接入生产；遵守出口管制法律。"
    ),
}

ITEM_FIELDS = ["number", "key", "title", "sub_points", "guidance", "required", "high_severity"]


def publish_v2(apps, schema_editor):
    Template = apps.get_model("contracts", "ChecklistTemplate")
    Item = apps.get_model("contracts", "TemplateItem")
    latest = Template.objects.order_by("-number").first()
    if latest is None or latest.number != 1 or latest.published_by_id is not None:
        return
    template = Template.objects.create(
        number=2, note="Standard must-check clauses, with plain-language guidance"
    )
    _record(apps, "HistoricalChecklistTemplate", template, ["number", "note", "published_by_id"])
    for old in Item.objects.filter(template=latest).order_by("number"):
        fields = {name: getattr(old, name) for name in ITEM_FIELDS}
        fields["guidance"] = GUIDANCE.get(old.key, old.guidance)
        item = Item.objects.create(template=template, **fields)
        _record(apps, "HistoricalTemplateItem", item, ["template_id", *ITEM_FIELDS])


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


def unpublish_v2(apps, schema_editor):
    Template = apps.get_model("contracts", "ChecklistTemplate")
    Template.objects.filter(number=2, published_by=None, checklists__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [("contracts", "0004_waiver_expiry_evidence_confirmation")]

    operations = [migrations.RunPython(publish_v2, unpublish_v2)]
