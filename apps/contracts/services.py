"""Writes to checklist templates, clause checklists and red-flag waivers."""

import os
import uuid
from datetime import date
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from apps.contracts import rules, terms
from apps.contracts.documents import read_contract_file
from apps.contracts.models import (
    QUOTE_MAX_LENGTH,
    ChecklistItem,
    ChecklistTemplate,
    ClauseChecklist,
    ContractDocument,
    ContractTerms,
    DocumentKind,
    RedFlagWaiver,
    TemplateItem,
)
from apps.contracts.selectors import item_state, today, waiver_state
from apps.core.services import ConcurrentEditError, tracked_create, tracked_update
from apps.core.uploads import EVIDENCE_DOCUMENTS, UploadPolicy
from apps.offers.models import BillingBasis, Offer

ITEM_FIELDS = ("status", "clause_reference", "excerpt", "note")
TEMPLATE_ITEM_FIELDS = (
    "key",
    "title",
    "sub_points",
    "guidance",
    "required",
    "high_severity",
    # The clause in Chinese, where given (NULL: none).
    "title_zh",
    "sub_points_zh",
    "guidance_zh",
)


def evidence_max_bytes() -> int:
    return settings.WAIVER_EVIDENCE_MAX_BYTES


# A waiver's evidence: the documents the project takes as evidence, up to the setting's size.
EVIDENCE_POLICY = UploadPolicy(evidence_max_bytes, types=EVIDENCE_DOCUMENTS)


def checklist_template_publish(
    *, actor, items: list[dict[str, Any]], note: str
) -> ChecklistTemplate:
    """Publish the next template version; checklists made from older versions keep theirs."""
    if not actor.has_perm("contracts.add_checklisttemplate"):
        raise PermissionDenied("Only a legal reviewer may publish a checklist template.")
    cleaned = _template_items_clean(items)
    if not (note or "").strip():
        raise ValidationError({"note": "Say why this template version is published."})
    with transaction.atomic():
        # Lock the newest version so two publishers cannot take the same number.
        latest = ChecklistTemplate.objects.select_for_update().aggregate(n=Max("number"))["n"] or 0
        number = latest + 1
        reason = f"Template v{number} published: {note.strip()}"
        template = tracked_create(
            ChecklistTemplate,
            actor=actor,
            reason=reason,
            number=number,
            note=note.strip(),
            published_by=actor,
        )
        for position, fields in enumerate(cleaned, start=1):
            tracked_create(
                TemplateItem,
                actor=actor,
                reason=reason,
                template=template,
                number=position,
                **fields,
            )
    return template


def _template_items_clean(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not items:
        raise ValidationError({"items": "A template needs at least one item."})
    errors: dict[str, str] = {}
    cleaned, seen = [], set()
    for index, raw in enumerate(items):
        key = (raw.get("key") or "").strip()
        title = (raw.get("title") or "").strip()
        sub_points = raw.get("sub_points") or []
        if not key or slugify(key).replace("-", "_") != key.replace("-", "_"):
            errors[f"items[{index}].key"] = "Give a key of letters, digits and underscores."
        elif key in seen:
            errors[f"items[{index}].key"] = f"Key '{key}' is used by another item."
        seen.add(key)
        if not title:
            errors[f"items[{index}].title"] = "Give the item a title."
        if not isinstance(sub_points, list) or not all(
            isinstance(p, str) and p.strip() for p in sub_points
        ):
            errors[f"items[{index}].sub_points"] = "Sub-points are a list of non-empty texts."
            sub_points = []
        sub_points_zh = raw.get("sub_points_zh") or []
        if not isinstance(sub_points_zh, list) or not all(
            isinstance(p, str) and p.strip() for p in sub_points_zh
        ):
            errors[f"items[{index}].sub_points_zh"] = "Sub-points are a list of non-empty texts."
            sub_points_zh = []
        cleaned.append(
            {
                "key": key,
                "title": title,
                "sub_points": [p.strip() for p in sub_points],
                "guidance": (raw.get("guidance") or "").strip(),
                "required": bool(raw.get("required", True)),
                "high_severity": bool(raw.get("high_severity", False)),
                # The Chinese text is optional; nothing given is stored as none (NULL).
                "title_zh": (raw.get("title_zh") or "").strip() or None,
                "sub_points_zh": [p.strip() for p in sub_points_zh] or None,
                "guidance_zh": (raw.get("guidance_zh") or "").strip() or None,
            }
        )
    if errors:
        raise ValidationError(errors)
    return cleaned


def checklist_create(*, actor, offer) -> ClauseChecklist:
    """Start the offer's checklist from the latest template version, every item unreviewed."""
    if not actor.has_perm("contracts.add_clausechecklist"):
        raise PermissionDenied("Only a legal reviewer may start a clause checklist.")
    with transaction.atomic():
        if ClauseChecklist.objects.filter(offer=offer).exists():
            raise ValidationError({"offer": "This offer already has a clause checklist."})
        template = ChecklistTemplate.objects.order_by("-number").first()
        if template is None:
            raise ValidationError({"template": "No checklist template has been published."})
        reason = f"Clause checklist started from template v{template.number}"
        checklist = tracked_create(
            ClauseChecklist, actor=actor, reason=reason, offer=offer, template=template
        )
        for source in template.items.order_by("number"):
            tracked_create(
                ChecklistItem,
                actor=actor,
                reason=reason,
                checklist=checklist,
                template_item=source,
                **{name: getattr(source, name) for name in ("number", *TEMPLATE_ITEM_FIELDS)},
            )
    return checklist


def checklist_save(
    *,
    actor,
    checklist: ClauseChecklist,
    items: list[dict[str, Any]],
    reason: str,
    expected_version: int | None = None,
    contract_terms: dict[str, Any] | None = None,
) -> ClauseChecklist:
    """Save many items of one checklist, and its contract terms, in one transaction: all
    of them or none.

    Each row names an item ``id`` of this checklist and any of ``status``,
    ``clause_reference``, ``excerpt``, ``note``; fields left out keep their
    value. Errors are keyed ``items[<row>].<field>``. A changed item records
    the actor as reviewer, and a status change lapses the item's waiver.
    ``contract_terms`` maps term names (``apps.contracts.terms``) to values, None or
    blank for "not stated"; terms left out keep theirs; errors are keyed
    ``terms.<name>``.
    """
    if not actor.has_perm("contracts.change_clausechecklist"):
        raise PermissionDenied("Only a legal reviewer may edit a clause checklist.")
    with transaction.atomic():
        current = ClauseChecklist.objects.select_for_update().get(pk=checklist.pk)
        if expected_version is not None and current.version != expected_version:
            raise ConcurrentEditError(current, expected_version)
        by_id = {item.pk: item for item in current.items.prefetch_related("waivers")}
        errors: dict[str, Any] = {}
        try:
            changes = _item_changes(by_id, items)
        except ValidationError as error:
            errors.update(error.message_dict)
            changes = []
        record = ContractTerms.objects.filter(checklist=current).first()
        try:
            terms_changed = _terms_changes(record, contract_terms or {})
        except ValidationError as error:
            errors.update(error.message_dict)
            terms_changed = {}
        if errors:
            raise ValidationError(errors)
        if not (reason or "").strip():
            raise ValidationError({"change_reason": "Say why this checklist is being changed."})
        if not changes and not terms_changed:
            return current
        if terms_changed:
            _terms_write(
                actor=actor, checklist=current, record=record, fields=terms_changed, reason=reason
            )
        now = timezone.now()
        for item, fields in changes:
            if "status" in fields:
                _waivers_lapse(actor=actor, item=item, new_status=fields["status"], when=now)
            tracked_update(
                item,
                actor=actor,
                reason=reason,
                fields={**fields, "reviewer": actor, "reviewed_at": now},
            )
        return tracked_update(current, actor=actor, reason=reason, fields={})


def checklist_item_update(
    *,
    actor,
    item: ChecklistItem,
    fields: dict[str, Any],
    reason: str,
    expected_version: int | None = None,
) -> ChecklistItem:
    """Save one item as ``checklist_save`` would, checked against the item's own version."""
    with transaction.atomic():
        current = ChecklistItem.objects.select_for_update().get(pk=item.pk)
        if expected_version is not None and current.version != expected_version:
            raise ConcurrentEditError(current, expected_version)
        checklist_save(
            actor=actor,
            checklist=current.checklist,
            items=[{**fields, "id": current.pk}],
            reason=reason,
        )
    return ChecklistItem.objects.get(pk=item.pk)


def _terms_changes(record: ContractTerms | None, given: dict[str, Any]) -> dict[str, Any]:
    """The terms that ``given`` changes, typed as the record holds them."""
    problems = terms.term_errors(given, billing_choices=frozenset(BillingBasis.values))
    if problems:
        raise ValidationError({f"terms.{name}": message for name, message in problems.items()})
    changed = {}
    for name, value in given.items():
        if value is None or value == "":
            value = "" if name in ("image_format", "billing_basis") else None
        elif name in terms.PERCENT_TERMS:
            value = Decimal(str(value))
        old = (
            getattr(record, name)
            if record is not None
            else ("" if name in ("image_format", "billing_basis") else None)
        )
        if old != value:
            changed[name] = value
    return changed


def _terms_write(
    *, actor, checklist: ClauseChecklist, record: ContractTerms | None, fields, reason: str
) -> ContractTerms:
    try:
        if record is None:
            return tracked_create(
                ContractTerms, actor=actor, reason=reason.strip(), checklist=checklist, **fields
            )
        return tracked_update(record, actor=actor, reason=reason, fields=fields)
    except ValidationError as error:
        # The model's own limits (decimal places, say), named as the form and API name them.
        if not hasattr(error, "error_dict"):
            raise
        raise ValidationError(
            {f"terms.{name}": messages for name, messages in error.message_dict.items()}
        ) from None


def _item_changes(by_id: dict[int, ChecklistItem], rows: list[dict[str, Any]]) -> list[tuple]:
    """The (item, changed fields) pairs of ``rows``, or a ValidationError naming every bad field."""
    errors: dict[str, str] = {}
    changes, seen = [], set()
    for index, row in enumerate(rows):
        where = f"items[{index}]"
        wanted = row.get("id")
        item = by_id.get(wanted) if wanted is not None else None
        if item is None:
            errors[f"{where}.id"] = f"Item {row.get('id')!r} is not part of this checklist."
            continue
        if item.pk in seen:
            errors[f"{where}.id"] = f"Item {item.number} ({item.title}) is listed twice."
            continue
        seen.add(item.pk)
        fields = {
            name: (row[name] or "").strip() if isinstance(row[name], str | None) else row[name]
            for name in ITEM_FIELDS
            if name in row
        }
        for name, value in fields.items():
            if not isinstance(value, str):
                errors[f"{where}.{name}"] = f"Item {item.number}: {name} must be text."
        if "status" in fields and isinstance(fields["status"], str):
            problem = rules.status_error(fields["status"], required=item.required)
            if problem:
                errors[f"{where}.status"] = f"Item {item.number} ({item.title}): {problem}"
        changed = {name: v for name, v in fields.items() if getattr(item, name) != v}
        if changed:
            changes.append((item, changed))
    if errors:
        raise ValidationError(errors)
    return changes


def _waivers_lapse(*, actor, item: ChecklistItem, new_status: str, when) -> None:
    # A waiver accepts one specific risk; a different status is a different
    # risk and has to be judged (and, if need be, waived) again.
    for waiver in item.waivers.all():
        if waiver.lapsed_at is None:
            shown = new_status or "not reviewed"
            tracked_update(
                waiver,
                actor=actor,
                reason=f"Waiver lapsed: item {item.number} status changed to {shown}",
                fields={
                    "lapsed_at": when,
                    "lapse_note": f"Status changed from {item.status} to {shown}",
                },
            )


def red_flag_waive(
    *,
    actor,
    item: ChecklistItem,
    reason: str,
    expires_on: date | None = None,
    evidence=None,
) -> RedFlagWaiver:
    """Record a legal reviewer's waiver of one red flag, bound to its current status.

    It is in force up to and including ``expires_on`` (by default
    ``rules.WAIVER_DAYS`` from today, never a day in the past). ``evidence``, an
    uploaded file, is checked and stored under a name the server makes, with its
    SHA-256; a refusal stores nothing.
    """
    if not actor.has_perm("contracts.add_redflagwaiver"):
        raise PermissionDenied("Only a legal reviewer may waive a red flag.")
    on = today()
    errors = rules.waiver_grant_errors(reason=reason, expires_on=expires_on, today=on)
    if errors:
        raise ValidationError(errors)
    evidence_fields, raw = _evidence_read(evidence) if evidence is not None else ({}, b"")
    saved = None
    try:
        with transaction.atomic():
            current = ChecklistItem.objects.select_for_update().get(pk=item.pk)
            problem = rules.waive_error(item_state(current, list(current.waivers.all())), today=on)
            if problem:
                raise ValidationError({"item": problem})
            if raw:
                # A fresh name per upload: no file is ever overwritten, whatever it was called.
                extension = os.path.splitext(evidence_fields["evidence_name"])[1].lower()[:10]
                wanted = f"contracts/waivers/{current.pk}/{uuid.uuid4().hex}{extension}"
                saved = default_storage.save(wanted, ContentFile(raw))
                evidence_fields["evidence_storage_name"] = saved
            return tracked_create(
                RedFlagWaiver,
                actor=actor,
                reason=(
                    f"Red flag waived on item {current.number} "
                    f"({current.get_status_display()}): {reason.strip()}"
                ),
                item=current,
                waived_status=current.status,
                justification=reason.strip(),
                waived_by=actor,
                waived_at=timezone.now(),
                expires_on=expires_on or rules.default_expiry(on),
                **evidence_fields,
            )
    except BaseException:
        if saved:
            default_storage.delete(saved)
        raise


def _evidence_read(upload) -> tuple[dict[str, Any], bytes]:
    """The evidence's recorded fields and bytes, or a ValidationError on ``evidence``."""
    try:
        read = EVIDENCE_POLICY.read(upload, default_name="evidence")
    except ValidationError as error:
        raise ValidationError({"evidence": error.messages}) from None
    return {
        "evidence_name": read.name,
        "evidence_content_type": read.content_type,
        "evidence_size_bytes": len(read.raw),
        "evidence_sha256": read.sha256,
    }, read.raw


def _who(user) -> str:
    return user.get_full_name() or user.get_username()


def _lock_waiver(waiver: RedFlagWaiver) -> tuple[ChecklistItem, RedFlagWaiver]:
    """Lock in the order a checklist save does (checklist, then waivers and items), so a
    status change that lapses the waiver and this write take turns."""
    item = ChecklistItem.objects.get(pk=waiver.item_id)
    ClauseChecklist.objects.select_for_update().get(pk=item.checklist_id)
    current = RedFlagWaiver.objects.select_for_update().get(pk=waiver.pk)
    return ChecklistItem.objects.get(pk=item.pk), current


def red_flag_waiver_confirm(*, actor, waiver: RedFlagWaiver, note: str) -> RedFlagWaiver:
    """A second legal reviewer confirms the waiver of a high-severity item; then it counts."""
    if not actor.has_perm("contracts.confirm_redflagwaiver"):
        raise PermissionDenied(_("Only a legal reviewer may confirm a waiver."))
    with transaction.atomic():
        item, current = _lock_waiver(waiver)
        problem = rules.confirm_error(
            item_state(item, [current]),
            waiver_state(current),
            actor_id=actor.pk,
            note=note,
            today=today(),
        )
        if problem:
            raise ValidationError({"note": problem})
        return tracked_update(
            current,
            actor=actor,
            reason=f"Waiver of item {item.number} confirmed by a second legal reviewer: "
            + note.strip(),
            fields={
                "confirmed_by": actor,
                "confirmed_at": timezone.now(),
                "confirmation_note": note.strip(),
            },
        )


def red_flag_waiver_withdraw(*, actor, waiver: RedFlagWaiver, reason: str) -> RedFlagWaiver:
    """A legal reviewer withdraws a waiver: the item is judged afresh; the waiver stays on
    record, lapsed, and never revives."""
    if not actor.has_perm("contracts.withdraw_redflagwaiver"):
        raise PermissionDenied(_("Only a legal reviewer may withdraw a waiver."))
    with transaction.atomic():
        item, current = _lock_waiver(waiver)
        problem = rules.withdraw_error(waiver_state(current), reason=reason)
        if problem:
            raise ValidationError({"reason": problem})
        return tracked_update(
            current,
            actor=actor,
            reason=f"Waiver of item {item.number} withdrawn: " + reason.strip(),
            fields={
                "lapsed_at": timezone.now(),
                "lapse_note": f"Withdrawn by {_who(actor)}: {reason.strip()}"[:300],
            },
        )


# --- signed contract documents, clause links and the contract's dates --------------------


def contract_document_upload(*, actor, offer: Offer, kind: str, upload) -> ContractDocument:
    """Store one signed contract document of ``offer`` as the next version of its kind.

    The file is judged by its content (``apps.contracts.documents``): a PDF or a DOCX,
    within the size limit, readable. It is stored under a name the server makes, with
    its SHA-256; a refusal, or a failure after storing, leaves nothing stored.
    """
    if not actor.has_perm("contracts.add_contractdocument"):
        raise PermissionDenied(_("Only legal or procurement may upload a contract document."))
    if kind not in DocumentKind.values:
        raise ValidationError({"kind": _("Choose what kind of contract document this is.")})
    if upload is None:
        raise ValidationError({"file": _("Choose the signed document to upload.")})
    try:
        read = read_contract_file(upload)
    except ValidationError as error:
        raise ValidationError({"file": error.messages}) from None
    saved = None
    try:
        with transaction.atomic():
            # The offer's row is the lock: two uploads of one kind take turns for a number.
            locked = Offer.objects.select_for_update().get(pk=offer.pk)
            latest = (
                ContractDocument.objects.filter(offer=locked, kind=kind).aggregate(n=Max("number"))[
                    "n"
                ]
                or 0
            )
            wanted = f"contracts/documents/{locked.pk}/{uuid.uuid4().hex}{read.extension}"
            saved = default_storage.save(wanted, ContentFile(read.raw))
            label = DocumentKind(kind).label
            return tracked_create(
                ContractDocument,
                actor=actor,
                reason=f"{label} v{latest + 1} uploaded: {read.name}",
                offer=locked,
                kind=kind,
                number=latest + 1,
                name=read.name,
                content_type=read.content_type,
                storage_name=saved,
                sha256=read.sha256,
                size_bytes=len(read.raw),
                page_count=read.page_count,
                uploaded_by=actor,
            )
    except BaseException:
        if saved:
            default_storage.delete(saved)
        raise


def _link_errors(
    item: ChecklistItem, document: ContractDocument | None, page: int | None, quote: str
) -> dict[str, str]:
    errors: dict[str, str] = {}
    if document is None:
        if page is not None:
            errors["page"] = _("Choose the document the page is in.")
        if quote:
            errors["quote"] = _("Choose the document the quote is from.")
        return errors
    if document.offer_id != item.checklist.offer_id:
        errors["document"] = _("This document is not one of this offer's contract documents.")
        return errors
    if page is not None:
        if not document.is_pdf or not document.page_count:
            errors["page"] = _("A Word document has no fixed pages: give no page number.")
        elif not 1 <= page <= document.page_count:
            errors["page"] = _("%(doc)s has pages 1 to %(n)s.") % {
                "doc": str(document),
                "n": document.page_count,
            }
    if len(quote) > QUOTE_MAX_LENGTH:
        errors["quote"] = _("Quote at most %(n)s characters.") % {"n": QUOTE_MAX_LENGTH}
    return errors


def checklist_item_link(
    *,
    actor,
    item: ChecklistItem,
    document: ContractDocument | None,
    page: int | None,
    quote: str,
    reason: str = "",
    expected_version: int | None = None,
) -> ChecklistItem:
    """Point one checklist item at a stored contract document version, a page of it (a
    PDF's, within its page count) and the words quoted; no document clears the link."""
    if not actor.has_perm("contracts.change_checklistitem"):
        raise PermissionDenied(_("Only a legal reviewer may link a clause to its document."))
    quote = (quote or "").strip()
    with transaction.atomic():
        current = (
            ChecklistItem.objects.select_for_update().select_related("checklist").get(pk=item.pk)
        )
        if expected_version is not None and current.version != expected_version:
            raise ConcurrentEditError(current, expected_version)
        errors = _link_errors(current, document, page, quote)
        if errors:
            raise ValidationError(errors)
        fields = {
            "document": document,
            "document_page": page if document is not None else None,
            "document_quote": (quote or None) if document is not None else None,
        }
        if all(getattr(current, name) == value for name, value in fields.items()):
            return current
        shown = (
            f"{document}" + (f", page {page}" if page else "")
            if document is not None
            else "no document"
        )
        why = (reason or "").strip() or f"Clause linked to {shown}"
        return tracked_update(current, actor=actor, reason=why, fields=fields)


def contract_dates_save(
    *,
    actor,
    checklist: ClauseChecklist,
    dates: dict[str, date | None],
    reason: str,
    expected_version: int | None = None,
) -> ContractTerms:
    """Record the contract's dates on its terms: effective, renewal, notice deadline, end.

    Dates left out keep theirs; None clears one. Refused whole when the end comes
    before the effective date or the notice deadline after the renewal.
    """
    if not actor.has_perm("contracts.change_contractterms"):
        raise PermissionDenied(_("Only a legal reviewer may record the contract's dates."))
    unknown = set(dates) - set(terms.DATE_NAMES)
    if unknown:
        raise ValidationError({name: _("Not a contract date.") for name in sorted(unknown)})
    if not (reason or "").strip():
        raise ValidationError({"change_reason": _("Say why the dates are recorded or changed.")})
    with transaction.atomic():
        locked = ClauseChecklist.objects.select_for_update().get(pk=checklist.pk)
        record = ContractTerms.objects.filter(checklist=locked).first()
        if expected_version is not None:
            found = record.version if record is not None else 0
            if found != expected_version:
                raise ConcurrentEditError(record or locked, expected_version)
        merged = {
            name: dates[name] if name in dates else getattr(record, name, None)
            for name in terms.DATE_NAMES
        }
        problems = terms.date_errors(terms.ContractDates(**merged))
        if problems:
            raise ValidationError(problems)
        changed = {
            name: value for name, value in merged.items() if getattr(record, name, None) != value
        }
        if not changed:
            if record is not None:
                return record
            raise ValidationError({"__all__": _("No date was given.")})
        if record is None:
            return tracked_create(
                ContractTerms, actor=actor, reason=reason.strip(), checklist=locked, **changed
            )
        return tracked_update(record, actor=actor, reason=reason.strip(), fields=changed)
