"""The one path by which tracked records are written.

Every write goes through ``tracked_create`` / ``tracked_update`` /
``tracked_delete`` so that it is validated, attributed to an actor, given a
change reason in history, and checked against concurrent edits, in one
transaction. Queryset ``update()`` and bulk writes skip history and are never
used on tracked models (``tests/core/test_no_bulk_writes.py`` enforces it).
"""

from typing import Any, TypeVar

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models, transaction
from django.utils.translation import gettext as _

from apps.core.models import TrackedModel

M = TypeVar("M", bound=models.Model)
T = TypeVar("T", bound=TrackedModel)


class ConcurrentEditError(Exception):
    """The record changed since the editor loaded it."""

    def __init__(self, current: TrackedModel, expected_version: int) -> None:
        self.current = current
        self.expected_version = expected_version
        super().__init__(
            f"{current._meta.verbose_name} was changed by someone else "
            f"(version {current.version}, you edited version {expected_version})"
        )


class StateConflict(ValidationError):
    """The record is no longer in a state that allows this write (someone else moved it).

    A ``ValidationError``, so forms show it like any refusal; the API answers 409.
    """


# Every refusal a service raises at the person who asked: a view catches these
# and shows them on its form; anything else is a fault and answers 500.
SERVICE_ERRORS = (ValidationError, ConcurrentEditError, PermissionDenied)


def _attribute(instance: models.Model, *, actor: Any, reason: str) -> None:
    # simple-history reads these two attributes when it writes the history row;
    # setting them here attributes writes made outside a request (commands,
    # Celery tasks) as well as inside one. simple-history ships no types, so no
    # stub declares these attributes on Model.
    instance._history_user = actor  # type: ignore[attr-defined]
    instance._change_reason = reason  # type: ignore[attr-defined]


def tracked_create(model: type[M], *, actor: Any, reason: str = "Created", **fields: Any) -> M:
    instance = model(**fields)
    with transaction.atomic():
        instance.full_clean()
        _attribute(instance, actor=actor, reason=reason)
        instance.save()
    return instance


def tracked_update(
    instance: T,
    *,
    actor: Any,
    reason: str,
    fields: dict[str, Any],
    expected_version: int | None = None,
) -> T:
    if not reason or not reason.strip():
        raise ValidationError({"change_reason": _("Say why this record is being changed.")})
    with transaction.atomic():
        current = type(instance)._default_manager.select_for_update().get(pk=instance.pk)
        if expected_version is not None and current.version != expected_version:
            raise ConcurrentEditError(current, expected_version)
        for name, value in fields.items():
            setattr(current, name, value)
        current.version += 1
        current.full_clean()
        _attribute(current, actor=actor, reason=reason.strip())
        current.save()
    return current


def tracked_delete(instance: models.Model, *, actor: Any, reason: str) -> None:
    if not reason or not reason.strip():
        raise ValidationError({"change_reason": _("Say why this record is being deleted.")})
    with transaction.atomic():
        _attribute(instance, actor=actor, reason=reason.strip())
        instance.delete()
