"""The API's JSON parser: a document nested past Python's recursion limit is a 400, not a 500.

The size is bounded before this runs: DRF reads JSON through Django's ``request.body``,
which refuses a declared length over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` before reading it
(``exception_handler`` turns that refusal into a 413 that says so).
"""

from django.conf import settings
from rest_framework import exceptions, parsers, status


class BodyTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "body_too_large"

    def __init__(self) -> None:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        super().__init__(
            f"The body is larger than the {limit}-byte limit (DATA_UPLOAD_MAX_MEMORY_SIZE)."
        )


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError("JSON parse error - nested too deeply.") from None
