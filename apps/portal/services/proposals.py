"""What the vendor sends through its invitation: answers, replies to questions, documents.

The vendor has no account, so every write here names no actor; the reason and the
invitation's use record say who (the invited contact). Each write locks the
invitation first and checks it is still open inside the transaction: a revoke or an
expiry that lands while the vendor is typing wins, and nothing is stored.
"""

import hashlib
import os
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Count, Sum
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext_lazy

from apps.core.notifications import Event, notify, people_holding
from apps.core.services import StateConflict, tracked_create, tracked_update
from apps.core.uploads import UploadPolicy, kinds
from apps.portal.claims import BY_SECTION, SECTION_PERMISSION, claim_label, clause_items
from apps.portal.models import (
    LOCKED,
    ClaimSection,
    DocumentKind,
    Proposal,
    ProposalStatus,
    UseKind,
    VendorDocument,
    VendorInvitation,
)
from apps.portal.services.invitations import use_record

CLAUSE_ANSWER_MAX = 5000
CLAUSE_REFERENCE_MAX = 200
REPLY_MAX = 2000
DESCRIPTION_MAX = 300


def document_max_bytes() -> int:
    return settings.PORTAL_DOCUMENT_MAX_BYTES


# What a vendor sends as papers: office documents, PDFs and scans, up to the setting's size.
DOCUMENT_POLICY = UploadPolicy(
    document_max_bytes, types=kinds(".pdf", ".png", ".jpg", ".jpeg", ".docx", ".xlsx")
)


def reference_field(key: str) -> str:
    """The name a clause answer's reference goes by (in errors and forms)."""
    return f"{key}.reference"


@dataclass(frozen=True)
class Answer:
    """One answer of a submit, read and checked: its text as kept, and its reference."""

    claim: str
    value: str
    reference: str = ""


def _who(invitation: VendorInvitation) -> str:
    return f"the vendor ({invitation.contact_name})"


def _english(label: Any) -> str:
    # History is written in one language, whatever the vendor reads the page in.
    with translation.override("en"):
        return str(label)


def _english_claim(proposal: Proposal) -> str:
    with translation.override("en"):
        return claim_label(proposal)


def _invitation_lock(invitation: VendorInvitation) -> VendorInvitation:
    """The invitation, locked; refused when it closed since the page was opened."""
    current = VendorInvitation.objects.select_for_update().get(pk=invitation.pk)
    if not current.is_open:
        raise StateConflict(_("This invitation has closed: nothing was saved."))
    return current


def _clause_read(key: str, text: str, reference: str, errors: dict) -> Answer | None:
    if not text:
        if reference:
            errors[reference_field(key)] = [_("Give the answer this reference is for.")]
        return None
    if len(text) > CLAUSE_ANSWER_MAX:
        errors[key] = [_("An answer is at most %(max)d characters.") % {"max": CLAUSE_ANSWER_MAX}]
    if len(reference) > CLAUSE_REFERENCE_MAX:
        errors[reference_field(key)] = [
            _("A clause reference is at most %(max)d characters.") % {"max": CLAUSE_REFERENCE_MAX}
        ]
    return Answer(key, text, reference)


def _answers_read(
    invitation: VendorInvitation, section: str, answers: dict, references: dict
) -> list[Answer]:
    """The non-blank answers, each checked as its record would; one error refuses them all."""
    errors: dict[str, list[str]] = {}
    read: list[Answer] = []
    if section == ClaimSection.CLAUSE:
        asked = {item.key for item in clause_items(invitation.offer)}
        for key in sorted(set(answers) | set(references)):
            if key not in asked:
                errors[key] = [_("This is not asked here.")]
                continue
            text = (answers.get(key) or "").strip()
            answer = _clause_read(key, text, (references.get(key) or "").strip(), errors)
            if answer is not None:
                read.append(answer)
    else:
        claims = {claim.name: claim for claim in BY_SECTION[section]}
        for name, raw in answers.items():
            claim = claims.get(name)
            if claim is None:
                errors[name] = [_("This is not asked here.")]
                continue
            text = (raw or "").strip()
            if not text:
                continue
            try:
                # Kept in the record's unit (a prepayment typed in percent, as a share).
                text = claim.stored_text(text)
                claim.parse(text)
            except ValidationError as error:
                errors[name] = error.messages
                continue
            read.append(Answer(name, text))
    if errors:
        raise ValidationError(errors)
    return read


def _section_check(section: str) -> None:
    if section not in ClaimSection.values:
        raise ValidationError({"section": _("There is no such section.")})


def proposals_submit(
    *,
    invitation: VendorInvitation,
    section: str,
    answers: dict[str, str],
    references: dict[str, str] | None = None,
) -> list[Proposal]:
    """Propose the vendor's answers of one section; the proposals made or changed.

    A blank answer is no answer (nothing is erased); an answer equal to the vendor's
    current proposal changes nothing. Any refused answer refuses the whole submit.
    """
    _section_check(section)
    read = _answers_read(invitation, section, answers, references or {})
    reason = f"Proposed by {_who(invitation)}"
    with transaction.atomic():
        current = _invitation_lock(invitation)
        existing = {
            p.claim: p
            for p in Proposal.objects.select_for_update().filter(
                invitation=current, section=section
            )
        }
        changes: list[tuple[Answer, Proposal | None]] = []
        errors: dict[str, list[str]] = {}
        for answer in read:
            proposal = existing.get(answer.claim)
            if proposal is None:
                changes.append((answer, None))
                continue
            if (proposal.value, proposal.clause_reference) == (answer.value, answer.reference):
                continue
            if proposal.status in LOCKED:
                errors[answer.claim] = [
                    _("This answer was accepted and can no longer be changed here.")
                ]
            elif proposal.status == ProposalStatus.QUESTIONED:
                errors[answer.claim] = [
                    _("This answer was questioned: reply to the question to change it.")
                ]
            else:
                changes.append((answer, proposal))
        if errors:
            raise ValidationError(errors)
        saved = [_proposal_write(current, section, answer, p, reason) for answer, p in changes]
        if saved:
            use_record(
                invitation=current,
                kind=UseKind.PROPOSED,
                detail=f"{_english(ClaimSection(section).label)}: {len(saved)} "
                f"answer{'s' if len(saved) != 1 else ''}",
            )
            _reviewers_tell(current, section, count=len(saved))
    return saved


def _reviewers_tell(invitation: VendorInvitation, section: str, *, count: int) -> None:
    """Once the answers are stored, the reviewers of their section hear of them
    (docs/notifications.md#who-is-told)."""
    offer = invitation.offer
    notify(
        Event.VENDOR_ANSWERS_SUBMITTED,
        case=offer.case,
        text=ngettext_lazy(
            "%(vendor)s sent %(count)s answer to review (%(section)s) on %(case)s.",
            "%(vendor)s sent %(count)s answers to review (%(section)s) on %(case)s.",
            "count",
        ),
        params={
            "vendor": offer.vendor.name,
            "count": count,
            "section": ClaimSection(section).label,
            "case": offer.case.name,
        },
        path=reverse("portal:answers", args=[offer.pk]),
        recipients=people_holding(SECTION_PERMISSION[section]),
    )


def _proposal_write(
    invitation: VendorInvitation,
    section: str,
    answer: Answer,
    proposal: Proposal | None,
    reason: str,
) -> Proposal:
    if proposal is None:
        return tracked_create(
            Proposal,
            actor=None,
            reason=reason,
            invitation=invitation,
            section=section,
            claim=answer.claim,
            value=answer.value,
            clause_reference=answer.reference,
        )
    if proposal.status == ProposalStatus.REJECTED:
        # Proposed again: back in the reviewer's queue. The reason it was rejected stays
        # on the row and in its history.
        reason = f"Proposed again by {_who(invitation)}"
    return tracked_update(
        proposal,
        actor=None,
        reason=reason,
        fields={
            "value": answer.value,
            "clause_reference": answer.reference,
            "status": ProposalStatus.PENDING,
        },
    )


def proposal_reply(
    *, invitation: VendorInvitation, proposal: Proposal, reply: str, value: str | None = None
) -> Proposal:
    """The vendor answers a reviewer's question, with a new answer if it gives one."""
    reply = (reply or "").strip()
    value = (value or "").strip()
    errors: dict[str, list[str]] = {}
    if not reply:
        errors["reply"] = [_("Write your reply to the question.")]
    elif len(reply) > REPLY_MAX:
        errors["reply"] = [_("A reply is at most %(max)d characters.") % {"max": REPLY_MAX}]
    if value:
        try:
            found = _answers_read(invitation, proposal.section, {proposal.claim: value}, {})
        except ValidationError as error:
            errors["value"] = error.messages
        else:
            value = found[0].value if found else ""
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        current = _invitation_lock(invitation)
        locked = Proposal.objects.select_for_update().get(pk=proposal.pk, invitation=current)
        if locked.status != ProposalStatus.QUESTIONED:
            raise StateConflict(_("This answer is no longer waiting for a reply."))
        fields: dict[str, Any] = {"vendor_reply": reply, "status": ProposalStatus.PENDING}
        if value:
            fields["value"] = value
        replied = tracked_update(
            locked,
            actor=None,
            reason=f"Question answered by {_who(current)}",
            fields=fields,
        )
        use_record(
            invitation=current,
            kind=UseKind.REPLIED,
            detail=f"{_english(ClaimSection(locked.section).label)}: {_english_claim(locked)}"
            + (" (new answer)" if value else ""),
        )
        _reviewers_tell(current, locked.section, count=1)
    return replied


def _document_read(upload) -> tuple[dict[str, Any], bytes]:
    """The document's recorded fields and bytes, or a ValidationError on ``file``."""
    limit = document_max_bytes()
    too_large = _("The file is larger than %(limit)s.") % {"limit": filesizeformat(limit)}
    # The size is checked before a byte is read: a file over the limit is never loaded.
    if upload.size is None or upload.size > limit:
        raise ValidationError({"file": too_large})
    if upload.size == 0:
        raise ValidationError({"file": _("The file is empty.")})
    try:
        name, extension, kind = DOCUMENT_POLICY.file_kind(upload)
    except ValidationError as error:
        raise ValidationError({"file": error.messages}) from None
    raw = upload.read(limit + 1)
    if len(raw) > limit:
        raise ValidationError({"file": too_large})
    if not raw:
        raise ValidationError({"file": _("The file is empty.")})
    # Shown and offered back as the file's name: printable, and never a path.
    name = "".join(ch for ch in name if ch.isprintable()).strip() or f"document{extension}"
    return {
        "name": name[:200],
        "content_type": kind.content_type,
        "size_bytes": len(raw),
        "sha256": hashlib.sha256(raw).hexdigest(),
    }, raw


def _documents_room_check(invitation: VendorInvitation, *, size: int) -> None:
    """An invitation takes at most ``PORTAL_DOCUMENTS_PER_INVITATION`` documents and
    ``PORTAL_DOCUMENTS_TOTAL_MAX_BYTES`` in all; the one past either is refused whole."""
    held = VendorDocument.objects.filter(invitation=invitation).aggregate(
        count=Count("pk"), size=Sum("size_bytes")
    )
    most = settings.PORTAL_DOCUMENTS_PER_INVITATION
    total = settings.PORTAL_DOCUMENTS_TOTAL_MAX_BYTES
    if held["count"] >= most:
        raise ValidationError(
            {
                "file": _(
                    "This invitation already holds %(count)d documents, the most it takes. "
                    "Ask the buyer for a new invitation to send more."
                )
                % {"count": most}
            }
        )
    if (held["size"] or 0) + size > total:
        raise ValidationError(
            {
                "file": _(
                    "This file would bring the documents of this invitation over "
                    "%(total)s in all. Ask the buyer for a new invitation to send more."
                )
                % {"total": filesizeformat(total)}
            }
        )


def document_upload(
    *, invitation: VendorInvitation, kind: str, description: str, upload
) -> VendorDocument:
    """Store a vendor's document under a new name with its SHA-256; a refusal stores nothing."""
    description = (description or "").strip()
    errors: dict[str, list[str]] = {}
    if kind not in DocumentKind.values:
        errors["kind"] = [_("Choose what kind of document this is.")]
    if len(description) > DESCRIPTION_MAX:
        errors["description"] = [
            _("A description is at most %(max)d characters.") % {"max": DESCRIPTION_MAX}
        ]
    if errors:
        raise ValidationError(errors)
    fields, raw = _document_read(upload)
    extension = os.path.splitext(fields["name"])[1].lower()[:10]
    saved = None
    try:
        with transaction.atomic():
            current = _invitation_lock(invitation)
            _documents_room_check(current, size=len(raw))
            # A fresh name per upload: no file is ever overwritten, whatever it was called.
            wanted = f"portal/{current.offer_id}/{current.pk}/{uuid.uuid4().hex}{extension}"
            saved = default_storage.save(wanted, ContentFile(raw))
            document = tracked_create(
                VendorDocument,
                actor=None,
                reason=f"Uploaded by {_who(current)}",
                invitation=current,
                kind=kind,
                description=description,
                storage_name=saved,
                **fields,
            )
            use_record(
                invitation=current,
                kind=UseKind.UPLOADED,
                detail=f"{_english(DocumentKind(kind).label)}: {fields['name']}",
            )
    except BaseException:
        if saved:
            default_storage.delete(saved)
        raise
    return document
