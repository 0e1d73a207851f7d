"""The API's JSON parser: nesting depth and integer size are bounded, and past the bound a
body is a 400 that says which, never a 500.

The size is bounded before this runs: DRF reads JSON through Django's ``request.body``,
which refuses a declared length over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` before reading it
(``exception_handler`` turns that refusal into a 413 that says so).
"""

import codecs
import json

from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework import exceptions, parsers, status
from rest_framework.utils.json import strict_constant

# API bodies are records holding a list or two; evidence bundles, read by their own
# reader, nest about ten levels. Far deeper is an attack on the parser (Python's
# recursion limit is 1,000 frames), not data.
MAX_DEPTH = 64
# The widest integer column holds 19 digits; the harness's counts and nanoseconds 20.
# Python itself takes up to 4,300 digits, in time quadratic in their number.
MAX_INTEGER_DIGITS = 40


class BodyTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "body_too_large"

    def __init__(self) -> None:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        super().__init__(
            f"The body is larger than the {limit}-byte limit (DATA_UPLOAD_MAX_MEMORY_SIZE)."
        )


def _too_deep() -> exceptions.ParseError:
    return exceptions.ParseError(
        _("JSON parse error - nested more than %(depth)s levels deep.") % {"depth": MAX_DEPTH}
    )


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INTEGER_DIGITS:
        raise exceptions.ParseError(
            _("JSON parse error - an integer has %(digits)s digits; at most %(limit)s are read.")
            % {"digits": digits, "limit": MAX_INTEGER_DIGITS}
        )
    return int(text)


def _check_depth(document) -> None:
    """Walks the containers without recursion: depth 1 is the document itself."""
    stack = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        items = value.values() if isinstance(value, dict) else value
        for item in items:
            if isinstance(item, dict | list):
                if depth + 1 > MAX_DEPTH:
                    raise _too_deep()
                stack.append((item, depth + 1))


def json_document(stream, *, encoding: str, strict: bool = True):
    """The JSON document read from ``stream``; a ParseError (400) names what is wrong."""
    try:
        document = json.load(
            codecs.getreader(encoding)(stream),
            parse_constant=strict_constant if strict else None,
            parse_int=_bounded_int,
        )
    except RecursionError:
        raise _too_deep() from None
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError included
        raise exceptions.ParseError(f"JSON parse error - {error}") from None
    if isinstance(document, dict | list):
        _check_depth(document)
    return document


class JSONParser(parsers.JSONParser):
    """The API's default parser (``DEFAULT_PARSER_CLASSES``): DRF's, with the bounds above."""

    def parse(self, stream, media_type=None, parser_context=None):
        # get_encoding came with DRF 3.18.3; the stubs (3.18.1) predate it.
        encoding = parsers.get_encoding(parser_context or {})  # type: ignore[attr-defined]
        return json_document(stream, encoding=encoding, strict=self.strict)


class UnreadBodyParser(parsers.BaseParser):
    """Accepts a media type whose body the view reads itself from ``request.body``.

    It reads nothing: a session client's CSRF check parses the body before the view runs,
    and a view that keeps the exact bytes (and checks their size first) reads them later.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        return {}


class CSVBodyParser(UnreadBodyParser):
    media_type = "text/csv"
