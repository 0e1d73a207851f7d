"""How a record hangs from its case: the one walk, from a model up to ``ProcurementCase``.

A record belongs to a case when a chain of foreign keys leads from it to the case
(an offer's ``case``, a score entry's ``scorecard__offer__case``, a waiver's
``item__checklist__offer__case``…). The case's history (``apps.audit.sources``)
filters each history table by this path; the stored standing
(``apps.casework.standing``) follows it from a written record to the cases whose
standing the write makes stale. Shared records (vendors, templates) hang from no
single case.
"""

from collections import deque
from functools import cache

from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db.models import Field, Model

from apps.cases.models import ProcurementCase

MAX_HOPS = 4


def _foreign_keys(model: type[Model]) -> list[Field]:
    return [
        field
        for field in model._meta.concrete_fields
        if field.is_relation and (field.many_to_one or field.one_to_one)
    ]


@cache
def case_path(model: type[Model]) -> str | None:
    """The shortest chain of foreign keys from ``model`` to its case, as a lookup
    (``"scorecard__offer__case"``); ``""`` for the case itself, None when it hangs from
    no case."""
    if model is ProcurementCase:
        return ""
    passed_by = (get_user_model(), ContentType)
    queue: deque[tuple[type[Model], list[str]]] = deque([(model, [])])
    seen = {model}
    while queue:
        current, path = queue.popleft()
        if len(path) >= MAX_HOPS:
            continue
        for field in _foreign_keys(current):
            target = field.related_model
            if target is ProcurementCase:
                return "__".join([*path, field.name])
            if target in seen or target in passed_by or not isinstance(target, type):
                continue
            seen.add(target)
            queue.append((target, [*path, field.name]))
    return None


def cases_of(record: Model) -> set[int] | None:
    """The cases a record hangs from, through each of its foreign keys; None when it
    hangs from none (then any case may read it) or the record it hangs from is gone."""
    if isinstance(record, ProcurementCase):
        return {record.pk}
    found: set[int] = set()
    for field in _foreign_keys(type(record)):
        value = getattr(record, field.attname, None)
        target = field.related_model
        if value is None or not isinstance(target, type):
            continue
        if target is ProcurementCase:
            found.add(value)
            continue
        path = case_path(target)
        if not path:
            continue
        case_pk = target._base_manager.filter(pk=value).values_list(path, flat=True).first()
        if case_pk is None:  # the record it hangs from is gone too: be safe
            return None
        found.add(case_pk)
    return found or None
