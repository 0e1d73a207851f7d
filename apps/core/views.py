"""Probes and small shared views."""

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from apps.core.access import role_labels, roles_holding


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:  # any driver error means "not reachable"
        return False


def _broker_ok() -> bool | None:
    if not settings.CELERY_BROKER_URL:
        return None
    from config.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        return True
    except Exception:
        return False


@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    """Public liveness/readiness probe; says nothing beyond reachability."""
    checks = {"database": _database_ok()}
    broker = _broker_ok()
    if broker is not None:
        checks["broker"] = broker
    healthy = all(checks.values())
    return JsonResponse(
        {"status": "ok" if healthy else "unavailable", "checks": checks},
        status=200 if healthy else 503,
    )


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """403 as a page that says who may open it and where to go instead."""
    permission = getattr(exception, "permission", None)
    roles = getattr(exception, "roles", None)
    if roles:
        context = {"roles": role_labels(roles)}
    else:
        context = {"roles": roles_holding(permission) if permission else []}
    return render(request, "403.html", context, status=403)
