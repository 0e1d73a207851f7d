"""A vendor's recurring reassessment: when it falls due, starting it, completing it and
its lapse (docs/rules/reassessment.md).

A vendor is in use while one of its offers is chosen: the case's current approval approved
it and has not lapsed, and the case is approved or accepted. One review cycle (the vendor's
``review_cycle``) after the offer's acceptance was signed off (else after its approval), and
then one cycle after each reassessment completed, the next one falls due. On that day the
schedule starts it: the portal is sent again to the contact who answered it last, a harness
token is issued for the acceptance run against the pinned baseline, and the vendor's owner
and the case's owner are told. It completes once the vendor has answered the same portal
sections through an invitation sent since it started and a passing verification of the
offer arrived since; not completed ``GRACE_DAYS`` after it started, it has lapsed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, datetime

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.acceptance.models import AcceptanceSignOff
from apps.approvals.models import Approval
from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_ids_for
from apps.casework.models import Reassessment, ReassessmentState
from apps.core.notifications import Event, notify
from apps.core.services import StateConflict, tracked_create, tracked_update
from apps.core.webhooks import absolute_url
from apps.evidence import harness_command
from apps.evidence.baselines import baseline_in_force
from apps.evidence.models import SpecVerification, Verdict
from apps.evidence.services import harness_token_create
from apps.offers.models import Offer
from apps.portal.models import ClaimSection, Proposal, VendorInvitation
from apps.portal.services.invitations import EmailNotSent, invitation_create
from apps.vendors import reassessment as rules
from apps.vendors.models import Vendor, VendorTier

logger = logging.getLogger(__name__)

Status = ProcurementCase.Status
# A vendor is in use through an offer chosen on a case approved or accepted.
ACTIVE_CASE_STATUSES = (Status.APPROVED, Status.ACCEPTED)
# A lapsed reassessment stands on every case with an offer from the vendor that is not
# closed: one being prepared or weighed (the vendor may be chosen again) or in use. A
# rejected case is closed.
CLOSED_CASE_STATUSES = (Status.REJECTED,)
FINDING_CASE_STATUSES = tuple(s for s in Status.values if s not in CLOSED_CASE_STATUSES)


@dataclass(frozen=True)
class Due:
    """The next reassessment of one vendor in use: of which offer, and when."""

    vendor: Vendor
    offer: Offer
    due_on: date


# --- reading -------------------------------------------------------------------------------


def active_offers() -> QuerySet[Offer]:
    """The chosen offers of the cases in use, each with ``anchor``: when its acceptance was
    last signed off (a voided sign-off aside), else when it was approved."""
    approved = Approval.objects.filter(
        offer=OuterRef("pk"),
        decision=Approval.Decision.APPROVED,
        superseded_at__isnull=True,
        lapsed_at__isnull=True,
    )
    signed = AcceptanceSignOff.objects.filter(plan__offer=OuterRef("pk"), voided_at__isnull=True)
    return (
        Offer.objects.filter(case__status__in=ACTIVE_CASE_STATUSES)
        .filter(Exists(approved))
        .annotate(
            anchor=Coalesce(
                Subquery(signed.order_by("-signed_at").values("signed_at")[:1]),
                Subquery(approved.order_by("-decided_at").values("decided_at")[:1]),
            )
        )
        .select_related("vendor__owner", "case__owner")
        .order_by("vendor_id", "anchor", "pk")
    )


def _day(moment: datetime) -> date:
    return timezone.localdate(moment)


def schedule() -> list[Due]:
    """The next reassessment of each vendor in use that has none open: one review cycle
    after its last completed one, else after its longest-standing offer was accepted."""
    offers: dict[int, list[Offer]] = {}
    for offer in active_offers():
        offers.setdefault(offer.vendor_id, []).append(offer)
    open_vendors = set(
        Reassessment.objects.filter(completed_at__isnull=True).values_list("vendor_id", flat=True)
    )
    last_done: dict[int, Reassessment] = {}
    for done in Reassessment.objects.filter(
        vendor_id__in=list(offers), completed_at__isnull=False
    ).order_by("vendor_id", "completed_at"):
        last_done[done.vendor_id] = done
    found = []
    for vendor_id, chosen in offers.items():
        if vendor_id in open_vendors:
            continue
        vendor = chosen[0].vendor
        last = last_done.get(vendor_id)
        if last is not None and last.completed_at is not None:
            anchor = _day(last.completed_at)
            offer = next((o for o in chosen if o.pk == last.offer_id), chosen[0])
        else:
            offer = chosen[0]
            anchor = _day(offer.anchor)  # type: ignore[attr-defined]
        found.append(Due(vendor, offer, rules.next_due(anchor, vendor.review_cycle)))
    return sorted(found, key=lambda due: (due.due_on, due.vendor.name))


def state_of(reassessment: Reassessment, today: date | None = None) -> str:
    """Where it stands today: lapsed from the day its grace ran out, whether or not the
    schedule has recorded it."""
    if reassessment.completed_at is not None:
        return ReassessmentState.COMPLETED
    lapsed = rules.has_lapsed(
        started_on=_day(reassessment.started_at),
        completed=False,
        today=today or timezone.localdate(),
    )
    return ReassessmentState.LAPSED if lapsed else ReassessmentState.STARTED


def open_of_vendors(vendor_ids) -> dict[int, Reassessment]:
    """The open reassessment of each of ``vendor_ids`` that has one (of every vendor where
    None: there is at most one per vendor in use); one query."""
    found = Reassessment.objects.filter(completed_at__isnull=True)
    if vendor_ids is not None:
        found = found.filter(vendor_id__in=vendor_ids)
    return {r.vendor_id: r for r in found}


def reassessment_list_for(actor) -> QuerySet[Reassessment]:
    """The reassessments of the cases ``actor`` may read."""
    return Reassessment.objects.filter(case_id__in=case_ids_for(actor)).select_related(
        "vendor", "offer", "case", "invitation", "harness_token", "baseline"
    )


# --- starting -----------------------------------------------------------------------------


def _sections(offer: Offer) -> list[str]:
    """The portal sections the vendor answered for ``offer`` before; every one where it
    answered none."""
    answered = set(
        Proposal.objects.filter(invitation__offer=offer).values_list("section", flat=True)
    )
    return sorted(answered) or list(ClaimSection.values)


def reassessment_start(*, due: Due, actor=None) -> Reassessment:
    """Start ``due`` now: invite the vendor's last contact again, issue the harness token
    for the acceptance run, and tell the vendor's owner and the case's owner.

    ``actor`` starts it early by hand; the schedule starts it with none, in the name of the
    vendor's owner (else the case's owner) as the invitation and the token need a person.
    The vendor's row is locked first and the open reassessment looked for again, so two
    schedulers at once start it once; one already open is a conflict. An e-mail that could
    not be sent keeps nothing.
    """
    vendor, offer = due.vendor, due.offer
    case = offer.case
    on_behalf = actor or vendor.owner or case.owner
    with transaction.atomic():
        Vendor.objects.select_for_update().filter(pk=vendor.pk).first()
        if Reassessment.objects.filter(vendor=vendor, completed_at__isnull=True).exists():
            raise StateConflict({"vendor": _("A reassessment of this vendor is already open.")})
        if Reassessment.objects.filter(vendor=vendor, due_on=due.due_on).exists():
            raise StateConflict({"vendor": _("The reassessment due on this day was already made.")})
        last = VendorInvitation.objects.filter(offer=offer).order_by("-created_at", "-pk").first()
        baseline = baseline_in_force(case_id=case.pk, offer_id=offer.pk)
        invitation = None
        if last is not None:
            invitation, _secret = invitation_create(
                actor=on_behalf,
                offer=offer,
                contact_name=last.contact_name,
                email=last.email,
                language=last.language,
            )
        runner = _runner(offer) or on_behalf
        issued = harness_token_create(
            actor=runner,
            case=case,
            offer=offer,
            ttl_hours=rules.GRACE_DAYS * 24,
            label=f"Reassessment due {due.due_on.isoformat()}",
        )
        _send_run_command(runner, offer, issued, baseline)
        how = "started by hand" if actor is not None else "due, started by the schedule"
        reassessment = tracked_create(
            Reassessment,
            actor=actor,
            reason=f"Reassessment {how} (review cycle {vendor.review_cycle} months)",
            vendor=vendor,
            offer=offer,
            case=case,
            due_on=due.due_on,
            tier=vendor.tier,
            cycle_months=vendor.review_cycle,
            started_at=timezone.now(),
            started_by=actor,
            invitation=invitation,
            sections=_sections(offer),
            harness_token=issued.record,
            baseline=baseline,
        )
        _tell_started(reassessment, actor=actor)
    return reassessment


def reassessment_start_early(*, actor, vendor: Vendor) -> Reassessment:
    """Procurement starts the vendor's next reassessment before it falls due."""
    if not actor.has_perm("casework.start_reassessment"):
        raise PermissionDenied(_("Only procurement starts a reassessment by hand."))
    due = next((d for d in schedule() if d.vendor.pk == vendor.pk), None)
    if due is None:
        if Reassessment.objects.filter(vendor=vendor, completed_at__isnull=True).exists():
            raise StateConflict({"vendor": _("A reassessment of this vendor is already open.")})
        raise ValidationError({"vendor": _("This vendor has no chosen offer in use to reassess.")})
    try:
        return reassessment_start(due=due, actor=actor)
    except IntegrityError as error:
        raise StateConflict(
            {"vendor": _("A reassessment of this vendor is already open.")}
        ) from error


def _runner(offer: Offer):
    """Who runs the acceptance again: the tech lead who approved the offer, while active."""
    approval = (
        Approval.objects.filter(
            offer=offer, decision=Approval.Decision.APPROVED, superseded_at__isnull=True
        )
        .select_related("decided_by")
        .order_by("-decided_at", "-pk")
        .first()
    )
    person = approval.decided_by if approval is not None else None
    return person if person is not None and person.is_active and person.email else None


def _send_run_command(runner, offer: Offer, issued, baseline) -> None:
    """The acceptance run's command, with its token, to the person who runs it: the secret
    is shown nowhere else, as the token page shows it once to whoever issued it."""
    run = harness_command.run_settings(
        case=offer.case,
        offer=offer,
        upload_url=absolute_url(reverse("evidence-upload")),
        token=issued.token,
        nonce=issued.record.nonce,
    )
    with translation.override(settings.LANGUAGE_CODE):
        subject = _("Run the acceptance of %(vendor)s again (%(case)s)") % {
            "vendor": offer.vendor.name,
            "case": offer.case.name,
        }
        body = render_to_string(
            "casework/email/reassessment_run.txt",
            {
                "runner": runner,
                "vendor": offer.vendor.name,
                "case": offer.case.name,
                "command": harness_command.run_command(run),
                "zipapp_url": absolute_url(reverse("evidence:zipapp")),
                "tokens_url": absolute_url(reverse("evidence:tokens", args=[offer.case_id])),
                "baseline": baseline,
                "expires_at": issued.record.expires_at,
            },
        )
    if not runner.email:
        return  # nobody to send it to: the token page issues another
    try:
        send_mail(
            subject=subject[:200], message=body, from_email=None, recipient_list=[runner.email]
        )
    except Exception as error:
        logger.warning("Could not e-mail the acceptance run of offer %s", offer.pk, exc_info=True)
        raise EmailNotSent(str(error)) from error


STARTED_TEXT = gettext_lazy(
    "The reassessment of %(vendor)s (%(tier)s tier, every %(months)s months) started on "
    "%(case)s: the vendor is asked to answer the portal again, and the acceptance is to be "
    "run again against the pinned baseline, by %(until)s."
)
STARTED_NO_CONTACT_TEXT = gettext_lazy(
    "The reassessment of %(vendor)s (%(tier)s tier, every %(months)s months) started on "
    "%(case)s, but the vendor was never invited to the portal: invite its contact, and run "
    "the acceptance again against the pinned baseline, by %(until)s."
)
LAPSED_TEXT = gettext_lazy(
    "The reassessment of %(vendor)s was not completed by %(until)s: it stands as a finding "
    "on %(case)s until it is completed or accepted."
)


def _owners(reassessment: Reassessment, case) -> list:
    return [
        person
        for person in (reassessment.vendor.owner, case.owner)
        if person is not None and person.email
    ]


def _tell_started(reassessment: Reassessment, *, actor) -> None:
    vendor, case = reassessment.vendor, reassessment.case
    notify(
        Event.REASSESSMENT_STARTED,
        case=case,
        text=STARTED_TEXT if reassessment.invitation_id else STARTED_NO_CONTACT_TEXT,
        params={
            "vendor": vendor.name,
            "tier": VendorTier(reassessment.tier).label,
            "months": reassessment.cycle_months,
            "case": case.name,
            "until": rules.lapses_on(_day(reassessment.started_at)).isoformat(),
        },
        path=reverse("cases:reassessments"),
        recipients=_owners(reassessment, case),
        actor=actor,
    )


# --- completing and lapsing ------------------------------------------------------------------


def _completion(reassessment: Reassessment) -> SpecVerification | None:
    """The passing verification that completes ``reassessment``, once the vendor has also
    answered each of its portal sections through an invitation sent since it started."""
    answered = set(
        Proposal.objects.filter(
            invitation__offer_id=reassessment.offer_id,
            invitation__created_at__gte=reassessment.started_at,
        ).values_list("section", flat=True)
    )
    if not set(reassessment.sections) <= answered or not answered:
        return None
    return (
        SpecVerification.objects.filter(
            offer_id=reassessment.offer_id,
            verdict=Verdict.VERIFIED,
            created_at__gte=reassessment.started_at,
        )
        .order_by("-created_at", "-pk")
        .first()
    )


def reassessment_settle(reassessment: Reassessment) -> Reassessment | None:
    """Complete ``reassessment`` if the vendor answered and a passing run arrived since it
    started; the completed record, or None. Locked and read again, so it completes once."""
    with transaction.atomic():
        current = Reassessment.objects.select_for_update().filter(pk=reassessment.pk).first()
        if current is None or current.completed_at is not None:
            return None
        verification = _completion(current)
        if verification is None:
            return None
        return tracked_update(
            current,
            actor=None,
            reason="Reassessment completed: the portal answered again and the acceptance passed",
            fields={"completed_at": timezone.now(), "verification": verification},
        )


def settle_offer(offer_id: int) -> None:
    """After a verification of ``offer_id`` committed: complete its vendor's open one."""
    for reassessment in Reassessment.objects.filter(offer_id=offer_id, completed_at__isnull=True):
        reassessment_settle(reassessment)


def on_verification_recorded(sender, offer_id: int, **kwargs) -> None:
    transaction.on_commit(lambda: settle_offer(offer_id))


def finding_cases(vendor_id: int) -> QuerySet[ProcurementCase]:
    """The open cases with an offer from the vendor: those its lapse stands on."""
    return (
        ProcurementCase.objects.filter(
            status__in=FINDING_CASE_STATUSES, offers__vendor_id=vendor_id
        )
        .select_related("owner")
        .distinct()
        .order_by("pk")
    )


def _record_lapse(reassessment: Reassessment, today: date) -> Reassessment | None:
    with transaction.atomic():
        current = (
            Reassessment.objects.select_for_update(of=("self",))
            .select_related("vendor__owner")
            .filter(pk=reassessment.pk, completed_at__isnull=True, lapsed_at__isnull=True)
            .first()
        )
        if current is None or state_of(current, today) != ReassessmentState.LAPSED:
            return None
        current = tracked_update(
            current,
            actor=None,
            reason=f"Reassessment lapsed: not completed within {rules.GRACE_DAYS} days",
            fields={"lapsed_at": timezone.now()},
        )
        until = rules.lapses_on(_day(current.started_at)).isoformat()
        for case in finding_cases(current.vendor_id):
            notify(
                Event.REASSESSMENT_LAPSED,
                case=case,
                text=LAPSED_TEXT,
                params={"vendor": current.vendor.name, "until": until, "case": case.name},
                path=reverse("approvals:findings", args=[case.pk]),
                recipients=_owners(current, case),
            )
    return current


@dataclass(frozen=True)
class RunResult:
    completed: list[Reassessment]
    started: list[Reassessment]
    lapsed: list[Reassessment]


def reassessments_run(today: date | None = None) -> RunResult:
    """The schedule's daily work, safe to run again the same day: complete the open
    reassessments whose vendor answered and passed, start those due by today, and record
    those that lapsed."""
    today = today or timezone.localdate()
    open_ones = list(Reassessment.objects.filter(completed_at__isnull=True))
    completed = [done for r in open_ones if (done := reassessment_settle(r)) is not None]
    started = []
    for due in schedule():
        if due.due_on > today:
            continue
        try:
            started.append(reassessment_start(due=due))
        except (StateConflict, IntegrityError):
            continue  # another run started it meanwhile
        except EmailNotSent:
            logger.warning("Reassessment of vendor %s not started: e-mail failed", due.vendor.pk)
    lapsed = [
        found
        for r in Reassessment.objects.filter(completed_at__isnull=True, lapsed_at__isnull=True)
        if (found := _record_lapse(r, today)) is not None
    ]
    return RunResult(completed=completed, started=started, lapsed=lapsed)
