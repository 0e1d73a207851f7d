"""Request-level safety nets."""

import logging

from django.db import DataError, IntegrityError
from django.http import Http404
from django.shortcuts import render
from django.utils.translation import gettext as _

from apps.core.storage import StorageUnavailable, unavailable_message

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 60


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
