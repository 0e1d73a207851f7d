"""Writes on the findings register: accepting a finding, withdrawing an acceptance, and
recording those that expired (docs/rules/findings.md#accepting-a-finding).

Each is a tracked write: the history names who, when and why. The register is read
again inside the transaction, under the case's row lock, so two owners accepting at
once take turns and the second is judged on what the first recorded.
"""

import uuid
from datetime import date

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.approvals import findings as rules
from apps.approvals.models import FindingAcceptance
from apps.approvals.selectors import case_gates, register_of
from apps.cases.lifecycle import case_lock
from apps.cases.models import ProcurementCase
from apps.core import formats
from apps.core.notifications import Event, notify, people_in_roles
from apps.core.roles import Role, roles_of
from apps.core.services import StateConflict, tracked_create, tracked_update
from apps.core.uploads import EVIDENCE_DOCUMENTS, ReadFile, UploadPolicy


def document_max_bytes() -> int:
    return settings.WAIVER_EVIDENCE_MAX_BYTES


# The document an acceptance carries: the kinds and size a red-flag waiver's evidence takes.
DOCUMENT_POLICY = UploadPolicy(document_max_bytes, types=EVIDENCE_DOCUMENTS)


def actor_roles(actor) -> set[str]:
    """The roles the person holds, as role values (a superuser holds the administrator's)."""
    return roles_of(actor)


def _find(case, *, code: str, offer_id: int | None, key: str) -> rules.Entry | None:
    """The finding, read from its offer's register alone (a finding of the whole case
    stands in every offer's, so any offer of the case will do)."""
    offer = case.offers.filter(pk=offer_id).first() if offer_id is not None else case.offers.first()
    if offer is None:
        return None
    wanted = (code, offer_id, key)
    return next(
        (e for e in register_of(case_gates(case, [offer])) if e.finding.identity == wanted), None
    )


def finding_accept(
    *,
    actor,
    case: ProcurementCase,
    code: str,
    offer_id: int | None,
    key: str = "",
    role: str,
    reason: str,
    expires_on: date | None,
    evidence=None,
) -> FindingAcceptance:
    """Record ``actor``'s acceptance, as ``role``, of one open finding of the case.

    ``evidence``, an uploaded file, is the document the finding's rule asks for; it is
    checked and stored under a name the server makes, with its SHA-256. A refusal, of
    the file or of the acceptance, stores nothing."""
    if not actor.has_perm("approvals.add_findingacceptance"):
        raise PermissionDenied(_("Only an owner of a finding may accept it."))
    today = timezone.localdate()
    document = _document_read(evidence) if evidence is not None else None
    saved = ""
    try:
        with transaction.atomic():
            case = case_lock(case)
            entry = _find(case, code=code, offer_id=offer_id, key=key)
            errors = rules.accept_errors(
                entry,
                actor_id=actor.pk,
                actor_roles=actor_roles(actor),
                role=role,
                reason=reason,
                expires_on=expires_on,
                today=today,
                has_document=document is not None,
            )
            if errors:
                raise ValidationError(errors)
            assert entry is not None and expires_on is not None  # accept_errors says otherwise
            fields = {}
            if document is not None:
                # A fresh name per upload: no file is ever overwritten, whatever it was called.
                wanted = f"approvals/acceptances/{case.pk}/{uuid.uuid4().hex}{document.extension}"
                saved = default_storage.save(wanted, ContentFile(document.raw))
                fields = {
                    "evidence_name": document.name,
                    "evidence_content_type": document.content_type,
                    "evidence_size_bytes": len(document.raw),
                    "evidence_sha256": document.sha256,
                    "evidence_storage_name": saved,
                }
            finding = entry.finding
            acceptance = tracked_create(
                FindingAcceptance,
                actor=actor,
                reason=(
                    f"Finding accepted as {Role(role).label} until {expires_on.isoformat()}: "
                    f"{finding.message} — {reason.strip()}"
                ),
                case=case,
                offer_id=offer_id,
                code=code,
                finding_key=key,
                role=role,
                facts=finding.facts,
                message=finding.message,
                justification=reason.strip(),
                accepted_by=actor,
                accepted_at=timezone.now(),
                expires_on=expires_on,
                **fields,
            )
            _accepted_tell(acceptance, owners=finding.rule.owners, actor=actor)
            return acceptance
    except BaseException:
        if saved:
            default_storage.delete(saved)
        raise


def _document_read(upload) -> ReadFile:
    try:
        return DOCUMENT_POLICY.read(upload, default_name="document")
    except ValidationError as error:
        raise ValidationError({"evidence": error.messages}) from None


def finding_acceptance_withdraw(
    *, actor, acceptance: FindingAcceptance, reason: str
) -> FindingAcceptance:
    """Re-open a finding: its acceptance is withdrawn, by the person who gave it or by
    another holder of the same role."""
    if not actor.has_perm("approvals.change_findingacceptance"):
        raise PermissionDenied(_("Only an owner of a finding may withdraw its acceptance."))
    if not (reason or "").strip():
        raise ValidationError({"reason": _("Say why the acceptance is withdrawn.")})
    with transaction.atomic():
        case_lock(acceptance.case)
        current = FindingAcceptance.objects.select_for_update().get(pk=acceptance.pk)
        if current.withdrawn_at is not None:
            # Someone withdrew it first: a conflict (the API answers 409), nothing written.
            raise StateConflict({"acceptance": [_("This acceptance is already withdrawn.")]})
        if current.accepted_by_id != actor.pk and current.role not in actor_roles(actor):
            raise PermissionDenied(
                _("Only the person who accepted it, or another %(role)s, may withdraw it.")
                % {"role": Role(current.role).label}
            )
        withdrawn = tracked_update(
            current,
            actor=actor,
            reason=f"Acceptance withdrawn; the finding is open again: {reason.strip()}",
            fields={
                "withdrawn_at": timezone.now(),
                "withdrawn_by": actor,
                "withdraw_reason": reason.strip(),
            },
        )
        _opened_tell(
            withdrawn,
            text=gettext_lazy(
                "%(who)s withdrew the acceptance of a finding on %(case)s; it is open "
                "again: %(finding)s"
            ),
            actor=actor,
        )
        return withdrawn


def record_expired_acceptances(*, today: date | None = None) -> int:
    """Mark in the history every acceptance whose expiry date has passed (the register
    already judges them expired; this leaves the moment on record). Returns how many."""
    today = today or timezone.localdate()
    count = 0
    due = FindingAcceptance.objects.filter(
        expires_on__lt=today, expired_at__isnull=True, withdrawn_at__isnull=True
    )
    for pk in due.values_list("pk", flat=True):
        with transaction.atomic():
            current = FindingAcceptance.objects.select_for_update().get(pk=pk)
            if current.expired_at is not None or current.withdrawn_at is not None:
                continue
            tracked_update(
                current,
                actor=None,
                reason=(
                    f"Acceptance expired on {current.expires_on.isoformat()}; "
                    "the finding is open again"
                ),
                fields={"expired_at": timezone.now()},
            )
            _opened_tell(
                current,
                text=gettext_lazy(
                    "The acceptance of a finding on %(case)s ran out on %(until)s; it is open "
                    "again: %(finding)s"
                ),
                actor=None,
            )
            count += 1
    return count


def _who(person) -> str:
    return person.get_full_name() or person.get_username()


def _accepted_tell(acceptance: FindingAcceptance, *, owners, actor) -> None:
    """The case's owner and the finding's owners hear of an acceptance
    (docs/notifications.md#who-is-told)."""
    case = acceptance.case
    notify(
        Event.FINDING_ACCEPTED,
        case=case,
        text=gettext_lazy(
            "%(who)s accepted a finding on %(case)s as %(role)s until %(until)s: %(finding)s"
        ),
        params={
            "who": _who(actor),
            "case": case.name,
            "role": Role(acceptance.role).label,
            "until": formats.date(acceptance.expires_on),
            "finding": acceptance.message,
        },
        path=reverse("approvals:findings", args=[case.pk]),
        recipients=[case.owner, *people_in_roles(owners)],
        actor=actor,
    )


def _opened_tell(acceptance: FindingAcceptance, *, text, actor) -> None:
    """The case's owner and the holders of the role whose acceptance lapsed hear that the
    finding is open again (docs/notifications.md#who-is-told)."""
    case = acceptance.case
    notify(
        Event.FINDING_OPENED,
        case=case,
        text=text,
        params={
            "who": _who(actor) if actor is not None else "",
            "case": case.name,
            "until": formats.date(acceptance.expires_on),
            "finding": acceptance.message,
        },
        path=reverse("approvals:findings", args=[case.pk]),
        recipients=[case.owner, *people_in_roles([acceptance.role])],
        actor=actor,
    )
