"""Reads of clause checklists: red flags per offer and per case, and the comparison.

``open_red_flags(checklist)`` and ``case_red_flags(case)`` are what the
approval gates call (docs/rules/approvals.md: no open red flag in the clause checklist).
"""

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.contracts import rules, terms
from apps.contracts.models import (
    ChecklistItem,
    ChecklistTemplate,
    ClauseChecklist,
    ContractDocument,
    ContractTerms,
    DocumentKind,
    RedFlagWaiver,
    TemplateItem,
)
from apps.core import formats
from apps.core.downloads import StoredFile
from apps.core.reads import shared_read
from apps.offers.models import BillingBasis, Offer
from apps.offers.selectors import offer_get_for, offer_list_for, offers_of_case


def today() -> date:
    """The day waivers are judged on: the organisation's local date."""
    return timezone.localdate()


def waiver_expires_on(waiver: RedFlagWaiver) -> date:
    """The last day ``waiver`` is in force; one recorded before expiry dates gets the default."""
    if waiver.expires_on is not None:
        return waiver.expires_on
    return rules.default_expiry(timezone.localdate(waiver.waived_at))


def waiver_state(waiver: RedFlagWaiver) -> rules.WaiverState:
    return rules.WaiverState(
        waiver.waived_status,
        lapsed=waiver.lapsed_at is not None,
        expires_on=waiver_expires_on(waiver),
        confirmed=waiver.confirmed_at is not None,
        waived_by=waiver.waived_by_id,
        waiver_id=waiver.pk,
    )


def item_state(item: ChecklistItem, waivers: list[RedFlagWaiver]) -> rules.ItemState:
    return rules.ItemState(
        number=item.number,
        key=item.key,
        title=item.title,
        status=item.status,
        required=item.required,
        waivers=tuple(waiver_state(w) for w in waivers),
        item_id=item.pk,
        high_severity=bool(item.high_severity),
    )


def _items_prefetch() -> Prefetch:
    return Prefetch(
        "items",
        queryset=ChecklistItem.objects.select_related("reviewer", "document")
        .prefetch_related(
            Prefetch(
                "waivers",
                queryset=RedFlagWaiver.objects.select_related("waived_by", "confirmed_by"),
            )
        )
        .order_by("number"),
    )


def checklist_states(checklist: ClauseChecklist) -> list[rules.ItemState]:
    return [item_state(item, list(item.waivers.all())) for item in checklist.items.all()]


def open_red_flags(checklist: ClauseChecklist) -> list[rules.RedFlag]:
    """Items that block approval: unwaived red flags, then items never reviewed.

    ``kind`` tells them apart; an empty list means the checklist is clear.
    Uses prefetched items and waivers when present.
    """
    return rules.blocking_items(checklist_states(checklist), today=today())


@dataclass
class WaiverLine:
    """One waiver as the pages and the packet show it, judged today."""

    waiver: RedFlagWaiver
    expires_on: date
    expired: bool  # past its expiry date
    lapsed: bool  # status changed, or withdrawn
    needs_confirmation: bool  # high-severity item: a second legal reviewer must confirm
    counts: bool  # clears the item today

    @property
    def awaits_confirmation(self) -> bool:
        return (
            self.needs_confirmation
            and self.waiver.confirmed_at is None
            and not self.lapsed
            and not self.expired
        )


@dataclass
class ItemRow:
    """One item as the pages show it: the record, its verdict and its waivers.

    ``current_waiver`` clears the item today; ``pending_waiver`` waits for its
    second legal confirmation; ``flag`` says why the item blocks, where it does.
    """

    item: ChecklistItem
    verdict: rules.Verdict
    waivers: list[RedFlagWaiver]
    current_waiver: RedFlagWaiver | None = None
    pending_waiver: RedFlagWaiver | None = None
    flag: rules.RedFlag | None = None
    lines: list[WaiverLine] = field(default_factory=list)

    @property
    def flag_label(self) -> str:
        return (
            rules.flag_label(self.flag) if self.flag else f"{self.item.number}. {self.item.title}"
        )

    @property
    def waiver_problem(self) -> str | None:
        return rules.waiver_problem(self.flag) if self.flag else None

    @property
    def current_line(self) -> WaiverLine | None:
        return next((line for line in self.lines if line.waiver is self.current_waiver), None)


def item_row(
    item: ChecklistItem, waivers: list[RedFlagWaiver], *, on: date
) -> tuple[ItemRow, rules.ItemState]:
    state = item_state(item, waivers)
    pairs = list(zip(waivers, state.waivers, strict=True))
    effective = rules.effective_waiver(state, today=on)
    pending = rules.pending_waiver(state, today=on)
    flag = next(iter(rules.blocking_items([state], today=on)), None)
    lines = [
        WaiverLine(
            waiver=waiver,
            expires_on=ws.expires_on or waiver_expires_on(waiver),
            expired=rules.waiver_expired(ws.expires_on, on),
            lapsed=ws.lapsed,
            needs_confirmation=state.high_severity,
            counts=rules.waiver_counts(state, ws, today=on),
        )
        for waiver, ws in pairs
    ]
    row = ItemRow(
        item=item,
        verdict=rules.item_verdict(state, today=on),
        waivers=waivers,
        current_waiver=next((w for w, ws in pairs if ws is effective), None),
        pending_waiver=next((w for w, ws in pairs if ws is pending), None),
        flag=flag,
        lines=lines,
    )
    return row, state


@dataclass
class OfferRedFlags:
    """One offer's checklist state; ``blocks_approval`` when absent or not clear."""

    offer: Offer
    checklist: ClauseChecklist | None
    summary: rules.ChecklistSummary | None
    rows: list[ItemRow] = field(default_factory=list)

    @property
    def open(self) -> list[rules.RedFlag]:
        if self.summary is None:
            return []
        return [*self.summary.open_red_flags, *self.summary.not_reviewed]

    @property
    def red_rows(self) -> list[ItemRow]:
        red = (rules.Verdict.RED_FLAG, rules.Verdict.WAIVED)
        return [row for row in self.rows if row.verdict in red]

    @property
    def open_labels(self) -> list[str]:
        """Each open red flag as the gate names it."""
        if self.summary is None:
            return []
        return [rules.flag_label(flag) for flag in self.summary.open_red_flags]

    @property
    def waived_rows(self) -> list[ItemRow]:
        return [row for row in self.rows if row.current_waiver is not None]

    @property
    def blocks_approval(self) -> bool:
        return self.summary is None or not self.summary.clear


def offer_red_flags(
    offer: Offer, checklist: ClauseChecklist | None, *, on: date | None = None
) -> OfferRedFlags:
    if checklist is None:
        return OfferRedFlags(offer=offer, checklist=None, summary=None)
    on = on or today()
    rows, states = [], []
    for item in checklist.items.all():
        row, state = item_row(item, list(item.waivers.all()), on=on)
        rows.append(row)
        states.append(state)
    return OfferRedFlags(
        offer=offer, checklist=checklist, summary=rules.summarise(states, today=on), rows=rows
    )


@shared_read
def case_red_flags(case) -> list[OfferRedFlags]:
    """Every offer of the case with its checklist state today, in five queries."""
    offers = sorted(offers_of_case(case), key=lambda offer: offer.pk)
    checklists = {
        c.offer_id: c
        for c in ClauseChecklist.objects.filter(offer__case=case)
        .select_related("template")
        .prefetch_related(_items_prefetch())
    }
    on = today()
    return [offer_red_flags(offer, checklists.get(offer.pk), on=on) for offer in offers]


def offer_checklist(offer: Offer) -> OfferRedFlags:
    checklist = (
        ClauseChecklist.objects.filter(offer=offer)
        .select_related("template")
        .prefetch_related(_items_prefetch())
        .first()
    )
    return offer_red_flags(offer, checklist)


def checklist_list_for(actor) -> QuerySet[ClauseChecklist]:
    if not actor.has_perm("contracts.view_clausechecklist"):
        return ClauseChecklist.objects.none()
    return (
        ClauseChecklist.objects.filter(offer__in=offer_list_for(actor))
        .select_related("template", "offer__case", "terms")
        .prefetch_related(_items_prefetch())
        .order_by("pk")
    )


def checklist_get_for(actor, pk: int) -> ClauseChecklist:
    return get_object_or_404(checklist_list_for(actor), pk=pk)


def checklist_item_get_for(actor, pk: int) -> ChecklistItem:
    """An item, only if the actor may see its offer."""
    item = get_object_or_404(
        ChecklistItem.objects.select_related("checklist").prefetch_related(
            Prefetch(
                "waivers",
                queryset=RedFlagWaiver.objects.select_related("waived_by", "confirmed_by"),
            )
        ),
        pk=pk,
    )
    offer_get_for(actor, item.checklist.offer_id)
    return item


def waiver_list_for(actor) -> QuerySet[RedFlagWaiver]:
    """Waivers of the checklists the actor may see."""
    if not actor.has_perm("contracts.view_redflagwaiver"):
        return RedFlagWaiver.objects.none()
    checklists = checklist_list_for(actor).values("pk")
    return RedFlagWaiver.objects.filter(item__checklist__in=checklists).select_related(
        "waived_by", "confirmed_by", "item__checklist__offer"
    )


def waiver_get_for(actor, pk: int) -> RedFlagWaiver:
    return get_object_or_404(waiver_list_for(actor), pk=pk)


def waiver_stored_file(waiver: RedFlagWaiver) -> StoredFile:
    """The waiver's evidence as a download sends it, checked against its SHA-256."""
    return StoredFile(
        case_id=waiver.item.checklist.offer.case_id,
        record=f"Evidence of the waiver of {waiver.item}",
        name=waiver.evidence_storage_name or "",
        sha256=waiver.evidence_sha256 or "",
        filename=waiver.evidence_name or "evidence",
        content_type=waiver.evidence_content_type or None,
    )


def document_list_for(actor) -> QuerySet[ContractDocument]:
    """The contract documents of the offers the actor may see."""
    if not actor.has_perm("contracts.view_contractdocument"):
        return ContractDocument.objects.none()
    return ContractDocument.objects.filter(offer__in=offer_list_for(actor)).select_related(
        "offer", "uploaded_by"
    )


def document_get_for(actor, pk: int) -> ContractDocument:
    return get_object_or_404(document_list_for(actor), pk=pk)


def offer_documents(offer: Offer) -> list[ContractDocument]:
    """Every version of every contract document of the offer, by kind, newest first."""
    return list(
        ContractDocument.objects.filter(offer=offer)
        .select_related("uploaded_by")
        .order_by("kind", "-number")
    )


def case_documents(case) -> dict[int, list[ContractDocument]]:
    """Every version of every contract document of the case's offers, by offer, in one query."""
    by_offer: dict[int, list[ContractDocument]] = {}
    for document in (
        ContractDocument.objects.filter(offer__case=case)
        .select_related("uploaded_by")
        .order_by("offer_id", "kind", "-number")
    ):
        by_offer.setdefault(document.offer_id, []).append(document)
    return by_offer


@dataclass
class DocumentGroup:
    """One kind of contract document of an offer: its versions, newest first."""

    kind: str
    label: str
    versions: list[ContractDocument]


def document_groups(documents: list[ContractDocument]) -> list[DocumentGroup]:
    return [
        DocumentGroup(kind, str(label), [d for d in documents if d.kind == kind])
        for kind, label in DocumentKind.choices
        if any(d.kind == kind for d in documents)
    ]


def document_stored_file(document: ContractDocument) -> StoredFile:
    """A contract document as a download sends it, checked against its SHA-256."""
    return StoredFile(
        case_id=document.offer.case_id,
        record=f"Contract document {document} of offer #{document.offer_id}",
        name=document.storage_name,
        sha256=document.sha256,
        filename=document.name,
        content_type=document.content_type,
    )


def templates_with_items() -> QuerySet[ChecklistTemplate]:
    return ChecklistTemplate.objects.select_related("published_by").prefetch_related(
        Prefetch("items", queryset=TemplateItem.objects.order_by("number"))
    )


def template_latest() -> ChecklistTemplate | None:
    return templates_with_items().order_by("-number").first()


@dataclass
class ComparisonRow:
    number: int
    key: str
    title: str
    cells: list[ItemRow | None]


def case_checklist_comparison(case) -> tuple[list[OfferRedFlags], list[ComparisonRow]]:
    """Rows = clause keys (in template order), columns = the case's offers.

    Offers may hold checklists from different template versions: a key an
    offer's version lacks shows as an empty cell, never as a false "missing".
    """
    offers = case_red_flags(case)
    order: dict[str, tuple[int, str]] = {}
    for entry in offers:
        for row in entry.rows:
            order.setdefault(row.item.key, (row.item.number, row.item.title))
    rows = []
    for key, (number, title) in sorted(order.items(), key=lambda kv: kv[1][0]):
        cells = [next((row for row in entry.rows if row.item.key == key), None) for entry in offers]
        rows.append(ComparisonRow(number=number, key=key, title=title, cells=cells))
    return offers, rows


def offers_checklists(offers) -> list[OfferRedFlags]:
    """The checklist state of each offer given, in four queries whatever their number."""
    checklists = {
        c.offer_id: c
        for c in ClauseChecklist.objects.filter(offer__in=[offer.pk for offer in offers])
        .select_related("template")
        .prefetch_related(_items_prefetch())
    }
    return [offer_red_flags(offer, checklists.get(offer.pk)) for offer in offers]


@dataclass
class TermLine:
    """One term as the pages show it: its label, its value in words, its findings."""

    term: terms.Term
    value: object
    shown: str
    findings: list[terms.Finding]


@dataclass
class OfferTerms:
    """One offer's contract terms, the computed premium and the checks against the case."""

    offer: Offer
    checklist: ClauseChecklist | None
    record: ContractTerms | None
    values: terms.TermValues
    premium: Decimal | None
    findings: list[terms.Finding]
    dates: terms.ContractDates = field(default_factory=terms.ContractDates)

    @property
    def lines(self) -> list[TermLine]:
        return [
            TermLine(
                term=term,
                value=getattr(self.values, term.name),
                shown=term_shown(term, getattr(self.values, term.name)),
                findings=[f for f in self.findings if f.term == term.name],
            )
            for term in terms.TERMS
        ]

    def lines_for(self, item_key: str) -> list[TermLine]:
        return [line for line in self.lines if line.term.item_key == item_key]

    @property
    def stated(self) -> bool:
        return any(value not in (None, "") for value in vars(self.values).values())

    @property
    def bad(self) -> list[terms.Finding]:
        return [f for f in self.findings if f.severity is terms.Severity.BAD]


def term_shown(term: terms.Term, value) -> str:
    """A term's value in the reader's words; "not stated" when blank."""
    if value is None or value == "":
        return str(_("not stated"))
    if term.kind == "percent":
        return formats.percent(value, -3, ratio=False)
    if term.kind == "hours":
        return ngettext("%(n)s hour", "%(n)s hours", value) % {"n": formats.number(value)}
    if term.kind == "days":
        return ngettext("%(n)s day", "%(n)s days", value) % {"n": formats.number(value)}
    choices = dict(BillingBasis.choices) if term.name == "billing_basis" else terms.IMAGE_FORMATS
    return str(choices.get(value, value))


def contract_dates(record: ContractTerms | None) -> terms.ContractDates:
    if record is None:
        return terms.ContractDates()
    return terms.ContractDates(**{name: getattr(record, name) for name in terms.DATE_NAMES})


def terms_values(record: ContractTerms | None) -> terms.TermValues:
    if record is None:
        return terms.TermValues()
    return terms.TermValues(**{name: getattr(record, name) for name in terms.TERM_NAMES})


def case_needs(offer: Offer, case=None) -> terms.CaseNeeds:
    case = case or offer.case
    return terms.CaseNeeds(
        exit_window_days=case.exit_window_days,
        availability_need_pct=case.availability_need_pct,
        offer_billing_basis=offer.billing_basis,
        offer_prepayment_ratio=offer.prepayment_ratio,
    )


def _terms_record(checklist: ClauseChecklist | None) -> ContractTerms | None:
    if checklist is None:
        return None
    try:
        return checklist.terms
    except ContractTerms.DoesNotExist:
        return None


def offer_terms(offer: Offer, checklist: ClauseChecklist | None, case=None) -> OfferTerms:
    record = _terms_record(checklist)
    values = terms_values(record)
    dates = contract_dates(record)
    return OfferTerms(
        offer=offer,
        checklist=checklist,
        record=record,
        values=values,
        premium=terms.prepayment_premium(values),
        findings=[
            *terms.findings(values, case_needs(offer, case)),
            *terms.date_findings(dates, today()),
        ],
        dates=dates,
    )


@shared_read
def case_contract_terms(case) -> list[OfferTerms]:
    """Every offer of the case with its contract terms judged against the case, in two
    queries whatever the number of offers (the offers are read once per shared read)."""
    return contract_terms_of_cases([case], offers_of_case(case))[case.pk]


def contract_terms_of_cases(cases, offers) -> dict[int, list[OfferTerms]]:
    """``case_contract_terms`` of many cases at once, by case, in one query; ``offers``
    are their offers (``offers_of_cases``)."""
    by_pk = {case.pk: case for case in cases}
    checklists = {
        c.offer_id: c
        for c in ClauseChecklist.objects.filter(offer__case_id__in=list(by_pk)).select_related(
            "terms"
        )
    }
    found: dict[int, list[OfferTerms]] = {pk: [] for pk in by_pk}
    for offer in sorted(offers, key=lambda offer: offer.pk):
        case = by_pk[offer.case_id]
        found[case.pk].append(offer_terms(offer, checklists.get(offer.pk), case))
    return found


@dataclass
class TermsTable:
    """Terms as rows, offers as columns, as the offer matrix, the comparison and the
    packet show them."""

    entries: list[OfferTerms]

    @property
    def rows(self) -> list[tuple[terms.Term, list[TermLine]]]:
        lines = [entry.lines for entry in self.entries]
        return [(term, [each[i] for each in lines]) for i, term in enumerate(terms.TERMS)]

    @property
    def any_stated(self) -> bool:
        return any(entry.stated for entry in self.entries)
