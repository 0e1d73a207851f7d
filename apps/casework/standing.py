"""Where a case stands, stored, and kept current by the tracked writes themselves.

Computing the cockpit reads every area's records (some fifty queries on a full
case). The case page reads it instead from a ``CaseStanding`` row, one per case
and kind of viewer (``variant``: the language, the time zone and today's date,
the viewer's permissions, the deployed code and settings and the chain's last
verification run, digested together; nothing listed by hand).

Every tracked write appends a history row, which the audit chain links in the
same transaction (``apps.audit.chain.history_linked``). Here that signal raises
the ``StandingMark`` of the case the written record hangs from (followed through
its foreign keys to the case), or the mark of every case when the record hangs
from none (a vendor, a checklist template, a file alarm…). A standing stamped
with the chain head read *before* its records were read is shown only while no
mark is above that stamp, and only until its ``valid_until`` (an area whose
content turns with the clock). So a standing is never stale: a write either
committed before the stamp was read (and the standing saw it), or raised the
mark above the stamp.

Once such a write commits, the standings that viewers had of the touched case
are computed again for the same kinds of viewer, so the page a reviewer opens
right after an edit reads a stored standing too. Only the areas the writes since
a standing could change are computed again (``apps.casework.written_areas``: the
mark keeps, area by area, the last write that could change it); the others are
rendered from what the standing stored of them (``parts``).
"""

import hashlib
import json
import logging
from collections.abc import Collection, Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from functools import cache
from operator import attrgetter

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.context_processors import PermWrapper
from django.core.signals import setting_changed
from django.db import IntegrityError, connection, transaction
from django.db.models import Q, Subquery
from django.db.models.signals import pre_save
from django.template.loader import render_to_string
from django.urls import get_script_prefix
from django.utils import timezone, translation
from django.utils.translation import get_language
from simple_history.signals import pre_create_historical_record

from apps.audit.chain import HEAD_PK, history_linked
from apps.audit.models import ChainHead, ChainVerification
from apps.cases.models import CaseStanding, ProcurementCase, StandingMark
from apps.cases.records import cases_of
from apps.casework.cockpit import OpenFinding, Tile, cockpit_from_tiles, open_findings, tile
from apps.casework.panels import AREAS, case_nav, case_panels, visible
from apps.casework.registers import approved_offer_id
from apps.casework.written_areas import areas_written
from apps.core.contributions import CasePanel, MissingLine
from apps.core.reads import shared_reads

logger = logging.getLogger(__name__)

FORMAT = "case-standing/1"
COCKPIT_TEMPLATE = "cases/_case_cockpit.html"
# How many kinds of viewer of one case a write computes again at once; the others
# are computed when they next open the page.
REFRESHED_PER_WRITE = 6


# --- what a standing depends on besides the records --------------------------------------


@cache
def code_fingerprint() -> str:
    """The deployed code, templates and compiled translations (read once per process)."""
    from pathlib import Path

    root = Path(settings.BASE_DIR)
    digest = hashlib.sha256()
    for folder, pattern in (("apps", "*.py"), ("apps", "*.html"), ("templates", "*.html")):
        for path in sorted((root / folder).rglob(pattern)):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    for path in sorted((root / "locale").rglob("*.mo")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _plain_setting(value):
    if isinstance(value, set | frozenset):
        return sorted(map(repr, value))
    # Objects without a stable spelling across processes: their type.
    return f"{type(value).__module__}.{type(value).__qualname__}"


@cache
def settings_fingerprint() -> str:
    """Every setting (rules read several), digested; forgotten when a setting changes."""
    names = sorted(name for name in dir(settings) if name.isupper())
    material = json.dumps(
        [[name, attrgetter(name)(settings)] for name in names], default=_plain_setting
    )
    return hashlib.sha256(material.encode()).hexdigest()


def _forget_settings(**kwargs) -> None:
    settings_fingerprint.cache_clear()


setting_changed.connect(_forget_settings, dispatch_uid="cases.standing_settings")


def permissions_fingerprint(actor) -> str:
    perms = sorted(actor.get_all_permissions()) if actor.is_active else []
    material = json.dumps([actor.is_active, actor.is_superuser, perms])
    return hashlib.sha256(material.encode()).hexdigest()


@dataclass(frozen=True)
class ChainVersions:
    """Read before anything a standing is computed from (one statement, one snapshot)."""

    seq: int  # the audit chain head: every tracked write advances it
    verification: int  # the chain's last verification run (recorded untracked)
    users: str  # the users' names and roles (not tracked: an administrator edits them)


@cache
def _versions_statement() -> tuple[str, tuple]:
    """The SQL of the versions query, compiled once per process (it has no variable part)."""
    head = ChainHead.objects.filter(pk=HEAD_PK)
    last_verification = ChainVerification.objects.order_by("-pk").values("pk")[:1]
    queryset = (
        get_user_model()
        .objects.order_by("pk", "groups__name")
        .annotate(
            head_seq=Subquery(head.values("seq")[:1]),
            verification=Subquery(last_verification),
        )
        .values_list(
            "head_seq", "verification", "pk", "username", "first_name", "last_name", "groups__name"
        )
    )
    return queryset.query.sql_with_params()


def chain_versions() -> ChainVersions:
    sql, params = _versions_statement()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = [tuple(row) for row in cursor.fetchall()]
    seq, verification = rows[0][:2] if rows else (None, None)
    users = hashlib.sha256(json.dumps([row[2:] for row in rows]).encode()).hexdigest()
    return ChainVersions(seq=seq or 0, verification=verification or 0, users=users)


def variant(actor, versions: ChainVersions) -> str:
    """The kind of viewer and moment a standing is for (the current language and zone)."""
    parts = [
        FORMAT,
        versions.users,
        get_language(),
        timezone.get_current_timezone_name(),
        timezone.localdate().isoformat(),
        get_script_prefix(),
        versions.verification,
        permissions_fingerprint(actor),
        code_fingerprint(),
        settings_fingerprint(),
    ]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


# --- reading and storing ---------------------------------------------------------------


@dataclass(frozen=True)
class Standing:
    html: str  # the cockpit rendered for this kind of viewer
    valid_until: datetime | None = None
    tiles: list[Tile] | None = None  # when computed now (a stored one keeps its HTML only)
    parts: dict | None = None  # what it was rendered from, by area (see ``_part``)


def _part(panel: CasePanel) -> dict:
    """What the cockpit shows of one area, as stored (JSON): its lines in the viewer's
    language, with the page mending each and the offer it is about."""
    return {
        "order": panel.order,
        "missing": [
            [str(line), str(getattr(line, "url", "") or ""), getattr(line, "offer_id", None)]
            for line in panel.missing
        ],
        "fix_url": str(panel.fix_url),
        "fix_permission": panel.fix_permission,
        "started": panel.started,
        "valid_until": panel.valid_until.isoformat() if panel.valid_until else None,
    }


def _panel_of(area: str, part: dict) -> CasePanel:
    return CasePanel(
        title="",
        template="",
        missing=[MissingLine(text, url, offer_id) for text, url, offer_id in part["missing"]],
        order=part["order"],
        valid_until=_moment(part),
        area=area,
        fix_url=part["fix_url"],
        fix_permission=part["fix_permission"],
        started=part["started"],
    )


def _moment(part: dict) -> datetime | None:
    return datetime.fromisoformat(part["valid_until"]) if part["valid_until"] else None


def _finding(found: OpenFinding) -> dict:
    values = asdict(found)
    values["owners"] = [str(owner) for owner in found.owners]
    return {
        key: value if isinstance(value, bool | list) else str(value)
        for key, value in values.items()
    }


def compute_standing(
    case: ProcurementCase,
    actor,
    *,
    kept: dict | None = None,
    fresh: Collection[str] | None = None,
) -> Standing:
    """Every area the viewer may see, as tiles, the cockpit rendered from them, and until
    when they hold.

    ``kept``: the parts of a standing stored for this same kind of viewer; then only the
    areas in ``fresh``, those it lacks and those past their ``valid_until`` are computed
    again, the others rendered from it."""
    shown = [area for area in AREAS if visible(area, actor)]
    if kept is None or fresh is None:
        computed: Collection[str] = shown
        parts: dict = {}
    else:
        now = timezone.now()
        computed = [
            area
            for area in shown
            if area in fresh
            or area not in kept
            or ((moment := _moment(kept[area])) is not None and now >= moment)
        ]
        parts = {area: kept[area] for area in shown if area not in computed}
    if computed:
        panels = case_panels(case, actor=actor, areas=computed)
        parts.update((panel.area, _part(panel)) for panel in panels)
        if "approval" in parts and "approval" in computed:
            parts["approval"]["findings"] = [_finding(f) for f in open_findings(case, panels)]
    return standing_from_parts(case, actor, parts)


def standing_from_parts(case: ProcurementCase, actor, parts: dict) -> Standing:
    """The cockpit rendered from each area's part; the lines about offers the case's
    decision did not approve closed (read now: a decision changes every tile)."""
    ordered = sorted((area for area in AREAS if area in parts), key=lambda a: parts[a]["order"])
    winner = approved_offer_id(case)
    tiles = [tile(case, _panel_of(area, parts[area]), winner=winner) for area in ordered]
    findings = [OpenFinding(**found) for found in parts.get("approval", {}).get("findings", [])]
    html = render_cockpit(case, tiles, actor, findings)
    moments = [moment for part in parts.values() if (moment := _moment(part)) is not None]
    return Standing(html, min(moments, default=None), tiles, parts)


def render_cockpit(
    case: ProcurementCase, tiles: list[Tile], actor, findings: list[OpenFinding] | None = None
) -> str:
    """The cockpit's HTML: the same for every viewer of one kind (it reads the viewer's
    permissions only, never the request)."""
    context = {
        "case": case,
        **cockpit_from_tiles(case, tiles, case_nav(case, actor), findings),
        "user": actor,
        "perms": PermWrapper(actor),
    }
    return render_to_string(COCKPIT_TEMPLATE, context)


@cache
def _stored_statement() -> str:
    """The SQL reading one stored standing with the highest mark above it (compiled once
    per process, from the models' own table and column names; its parameters: the case
    twice and the variant)."""
    qn = connection.ops.quote_name
    standing, mark = CaseStanding._meta.db_table, StandingMark._meta.db_table
    return (
        f"SELECT s.{qn('id')}, s.{qn('seq')}, s.{qn('valid_until')}, s.{qn('html')}, "  # noqa: S608
        f"(SELECT MAX(m.{qn('seq')}) FROM {qn(mark)} m "
        f"WHERE m.{qn('key')} IN (%s, {StandingMark.ALL})) AS {qn('mark')} "
        f"FROM {qn(standing)} s WHERE s.{qn('case_id')} = %s AND s.{qn('variant')} = %s"
    )


def stored_standing(case_pk: int, key: str, now) -> Standing | None:
    """The stored standing of this variant, if no write touched the case since it was
    computed and it still holds; None otherwise (one query)."""
    rows = list(CaseStanding.objects.raw(_stored_statement(), [case_pk, case_pk, key]))
    if not rows:
        return None
    row = rows[0]
    mark = row.mark  # type: ignore[attr-defined]  # selected with the row
    if mark is not None and mark > row.seq:
        return None
    if row.valid_until is not None and now >= row.valid_until:
        return None
    return Standing(row.html, row.valid_until)


def _store(case: ProcurementCase, actor, key: str, seq: int, standing: Standing) -> None:
    values = {
        "seq": seq,
        "valid_until": standing.valid_until,
        "html": standing.html,
        "parts": standing.parts,
        "viewer": actor,
        "language": get_language(),
        "time_zone": timezone.get_current_timezone_name(),
    }
    try:
        with transaction.atomic():
            # Never replace a standing computed from a later reading of the chain; those
            # of earlier days are for a date no view asks for again.
            CaseStanding.objects.filter(
                Q(variant=key, seq__lte=seq)
                | Q(computed_at__lt=timezone.now() - timedelta(days=2)),
                case_id=case.pk,
            ).delete()
            CaseStanding.objects.create(case_id=case.pk, variant=key, **values)
    except IntegrityError:  # a standing from a later reading is stored already
        pass


def case_standing(case: ProcurementCase, actor, versions: ChainVersions) -> Standing:
    """The case's standing for this viewer: stored when current, else computed and stored.

    ``versions`` (``chain_versions()``) were read before the case."""
    if not settings.CASE_STANDING_STORED:
        return compute_standing(case, actor)
    key = variant(actor, versions)
    stored = stored_standing(case.pk, key, timezone.now())
    if stored is not None:
        return stored
    standing = compute_standing(case, actor)
    _store(case, actor, key, versions.seq, standing)
    return standing


# --- kept current by the tracked writes ----------------------------------------------------


def _raise_mark(key: int, seq: int, areas: Iterable[str] | None) -> None:
    """Raise the mark, and that of each area the write can change (None: every area)."""
    # Every tracked write links its history row with the chain head locked, so the marks
    # are raised one write at a time, each above the last.
    mark = StandingMark.objects.filter(key=key).first()
    if areas is None:  # every area: what was written of each before is implied
        written = {StandingMark.EVERY_AREA: seq}
    else:
        written = (
            dict(mark.areas if mark.areas is not None else {StandingMark.EVERY_AREA: mark.seq})
            if mark
            else {}
        )
        written.update((area, seq) for area in areas)
    if mark is None:
        StandingMark.objects.create(key=key, seq=seq, areas=written)
    else:
        # untracked: a mark is derived from the chain, which the write itself extends
        StandingMark.objects.filter(key=key).update(seq=seq, areas=written)


def areas_above(marks: Iterable[StandingMark], seq: int) -> set[str] | None:
    """The areas some write after ``seq`` could change (None: every area)."""
    touched: set[str] = set()
    for mark in marks:
        if mark.seq <= seq:
            continue
        written = mark.areas if mark.areas is not None else {StandingMark.EVERY_AREA: mark.seq}
        touched.update(area for area, at in written.items() if at > seq)
    return None if StandingMark.EVERY_AREA in touched else touched


def _written(sender, history_row) -> frozenset[str] | None:
    try:
        kind = sender.instance_type._meta.label_lower
        return areas_written(kind, getattr(history_row, "standing_changed_fields", None))
    except Exception:  # never fail the write: every area is computed again
        logger.warning("Areas of a written record not found", exc_info=True)
        return None


def on_history_linked(sender, history_row, seq: int, **kwargs) -> None:
    """A tracked write: raise the marks of the cases it touches, and of the areas it can
    change (same transaction), and compute their standings again once it commits."""
    touched: set[int] | None
    try:
        if sender.instance_type is ProcurementCase:  # the row's id is the case's
            touched = {history_row.id}
        elif getattr(sender.instance_type, "standing_reaches_every_case", False):
            touched = None
        else:
            touched = cases_of(history_row.instance)
    except Exception:  # never fail the write: every case's standing is computed again
        logger.warning("Case of a written record not found", exc_info=True)
        touched = None
    areas = _written(sender, history_row)
    if touched is None:
        _raise_mark(StandingMark.ALL, seq, areas)
        return
    for case_pk in touched:
        _raise_mark(case_pk, seq, areas)
        _refresh_on_commit(case_pk)


def _refresh_on_commit(case_pk: int) -> None:
    """Once per transaction and case, however many history rows it writes."""
    db = transaction.get_connection()
    waiting = [entry[1] for entry in db.run_on_commit] if db.in_atomic_block else []
    if any(getattr(func, "refreshes_case", None) == case_pk for func in waiting):
        return

    def refresh() -> None:
        refresh.refreshes_case = None  # type: ignore[attr-defined]  # run: no longer waiting
        refresh_after_write(case_pk)

    refresh.refreshes_case = case_pk  # type: ignore[attr-defined]
    transaction.on_commit(refresh)


def refresh_after_write(case_pk: int) -> None:
    """Compute again, for the same kinds of viewer, the standings a write made stale:
    the areas the writes since each could change, the others as it stored them."""
    try:
        versions = chain_versions()
        head = versions.seq
        case = ProcurementCase.objects.filter(pk=case_pk).first()
        if case is None:
            return
        stale = (
            CaseStanding.objects.filter(case_id=case_pk, seq__lt=head)
            .select_related("viewer")
            .order_by("-computed_at")
        )
        rows = list(stale[:REFRESHED_PER_WRITE])
        # Read after the head: every write up to it has raised its areas here.
        marks = list(StandingMark.objects.filter(key__in=(case_pk, StandingMark.ALL)))
        restored = 0
        with shared_reads():
            for row in rows:
                with translation.override(row.language), timezone.override(row.time_zone):
                    viewer = row.viewer
                    key = variant(viewer, versions)
                    same_kind = key == row.variant and row.parts is not None
                    fresh = areas_above(marks, row.seq) if same_kind else None
                    kept = row.parts if fresh is not None else None
                    standing = compute_standing(case, viewer, kept=kept, fresh=fresh)
                    _store(case, viewer, key, head, standing)
                    restored += key == row.variant  # stored in its place
        if len(rows) == REFRESHED_PER_WRITE or restored < len(rows):
            # What is left stale is never shown again: computed afresh when asked.
            CaseStanding.objects.filter(case_id=case_pk, seq__lt=head).delete()
    except Exception:  # the write is committed: a failed refresh only costs speed
        logger.warning("Case standing not refreshed after a write", exc_info=True)


# --- which fields of the case a write changed --------------------------------------------


def _note_changed_case_fields(sender, instance, raw=False, **kwargs) -> None:
    """Before a case is saved: the fields that differ from its stored row (one query), so
    that an edit of what no area reads recomputes no area."""
    instance.__dict__.pop("standing_changed_fields", None)
    if raw or instance._state.adding or instance.pk is None:
        return
    names = [field.attname for field in ProcurementCase._meta.concrete_fields]
    before = ProcurementCase._base_manager.filter(pk=instance.pk).values(*names).first()
    if before is not None:
        changed = {name for name in names if before[name] != getattr(instance, name)}
        instance.standing_changed_fields = frozenset(changed)


def _carry_changed_fields(sender, instance, history_instance, **kwargs) -> None:
    changed = instance.__dict__.pop("standing_changed_fields", None)
    if changed is not None:
        history_instance.standing_changed_fields = changed


# Every tracked write raises the mark of the cases it touches (same transaction).
history_linked.connect(on_history_linked, dispatch_uid="cases.standing")
pre_save.connect(_note_changed_case_fields, sender=ProcurementCase, dispatch_uid="cases.standing")
pre_create_historical_record.connect(
    _carry_changed_fields,
    sender=ProcurementCase.history.model,
    dispatch_uid="cases.standing_fields",
)
