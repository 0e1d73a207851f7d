"""Request-level safety nets."""

import logging
import threading

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from django.core.signals import request_finished
from django.db import DataError, IntegrityError
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from apps.core.storage import StorageUnavailable, unavailable_message

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 60
# How long a request waits for a slot of the development server before a 503.
SLOT_WAIT_SECONDS = 120


def is_out_of_range(exc: BaseException) -> bool:
    """A number in the URL or query too large for any integer column.

    SQLite raises OverflowError before the query runs; PostgreSQL answers
    "out of range" (a DataError). Either way no such record can exist.
    """
    if isinstance(exc, OverflowError):
        return True
    return isinstance(exc, DataError) and "out of range" in str(exc)


def is_duplicate(exc: BaseException) -> bool:
    """A write refused by a unique constraint: the same record was saved meanwhile.

    The forms and serializers check uniqueness first; two people saving the same new
    record at the same moment both pass that check, and the database refuses the
    second. PostgreSQL says so by its error code (23505), SQLite in words.
    """
    if not isinstance(exc, IntegrityError):
        return False
    if getattr(exc.__cause__, "sqlstate", None) == "23505":
        return True
    return str(exc).startswith("UNIQUE constraint failed")


def duplicate_message() -> str:
    return _(
        "Someone saved the same record at the same moment, so it exists already and "
        "nothing was saved from this request. Reload the page to see it."
    )


class OutOfRangeIsNotFoundMiddleware:
    """Turn an impossible id in a page's URL into a 404 instead of a 500."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if is_out_of_range(exception):
            raise Http404("No such record.") from exception
        return None


class StorageUnavailableMiddleware:
    """A file store that cannot be reached answers 503 with a page saying so, not a 500.

    Whatever the page was doing has been undone (its transaction rolled back, the
    file it stored removed), so the person can simply try again later.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, StorageUnavailable):
            return None
        logger.error("File store unavailable for %s: %r", request.path, exception.__cause__)
        response = render(
            request,
            "core/storage_unavailable.html",
            {"message": unavailable_message()},
            status=503,
        )
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response


class DuplicateIsConflictMiddleware:
    """A page's write that lost a race to create the same record answers 409, not 500.

    Its transaction was rolled back, so nothing of it was kept; the page says what
    happened and the person reloads to see the record the other person saved.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not is_duplicate(exception):
            return None
        logger.warning("Duplicate record refused for %s: %s", request.path, exception)
        return render(
            request, "core/duplicate_refused.html", {"message": duplicate_message()}, status=409
        )


class DevServerConcurrencyMiddleware:
    """``manage.py runserver`` on PostgreSQL serves at most ``RUNSERVER_MAX_REQUESTS``
    requests at once; the others wait for a slot (up to SLOT_WAIT_SECONDS, then 503).

    The development server runs every request in a thread of its own, and every thread
    opens a database connection of its own, so without a bound the connections follow the
    number of people and run past PostgreSQL's ``max_connections``. A slot is freed when
    the response is finished, after Django has closed the request's connection (its own
    ``request_finished`` receiver runs first), so the connections never exceed the slots.
    Anywhere else (gunicorn, SQLite, the tests) the setting is 0 and this steps aside.
    """

    def __init__(self, get_response):
        limit = settings.RUNSERVER_MAX_REQUESTS
        if limit <= 0:
            raise MiddlewareNotUsed
        self.get_response = get_response
        self.slots = threading.BoundedSemaphore(limit)
        self.held = threading.local()
        request_finished.connect(self._finished)

    def __call__(self, request):
        if not self.slots.acquire(timeout=SLOT_WAIT_SECONDS):
            response = HttpResponse(
                _(
                    "The development server is serving as many requests as it may at once; "
                    "try again in a moment."
                ),
                status=503,
                content_type="text/plain; charset=utf-8",
            )
            response["Retry-After"] = "5"
            return response
        self.held.slot = True
        try:
            return self.get_response(request)
        except BaseException:
            self._finished()
            raise

    def _finished(self, **kwargs) -> None:
        """Frees this thread's slot, once (the response's close sends request_finished)."""
        if getattr(self.held, "slot", False):
            self.held.slot = False
            self.slots.release()
