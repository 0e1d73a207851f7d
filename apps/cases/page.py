"""The case page (the cockpit), served from the cache until the next tracked write.

Every regulated write appends a history row and advances the audit chain head
(``ChainHead.seq``, ``apps.audit.chain``) in its own transaction. The cockpit is
computed from the case's areas (``apps.cases.panels``) and kept, with the whole
page rendered around it, under a key made of everything else it depends on:

- the case and the chain head (its sequence number and hash: any tracked write,
  anywhere) and the chain's last verification run (recorded untracked);
- the viewer and a fingerprint of their permissions (a change of role);
- the language, the time zone and today's date (formats, review-by dates);
- the names and roles of the users (not tracked: an admin may rename someone or
  change their groups);
- the deployed code, templates, static files and translations, the areas and
  the settings the rules read;
- the path asked for (the site template's language form returns to it).

An area whose content turns with the clock (a verification ageing past its
limit) says until when it holds (``CasePanel.valid_until``); the cached copy
is not served after that instant. A form's CSRF token is swapped in per
response; a page with a flash message to show is rendered again from the
cached cockpit. The versions are read before the case and its records, so a
cached copy is never older than the key it is stored under.
"""

import hashlib
import json
import logging
import secrets
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.core.cache import cache as django_cache
from django.db import connection
from django.db.models import Subquery
from django.http import HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.template import RequestContext
from django.template.backends.django import Template as DjangoTemplate
from django.template.loader import get_template
from django.urls import get_script_prefix
from django.utils import timezone
from django.utils.translation import get_language

from apps.cases.cockpit import cockpit
from apps.cases.panels import AREAS, case_nav, case_panels

logger = logging.getLogger(__name__)

FORMAT = "case-page/2"
TEMPLATE = "cases/case_detail.html"


def cache_seconds() -> int:
    """How long a cached copy may live at most; 0 turns the cache off."""
    return settings.CASE_PAGE_CACHE_SECONDS


@dataclass(frozen=True)
class PageVersions:
    """What changes with every write the cached parts could show."""

    head_seq: int
    users: str
    head_hash: str = ""
    # The chain's last verification: its runs are recorded untracked (``ChainVerification``).
    verification: int = 0


@cache
def _versions_statement() -> tuple[str, tuple]:
    """The SQL of the versions query, compiled once per process (it has no variable part)."""
    from apps.audit.chain import HEAD_PK
    from apps.audit.models import ChainHead, ChainVerification

    # One statement, so one snapshot: the head, the last verification and the users'
    # names and roles (one row per group: the site template shows the viewer's roles)
    # as of the same moment.
    head = ChainHead.objects.filter(pk=HEAD_PK)
    last_verification = ChainVerification.objects.order_by("-pk").values("pk")[:1]
    queryset = (
        get_user_model()
        .objects.order_by("pk", "groups__name")
        .annotate(
            head_seq=Subquery(head.values("seq")[:1]),
            head_hash=Subquery(head.values("entry_hash")[:1]),
            verification=Subquery(last_verification),
        )
        .values_list(
            "head_seq",
            "head_hash",
            "verification",
            "pk",
            "username",
            "first_name",
            "last_name",
            "groups__name",
        )
    )
    return queryset.query.sql_with_params()


def page_versions() -> PageVersions:
    """Read before anything the page shows (one small query)."""
    sql, params = _versions_statement()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = [tuple(row) for row in cursor.fetchall()]
    seq, head_hash, verification = rows[0][:3] if rows else (None, None, None)
    users = hashlib.sha256(json.dumps([row[3:] for row in rows]).encode()).hexdigest()
    return PageVersions(
        head_seq=seq or 0, users=users, head_hash=head_hash or "", verification=verification or 0
    )


@cache
def code_fingerprint() -> str:
    """The deployed code, templates, static files (the page links their hashed names)
    and compiled translations (read once per process)."""
    root = Path(settings.BASE_DIR)
    digest = hashlib.sha256()
    folders = (("apps", ("*.py", "*.html")), ("templates", ("*.html",)), ("static", ("*.*",)))
    for folder, patterns in folders:
        for pattern in patterns:
            for path in sorted((root / folder).rglob(pattern)):
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())
    for path in sorted((root / "locale").rglob("*.mo")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def permissions_fingerprint(actor) -> str:
    perms = sorted(actor.get_all_permissions()) if actor.is_active else []
    material = json.dumps([actor.is_active, actor.is_superuser, perms])
    return hashlib.sha256(material.encode()).hexdigest()


def page_key(request, pk: int, versions: PageVersions) -> str:
    from apps.approvals.selectors import verification_max_age_days

    actor = request.user
    parts = [
        FORMAT,
        pk,
        versions.head_seq,
        versions.head_hash,
        versions.verification,
        versions.users,
        actor.pk,
        permissions_fingerprint(actor),
        # The site template around the case shows the path (the viewer's roles are
        # in ``versions.users``).
        request.get_full_path(),
        get_language(),
        timezone.get_current_timezone_name(),
        timezone.localdate().isoformat(),
        get_script_prefix(),
        list(AREAS),
        verification_max_age_days(),
        code_fingerprint(),
    ]
    digest = hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()
    return f"case-page:{pk}:{digest}"


def _compute(request, case) -> dict:
    """The cockpit (the page's queries, once) and until when it holds."""
    panels = case_panels(case, actor=request.user)
    moments = [panel.valid_until for panel in panels if panel.valid_until is not None]
    return {
        "context": cockpit(case, panels, case_nav(case, request.user)),
        "valid_until": min(moments, default=None),
        # A form's CSRF token differs per response: the cached page holds a random
        # placeholder, swapped for this response's token when served.
        "csrf_sentinel": "csrf-" + secrets.token_hex(16),
        # The whole page, once rendered without flash messages (``_whole_page``).
        "page_html": None,
    }


def _cache_get(key: str, now):
    try:
        entry = django_cache.get(key)
    except Exception:  # an unreachable cache costs speed, never the page
        logger.warning("Case page cache unavailable; rendering the page", exc_info=True)
        return None
    if entry is None or (entry["valid_until"] is not None and now >= entry["valid_until"]):
        return None
    return entry


def _cache_set(key: str, entry: dict, now, seconds: int) -> None:
    if entry["valid_until"] is not None:
        left = (entry["valid_until"] - now).total_seconds()
        seconds = min(seconds, max(1, int(left)))
    try:
        django_cache.set(key, entry, seconds)
    except Exception:
        logger.warning("Case page cache unavailable; not stored", exc_info=True)


def case_page_response(request, pk: int, *, versions: PageVersions, load_case) -> HttpResponse:
    """The case page; ``versions`` read before ``load_case()`` fetches the case.

    When no flash message waits, the whole page comes from the cache: only this
    response's CSRF token is put in. Such a copy needs no case loaded: its key
    holds the viewer's permissions and the chain head, and a case is only
    removed by a tracked delete, so the case was there and visible to this
    viewer as it is now.
    """
    seconds = cache_seconds()
    if seconds <= 0:
        case = load_case()
        return render(request, TEMPLATE, {"case": case, **_compute(request, case)["context"]})
    key = page_key(request, pk, versions)
    now = timezone.now()
    entry = _cache_get(key, now)
    whole = not _messages_waiting(request)
    if whole and entry is not None and entry["page_html"] is not None:
        return HttpResponse(_with_token(entry["page_html"], entry["csrf_sentinel"], request))
    case = load_case()
    changed = entry is None
    if entry is None:
        entry = _compute(request, case)
    if whole:
        entry = {**entry, "page_html": _whole_page(request, case, entry)}
        changed = True
    if changed:
        _cache_set(key, entry, now, seconds)
    if whole:
        return HttpResponse(_with_token(entry["page_html"], entry["csrf_sentinel"], request))
    return render(request, TEMPLATE, {"case": case, **entry["context"]})


def _messages_waiting(request) -> bool:
    # Counting reads the storage without marking the messages as shown.
    return bool(len(get_messages(request)))


def _whole_page(request, case, entry: dict) -> str:
    """The page with the token placeholder in every form and no flash messages."""
    template = get_template(TEMPLATE)
    assert isinstance(template, DjangoTemplate)  # the one engine configured (config.settings)
    # Context processors run after the view's context: this one has the last word.
    placeholders = {"csrf_token": entry["csrf_sentinel"], "messages": ()}
    return template.template.render(
        RequestContext(
            request, {"case": case, **entry["context"]}, processors=[lambda _request: placeholders]
        )
    )


def _with_token(html: str, sentinel: str, request) -> str:
    # The token is made of [A-Za-z0-9] only: nothing to escape in the safe HTML.
    return html.replace(sentinel, get_token(request))
