"""The verification's sentences, stored in English, worded in the reader's language.

A verification is recorded once and its values are what an approval relies on
(``rules.composition.relied_on``), so the rules store their sentences in English,
whoever uploaded the bundle. Each sentence is built from a registered template
(``phrase``), so the page can read the template and its values back out of the
stored sentence and word it again with ``gettext``: a Chinese reader sees
Chinese, the record stays one. A sentence that matches no template (an older
verification, a value from the bundle) is translated whole where the catalogue has
it, else shown as stored.
"""

import re
from functools import cache

from django.utils.translation import gettext, pgettext

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_PHRASES: dict[str, str | None] = {}  # each registered template → its context, if any


def phrase(template: str, context: str | None = None) -> str:
    """Register an English template the rules store sentences with; returns it unchanged.

    Like ``gettext_noop`` it marks the text for translation; unlike it, the page can
    then recognise a stored sentence built from it and translate it. ``context`` tells a
    short word apart from the same word elsewhere ("accepted" of an HTTP answer).
    """
    _PHRASES[template] = context
    _patterns.cache_clear()
    return template


def phrases(*templates: str) -> tuple[str, ...]:
    return tuple(phrase(t) for t in templates)


@cache
def _load_rules() -> None:
    """The templates are registered where the rules define them: import every rule once."""
    from apps.evidence import inventory, troubleshooting  # noqa: F401
    from apps.evidence.rules import check_modules, composition  # noqa: F401

    check_modules()


@cache
def _patterns() -> tuple[tuple[re.Pattern, str], ...]:
    """Each template with placeholders as an anchored pattern, the most literal text first
    (so "Sent %(sent)s; it was refused as expected." wins over a looser template)."""
    found = []
    for template in _PHRASES:
        if "%(" not in template and "%%" not in template:
            continue
        literal = _PLACEHOLDER.sub("", template).replace("%%", "%")
        parts, pos = [], 0
        for match in _PLACEHOLDER.finditer(template):
            parts.append(re.escape(template[pos : match.start()].replace("%%", "%")))
            parts.append(f"(?P<{match.group(1)}>.+?)")
            pos = match.end()
        parts.append(re.escape(template[pos:].replace("%%", "%")))
        found.append((len(literal), re.compile("".join(parts) + r"\Z", re.DOTALL), template))
    found.sort(key=lambda item: -item[0])
    return tuple((pattern, template) for _n, pattern, template in found)


def _one(text: str) -> str | None:
    """``text`` translated when it is one registered sentence; None when it is none."""
    if text in _PHRASES:
        return _translated(text)
    for pattern, template in _patterns():
        match = pattern.match(text)
        if match:
            values = {name: in_words(value) for name, value in match.groupdict().items()}
            return _translated(template) % values
    return None


def _translated(template: str) -> str:
    context = _PHRASES.get(template)
    return gettext(template) if context is None else pgettext(context, template)


def _segments(pieces: list[str], separator: str) -> str | None:
    """Consecutive pieces, each run of them one known sentence, translated and joined again;
    None unless all are known. The shortest run that is a sentence is taken first (a
    value stops at the separator); a template or a value holding the separator itself
    is found by the longer runs tried after it."""

    @cache
    def from_piece(i: int) -> tuple[str, ...] | None:
        if i == len(pieces):
            return ()
        for j in range(i + 1, len(pieces) + 1):
            head = _one(separator.join(pieces[i:j]))
            if head is not None:
                rest = from_piece(j)
                if rest is not None:
                    return (head, *rest)
        return None

    words = from_piece(0)
    return None if words is None else separator.join(words)


def in_words(text) -> str:
    """A stored sentence of the rules in the active language; other values as they are.

    Several sentences of one check (each ending with a full stop) and lists of measured
    values ("; ") are worded piece by piece.
    """
    if not isinstance(text, str) or not text:
        return "" if text is None else str(text)
    _load_rules()
    # Each way of cutting tries the shortest sentences first and the whole text last, so
    # a placeholder never swallows the sentence after it.
    found = None
    if "; " in text:
        found = _segments(text.split("; "), "; ")
    if found is None and ". " in text:
        found = _segments(re.split(r"(?<=\.) ", text), " ")
    if found is None:
        found = _one(text)
    # A title stored as a plain message (marked with gettext_noop) is translated as one.
    return gettext(text) if found is None else found
