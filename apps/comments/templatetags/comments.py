"""Comments where records are shown: a record's thread inline, or a link with its count."""

from django import template
from django.urls import reverse
from django.utils.html import escape, linebreaks
from django.utils.safestring import mark_safe

from apps.comments.forms import CommentForm
from apps.comments.selectors import count_key, counts_for, thread_of
from apps.comments.services import MENTION, may_comment, unread_on
from apps.comments.targets import target_of

register = template.Library()


@register.inclusion_tag("comments/_thread.html", takes_context=True)
def comment_thread(context, record):
    """The record's comments and, for those who may comment, the form: for a record's own
    page (two queries)."""
    request = context["request"]
    target = target_of(record)
    user = request.user
    return {
        "request": request,
        "comments": thread_of(record) if user.has_perm("comments.view_comment") else None,
        "form": CommentForm() if may_comment(user, target) else None,
        "action": reverse("comments:thread", args=[target.kind, record.pk]),
        "read_action": reverse("comments:read", args=[target.kind, record.pk]),
        "unread": unread_on(user, record),
        "next": request.get_full_path(),
        "csrf_token": context.get("csrf_token"),
    }


@register.simple_tag
def comment_counts(rows, attribute: str = ""):
    """``{% comment_counts rows "item" as counts %}``: the counts of the records (or of
    each row's ``attribute``), in one query."""
    records = [getattr(row, attribute) if attribute else row for row in rows]
    return counts_for(records)


@register.inclusion_tag("comments/_link.html", takes_context=True)
def comments_link(context, record, counts):
    user = context["request"].user
    if not user.has_perm("comments.view_comment"):
        return {"url": None}
    target = target_of(record)
    return {
        "url": reverse("comments:thread", args=[target.kind, record.pk]),
        "count": counts.get(count_key(record), 0),
    }


@register.filter
def with_mentions(body: str) -> str:
    """The comment's text, escaped, paragraphs kept, each @mention set in bold."""
    escaped = escape(body)
    marked = MENTION.sub(lambda m: f'<strong class="mention">@{m.group(1)}</strong>', escaped)
    return mark_safe(linebreaks(marked, autoescape=False))  # noqa: S308 - escaped above
