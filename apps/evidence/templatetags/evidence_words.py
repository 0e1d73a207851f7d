"""``{{ check.detail|evidence_words }}``: a stored sentence of the rules, in the reader's words."""

from django import template

from apps.evidence.wording import in_words

register = template.Library()


@register.filter
def evidence_words(value) -> str:
    """The verification stores its sentences in English; the page words them anew."""
    return in_words(value)
