"""Reads of comments, each in a fixed number of queries."""

from collections.abc import Iterable

from django.contrib.contenttypes.models import ContentType
from django.db.models import Count, Model, Q, QuerySet

from apps.comments.models import Comment, Mention


def thread_of(record: Model) -> QuerySet[Comment]:
    """The comments on ``record``, oldest first, with their authors and mentions."""
    return (
        Comment.objects.filter(
            target_type=ContentType.objects.get_for_model(record), target_id=record.pk
        )
        .select_related("author")
        .prefetch_related("mentions__person")
        .order_by("created_at", "pk")
    )


def counts_for(records: Iterable[Model]) -> dict[tuple[int, int], int]:
    """How many comments each record has, keyed by (content type id, pk): one query."""
    records = [record for record in records if record is not None]
    if not records:
        return {}
    types = ContentType.objects.get_for_models(*{type(record) for record in records})
    by_type: dict[int, list[int]] = {}
    for record in records:
        by_type.setdefault(types[type(record)].pk, []).append(record.pk)
    wanted = Q()
    for type_id, pks in by_type.items():
        wanted |= Q(target_type_id=type_id, target_id__in=pks)
    counted = (
        Comment.objects.filter(wanted).values("target_type_id", "target_id").annotate(n=Count("pk"))
    )
    return {(row["target_type_id"], row["target_id"]): row["n"] for row in counted}


def count_key(record: Model) -> tuple[int, int]:
    return (ContentType.objects.get_for_model(record).pk, record.pk)


def unread_mentions(person) -> QuerySet[Mention]:
    return (
        Mention.objects.filter(person=person, read_at__isnull=True)
        .select_related("comment__author", "comment__target_type")
        .order_by("comment__created_at", "pk")
    )


def for_the_record(case) -> QuerySet[Comment]:
    return (
        Comment.objects.filter(case=case, for_the_record=True)
        .select_related("author")
        .order_by("created_at", "pk")
    )
