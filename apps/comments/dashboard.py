"""Mentions waiting to be read, on the work list of the person mentioned."""

from datetime import date

from django.urls import reverse
from django.utils.text import Truncator
from django.utils.translation import gettext as _

from apps.comments.selectors import unread_mentions
from apps.comments.services import may_read
from apps.comments.targets import target_for_type
from apps.core.contributions import Item, Section

LIMIT = 50


def dashboard_section(user, *, roles: set[str], today: date):
    """One section in one query; None when nothing waits."""
    if not user.has_perm("comments.view_comment"):
        return None
    section = Section(_("Mentioned in comments"))
    for mention in unread_mentions(user)[:LIMIT]:
        comment = mention.comment
        target = target_for_type(comment.target_type)
        if target is None or not may_read(user, target):
            continue
        author = comment.author.get_full_name() or comment.author.username
        section.items.append(
            Item(
                comment.title,
                _("%(author)s: “%(text)s”")
                % {"author": author, "text": Truncator(comment.body).chars(140)},
                reverse("comments:thread", args=[target.kind, comment.target_id])
                + f"#comment-{comment.pk}",
                "warn",
            )
        )
    return section if section.items else None
