"""Request-level safety nets."""

from django.db import DataError
from django.http import Http404


def is_out_of_range(exc: BaseException) -> bool:
    """A number in the URL or query too large for any integer column.

    SQLite raises OverflowError before the query runs; PostgreSQL answers
    "out of range" (a DataError). Either way no such record can exist.
    """
    if isinstance(exc, OverflowError):
        return True
    return isinstance(exc, DataError) and "out of range" in str(exc)


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
