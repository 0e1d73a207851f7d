"""Writes: a comment, the people it mentions, and a mention read."""

import logging
import re

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Model
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.comments.models import Comment, Mention
from apps.comments.targets import Target, target_of
from apps.core.models import NotificationEvent
from apps.core.notifications import notify
from apps.core.services import tracked_create

logger = logging.getLogger(__name__)

# "@priya", "@wang.wei", "(@li-na)"; not an e-mail address's "@".
MENTION = re.compile(r"(?<![\w.@+-])@([\w][\w.+-]*[\w]|[\w])")


def mentioned_usernames(body: str) -> list[str]:
    """The user names ``body`` mentions, each once, in the order written."""
    return list(dict.fromkeys(MENTION.findall(body)))


def may_read(person, target: Target) -> bool:
    return (
        person.is_active
        and person.has_perm("comments.view_comment")
        and person.has_perm(target.view_permission)
    )


def may_comment(person, target: Target) -> bool:
    return person.has_perm("comments.add_comment") and person.has_perm(target.view_permission)


def _mentioned_people(body: str, target: Target) -> list:
    names = mentioned_usernames(body)
    if not names:
        return []
    found = {
        person.username: person
        for person in get_user_model().objects.filter(username__in=names, is_active=True)
    }
    unknown = [name for name in names if name not in found]
    if unknown:
        raise ValidationError(
            {
                "body": _("Nobody here is called %(names)s: check the user names.")
                % {"names": ", ".join(f"@{name}" for name in unknown)}
            }
        )
    blind = [name for name in names if not may_read(found[name], target)]
    if blind:
        raise ValidationError(
            {
                "body": _("%(names)s may not read this record, so cannot be told of it.")
                % {"names": ", ".join(f"@{name}" for name in blind)}
            }
        )
    return [found[name] for name in names]


def comment_add(*, actor, record: Model, body: str, for_the_record: bool = False) -> Comment:
    """Add ``actor``'s comment on ``record``; everyone it mentions is told once it is saved.

    Refused whole (nothing saved, nobody told) if the text is empty or names someone
    unknown or someone who may not read the record.
    """
    target = target_of(record)
    if not may_comment(actor, target):
        raise PermissionDenied("comments.add_comment")
    body = (body or "").strip()
    if not body:
        raise ValidationError({"body": _("Write the comment first.")})
    people = _mentioned_people(body, target)
    with translation.override(settings.LANGUAGE_CODE):
        title = target.name(record)[:300]
    with transaction.atomic():
        comment = tracked_create(
            Comment,
            actor=actor,
            reason="Comment added",
            case_id=target.case_id(record),
            target_type=ContentType.objects.get_for_model(record),
            target_id=record.pk,
            title=title,
            author=actor,
            body=body,
            for_the_record=for_the_record,
        )
        for person in people:
            if person != actor:
                Mention.objects.create(comment=comment, person=person)
        # Answering in a thread reads what was said to you there.
        mentions_read(actor, record)
        mentioned = [person for person in people if person != actor]
        if mentioned:
            # Told as each person chose (at once, in the daily digest, or not at all), and
            # to the webhooks that follow mentions.
            notify(
                NotificationEvent.MENTION,
                case=comment.case,
                text=MENTIONED,
                params={"author": _who(actor), "record": title, "excerpt": _excerpt(body)},
                path=reverse("comments:comment", args=[comment.pk]),
                recipients=mentioned,
                actor=actor,
            )
    return comment


MENTIONED = gettext_lazy("%(author)s mentioned you on %(record)s: “%(excerpt)s”")
EXCERPT_CHARS = 300


def _who(person) -> str:
    return person.get_full_name() or person.username


def _excerpt(body: str) -> str:
    """The comment as a notification quotes it: one line, at most 300 characters."""
    line = " ".join(body.split())
    return line if len(line) <= EXCERPT_CHARS else line[: EXCERPT_CHARS - 1] + "…"


def mentions_read(person, record: Model) -> int:
    """Mark what was said to ``person`` on ``record`` as read; returns how many."""
    waiting = list(_unread(person, record))
    for mention in waiting:
        mention.read_at = timezone.now()
        mention.save(update_fields=["read_at"])
    return len(waiting)


def unread_on(person, record: Model) -> bool:
    """Whether something said to ``person`` on ``record`` waits to be read."""
    return _unread(person, record).exists()


def _unread(person, record: Model):
    return Mention.objects.filter(
        person=person,
        read_at__isnull=True,
        comment__target_type=ContentType.objects.get_for_model(record),
        comment__target_id=record.pk,
    )
