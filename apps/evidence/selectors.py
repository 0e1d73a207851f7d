"""Reads of evidence, verifications and harness tokens, in a fixed number of queries."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Max, QuerySet, Subquery
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.core.downloads import StoredFile
from apps.core.reads import shared_read
from apps.evidence.models import (
    EvidenceBundle,
    EvidenceUpload,
    HarnessToken,
    SpecVerification,
    Verdict,
)
from apps.evidence.rules import composition, security
from apps.offers.models import Offer

# A passing verification has no failing check; warnings ("findings") are shown
# with it but do not block an approval gate on their own.
PASSING_VERDICTS = (Verdict.VERIFIED, Verdict.FINDINGS)


def bundle_list_for(actor) -> QuerySet[EvidenceBundle]:
    if not actor.has_perm("evidence.view_evidencebundle"):
        return EvidenceBundle.objects.none()
    return EvidenceBundle.objects.select_related(
        "case", "offer__vendor", "token", "verification"
    ).defer("summary")


def bundle_get_for(actor, pk: int) -> EvidenceBundle:
    queryset = bundle_list_for(actor).defer(None)
    return get_object_or_404(queryset, pk=pk)


def bundle_stored_file(bundle: EvidenceBundle) -> StoredFile:
    """The bundle's raw bytes as a download sends them, checked against its SHA-256."""
    return StoredFile(
        case_id=bundle.case_id,
        record=f"Evidence bundle {bundle.sha256[:12]}…",
        name=bundle.storage_name,
        sha256=bundle.sha256,
        filename=f"evidence-{bundle.sha256[:16]}.json",
        content_type="application/json",
    )


def case_bundles(case) -> list[EvidenceBundle]:
    """Every bundle of a case, newest first, with offer, vendor, token and verdict (1 query)."""
    return list(
        EvidenceBundle.objects.filter(case=case)
        .select_related("offer__vendor", "token", "verification")
        .defer("summary", "verification__checks")
        .order_by("-received_at", "-pk")
    )


def latest_verification(offer) -> SpecVerification | None:
    """The offer's verification: the newest one recorded, which was composed from every
    bundle held when it was (the offer's row is locked while one is composed)."""
    return (
        SpecVerification.objects.filter(offer=offer)
        .select_related("bundle")
        .order_by("-pk")
        .first()
    )


def newest_per_offer(verifications: QuerySet[SpecVerification]) -> QuerySet[SpecVerification]:
    """Of ``verifications``, each offer's newest (the highest pk, as ``latest_verification``),
    in one query that returns one row per offer however many the offer has."""
    if connection.vendor == "postgresql":
        return verifications.order_by("offer_id", "-pk").distinct("offer_id")
    newest = verifications.order_by().values("offer_id").annotate(newest=Max("pk"))
    return verifications.filter(pk__in=Subquery(newest.values("newest")))


@shared_read
def case_verifications(case) -> dict[int, SpecVerification]:
    """Each offer's verification, by offer id, with its checks and its bundle (one query).

    Only each offer's newest is read: an offer with hundreds of bundles costs the same as
    one with a single bundle. The checks are read with it, since the gates and the
    evidence page read them (the endpoint security probes) for every offer.
    """
    rows = newest_per_offer(
        SpecVerification.objects.filter(offer__case=case)
        .select_related("bundle")
        .defer("bundle__summary", "bundle__client_summary_disagreements")
    )
    return {row.offer_id: row for row in rows if row.offer_id is not None}


def verification_age_basis(verification: SpecVerification):
    """The oldest measurement the composed checks rely on; for a verification recorded before
    composition, its run's own finish time unless the server received it earlier."""
    if verification.measured_at is not None:
        return verification.measured_at
    bundle = verification.bundle
    times = [t for t in (bundle.run_finished_at, bundle.received_at) if t is not None]
    return min(times)


def verification_passing(verification: SpecVerification | None, *, max_age_days: int) -> bool:
    """For the approval gate: a passing verdict, nothing blocking its confirmation, on
    evidence at most ``max_age_days`` old."""
    if verification is None or verification.verdict not in PASSING_VERDICTS:
        return False
    if verification.findings:
        return False
    return verification_age_basis(verification) >= timezone.now() - timedelta(days=max_age_days)


# --- where each value came from ---------------------------------------------

SECTION_TITLES = {
    composition.INVENTORY: gettext_lazy("Inventory and identity"),
    composition.ENVIRONMENT: gettext_lazy("Environment"),
    composition.BENCH: gettext_lazy("Micro-benchmarks"),
    composition.LOADTEST: gettext_lazy("Load test"),
    composition.NETPROBE: gettext_lazy("Network probe"),
    composition.AUTHPROBE: gettext_lazy("Endpoint security probe"),
    composition.SOAK: gettext_lazy("Soak"),
    composition.CORRECTNESS: gettext_lazy("Correctness"),
    composition.RATESEARCH: gettext_lazy("Rate search (throughput at the SLO)"),
}
SECTION_TITLES |= {
    composition.TOPOLOGY: gettext_lazy("Links between the cards"),
    composition.NODE: gettext_lazy("Inside the node"),
    composition.DISK: gettext_lazy("Local disk"),
}
SECTION_TITLES[composition.TRAINING] = gettext_lazy("Reference training step")


def section_title(section: str) -> str:
    """A part's name; "" is every part (a verification recorded before composition)."""
    if not section:
        return _("Every part")
    return str(SECTION_TITLES.get(section, section))


@dataclass(frozen=True)
class Source:
    """The bundle one part of a verification comes from."""

    section: str
    title: str
    bundle_id: int
    sha256: str
    received_at: datetime | None
    measured_at: datetime | None

    @property
    def short(self) -> str:
        return self.sha256[:12]


def _source(section: str, entry: dict) -> Source:
    return Source(
        section=section,
        title=section_title(section),
        bundle_id=entry["bundle"],
        sha256=entry.get("sha256") or "",
        received_at=parse_datetime(entry.get("received_at") or ""),
        measured_at=parse_datetime(entry.get("measured_at") or ""),
    )


def verification_sources(verification: SpecVerification | None) -> list[Source]:
    """Each measured part and the bundle it comes from, in the order parts are listed.
    A verification recorded before composition is its own bundle's, whole."""
    if verification is None:
        return []
    if verification.sources is None:
        bundle = verification.bundle
        entry = {
            "bundle": bundle.pk,
            "sha256": bundle.sha256,
            "received_at": bundle.received_at.isoformat(),
            "measured_at": verification_age_basis(verification).isoformat(),
        }
        return [_source("", entry)]
    order = {section: i for i, section in enumerate(composition.SECTIONS)}
    parts = sorted(verification.sources.items(), key=lambda p: (order.get(p[0], 99), p[0]))
    return [_source(section, entry) for section, entry in parts]


def endpoint_security(
    verification: SpecVerification | None, tokens_scoped: bool | None = None
) -> security.SecurityState | None:
    """The endpoint security probes as the approval gate reads them (None: no verification);
    ``tokens_scoped``: what the offer's declared spec says of its API tokens now."""
    if verification is None:
        return None
    return security.gate_state(list(verification.checks or []), tokens_scoped)


def endpoint_security_checks(verification: SpecVerification | None) -> list[dict]:
    """Each endpoint security probe of the verification, in a fixed order, with a
    placeholder for any it does not hold (a verification recorded before the probes)."""
    if verification is None:
        return []
    mine = {c.get("key"): c for c in verification.checks or []}
    return [
        mine.get(key) or {"key": key, "title": security.TITLES[key], "status": "not_measured"}
        for key in security.KEYS
    ]


def checks_with_sources(verification: SpecVerification | None) -> list[dict]:
    """The checks, each with ``from`` (the ``Source`` of its bundle, None where nothing
    measured it) and ``own`` (measured by the verification's own bundle)."""
    if verification is None:
        return []
    if verification.sources is None:
        whole = verification_sources(verification)[0]
        return [dict(c, **{"from": whole, "own": True}) for c in verification.checks or []]
    by_bundle = {s.bundle_id: s for s in verification_sources(verification)}
    return [
        dict(
            c,
            **{
                "from": by_bundle.get(c.get("bundle")),
                "own": c.get("bundle") == verification.bundle_id,
            },
        )
        for c in verification.checks or []
    ]


def own_checks(verification: SpecVerification | None) -> list[dict]:
    """The checks the verification's own bundle measured (all of them, for one recorded
    before composition)."""
    if verification is None:
        return []
    if verification.sources is None:
        return list(verification.checks or [])
    return [c for c in verification.checks or [] if c.get("bundle") == verification.bundle_id]


def _moment(text: str | None) -> str:
    moment = parse_datetime(text or "")
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M") if moment else "?"


def _sections(names) -> str:
    return ", ".join(section_title(name) for name in names)


def _gpus(uuids: list[str]) -> str:
    shown = ", ".join(uuids[:2])
    if len(uuids) > 2:
        shown += " " + _("and %(n)s more") % {"n": len(uuids) - 2}
    return shown or "—"


def _difference(difference: dict) -> str:
    if difference.get("what") == composition.HOST_NAME:
        return _("host name %(this)s, not %(reference)s") % {
            "this": difference.get("this"),
            "reference": difference.get("reference"),
        }
    return _("GPUs %(this)s, not %(reference)s") % {
        "this": _gpus(list(difference.get("this") or [])),
        "reference": _gpus(list(difference.get("reference") or [])),
    }


def finding_text(finding: dict) -> str:
    """A finding that keeps the verification from being confirmed, in plain words."""
    bundle, reference = finding.get("bundle") or {}, finding.get("reference") or {}
    return _(
        "Bundle %(bundle)s (%(parts)s, received %(when)s) was run on a different machine than "
        "bundle %(reference)s (%(reference_parts)s): %(differences)s. Measurements from two "
        "machines cannot confirm one offer; run the harness again on the rented machine."
    ) % {
        "bundle": (bundle.get("sha256") or "?")[:12],
        "parts": _sections(finding.get("sections") or []),
        "when": _moment(bundle.get("received_at")),
        "reference": (reference.get("sha256") or "?")[:12],
        "reference_parts": _sections(finding.get("reference_sections") or []),
        "differences": "; ".join(_difference(d) for d in finding.get("differences") or []),
    }


def blocking_reasons(verification: SpecVerification | None) -> list[str]:
    """Why the verification cannot be confirmed, whatever its verdict (empty: nothing)."""
    if verification is None:
        return []
    return [finding_text(f) for f in verification.findings or []]


def source_bundle(verification: SpecVerification | None, section: str) -> EvidenceBundle | None:
    """The bundle (with its summary) a part of the verification comes from."""
    return source_bundles(verification, (section,))[section]


def source_bundles(
    verification: SpecVerification | None, sections: tuple[str, ...]
) -> dict[str, EvidenceBundle | None]:
    """The bundles (with their summaries) the named parts of the verification come from,
    by part, in one query however many parts: as ``source_bundle`` gives each."""
    if verification is None:
        return dict.fromkeys(sections)
    if verification.sources is None:
        return dict.fromkeys(sections, verification.bundle)
    wanted = {
        section: entry["bundle"]
        for section in sections
        if (entry := verification.sources.get(section)) is not None
    }
    found = EvidenceBundle.objects.in_bulk(set(wanted.values())) if wanted else {}
    return {
        section: found.get(wanted[section]) if section in wanted else None for section in sections
    }


def loadtest_summaries(verifications: dict[int, SpecVerification]) -> dict[int, dict]:
    """Each offer's load-test summary: that of the bundle its verification takes the load
    test from (``verifications`` by offer id, as ``case_verifications`` gives them), in
    one query however many offers."""
    wanted: dict[int, int] = {}  # offer id → bundle id
    for offer_id, verification in verifications.items():
        if verification.sources is None:
            wanted[offer_id] = verification.bundle_id
        elif (entry := verification.sources.get(composition.LOADTEST)) is not None:
            wanted[offer_id] = entry["bundle"]
    if not wanted:
        return {}
    summaries = dict(
        EvidenceBundle.objects.filter(pk__in=set(wanted.values())).values_list("pk", "summary")
    )
    return {offer_id: summaries.get(pk) or {} for offer_id, pk in wanted.items()}


# --- what an approval relies on -----------------------------------------------


def verification_values(verification: SpecVerification) -> dict:
    """The values a decision on this verification relies on (``composition.relied_on``)."""
    return composition.relied_on(
        verdict=verification.verdict,
        checks=list(verification.checks or []),
        findings=verification.findings,
        standalone_sha256=verification.bundle.sha256 if verification.sources is None else None,
    )


def verification_binding(verification_pk: int) -> dict | None:
    """What a decision binds to: the verification and the values it relied on."""
    verification = (
        SpecVerification.objects.select_related("bundle").filter(pk=verification_pk).first()
    )
    if verification is None or verification.offer_id is None:
        return None
    return {
        "offer": verification.offer_id,
        "verification": verification.pk,
        "values": verification_values(verification),
    }


def current_verifications(offer_ids) -> dict[int, SpecVerification]:
    """Each offer's verification now, by offer id (one query)."""
    rows = newest_per_offer(
        SpecVerification.objects.filter(offer_id__in=set(offer_ids))
        .select_related("bundle")
        .defer("bundle__summary", "bundle__client_summary_disagreements")
    )
    return {row.offer_id: row for row in rows if row.offer_id is not None}


@dataclass
class OfferEvidence:
    offer: Offer
    latest: EvidenceBundle | None
    bundles: int
    verification: SpecVerification | None = None  # the offer's composed verification

    @property
    def suggested_score(self) -> int | None:
        return suggested_performance_score(self.verification)

    @property
    def sources(self) -> list[Source]:
        return verification_sources(self.verification)

    @property
    def blocked(self) -> list[str]:
        return blocking_reasons(self.verification)

    @property
    def security(self) -> list[dict]:
        return endpoint_security_checks(self.verification)


def offers_evidence(
    offers, bundles: list[EvidenceBundle], verifications: dict[int, SpecVerification] | None = None
) -> list[OfferEvidence]:
    """Per offer, its newest bundle (bundles are newest first), how many it has and its
    verification (``case_verifications``; without it, the newest bundle's)."""
    rows = []
    for offer in offers:
        mine = [b for b in bundles if b.offer_id == offer.pk]
        latest = mine[0] if mine else None
        if verifications is not None:
            verification = verifications.get(offer.pk)
        else:
            verification = getattr(latest, "verification", None) if latest else None
        rows.append(
            OfferEvidence(offer=offer, latest=latest, bundles=len(mine), verification=verification)
        )
    return rows


def case_tokens(case) -> QuerySet[HarnessToken]:
    """The case's harness tokens with offer, vendor and people, for a list to filter and page."""
    return HarnessToken.objects.filter(case=case).select_related(
        "offer__vendor", "created_by", "revoked_by"
    )


def case_bundle_rows(case) -> QuerySet[EvidenceBundle]:
    """The case's bundles with offer, vendor, token and verdict, for a list to filter and page."""
    return (
        EvidenceBundle.objects.filter(case=case)
        .select_related("offer__vendor", "token", "verification")
        .defer("summary", "verification__checks")
    )


# For the scorecard's measured-performance criterion (0–5, docs/rules/offers.md#scorecard): a
# reviewer may take this suggestion from the verified numbers instead of judging by hand.
PERFORMANCE_SCORE: dict[str, int] = {Verdict.VERIFIED: 5, Verdict.FINDINGS: 3, Verdict.FAILED: 0}


def suggested_performance_score(verification: SpecVerification | None) -> int | None:
    """None when the evidence cannot support a score (insufficient or absent)."""
    if verification is None:
        return None
    return PERFORMANCE_SCORE.get(verification.verdict)


# A token holder can send refused uploads until the token expires: the page lists them
# a page at a time.
UNFINISHED_PER_PAGE = 20


def case_uploads_not_stored(case) -> QuerySet[EvidenceUpload]:
    """The case's uploads that are not (yet) evidence: being read, refused or failed.
    A queryset, for the page to filter, sort (newest first unless asked) and page."""
    return (
        EvidenceUpload.objects.filter(case=case)
        .exclude(state=EvidenceUpload.State.VERIFIED)
        .select_related("token")
    )
