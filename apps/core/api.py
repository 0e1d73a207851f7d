"""API plumbing shared by every app: error shapes and base classes."""

from collections.abc import Callable, Mapping
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousFileOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Model
from django.utils.translation import gettext as _
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from apps.core.bounds import CHANGE_REASON_MAX_LENGTH
from apps.core.middleware import (
    RETRY_AFTER_SECONDS,
    duplicate_message,
    is_duplicate,
    is_out_of_range,
)
from apps.core.parsers import BodyTooLarge
from apps.core.services import ConcurrentEditError, StateConflict
from apps.core.storage import StorageUnavailable, unavailable_message


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if is_out_of_range(exc):
        # An id or number no database column can hold: no such record.
        exc = exceptions.NotFound()
    if isinstance(exc, StorageUnavailable):
        # The file store is down: nothing was stored, and sending again later works.
        return Response(
            {"detail": unavailable_message()},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    if is_duplicate(exc):
        # Two clients created the same record at once: the second one lost, wholly.
        return Response({"detail": duplicate_message()}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, RequestDataTooBig):
        exc = BodyTooLarge()
    elif isinstance(exc, SuspiciousFileOperation):
        # An uploaded file's name from which storage can derive no safe name, such as " ".
        exc = exceptions.ValidationError({"file": [_("This file name cannot be used.")]})
    elif isinstance(exc, StateConflict):
        # Someone else moved the record first: a conflict, not a malformed request.
        return Response(exc.message_dict, status=status.HTTP_409_CONFLICT)
    elif isinstance(exc, DjangoValidationError):
        detail = (
            exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        )
        exc = exceptions.ValidationError(detail)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    elif isinstance(exc, ConcurrentEditError):
        return Response(
            {
                "detail": str(exc),
                "current_version": exc.current.version,
                "expected_version": exc.expected_version,
            },
            status=status.HTTP_409_CONFLICT,
        )
    return drf_exception_handler(exc, context)


class VersionRequired(exceptions.APIException):
    """428: an edit of an existing record that does not say which version it edited."""

    status_code = status.HTTP_428_PRECONDITION_REQUIRED
    default_code = "version_required"


def version_edited(data: Mapping[str, Any], *, editing: bool) -> int | None:
    """The version of the record the client edited; required to change one that exists.

    Without it a change would overwrite whatever someone else saved in between
    (last write wins), so such an edit is refused with 428.
    """
    version = data.get("version")
    if editing and version is None:
        raise VersionRequired(
            {
                "version": [
                    _(
                        'Send the version of the record you edited (its "version" field), '
                        "so that a change someone else saved meanwhile is not overwritten."
                    )
                ]
            }
        )
    return version


class TrackedSerializer(serializers.ModelSerializer):
    """Adds the optimistic-lock version and, on edits, a required change reason."""

    version = serializers.IntegerField(
        required=False,
        help_text=(
            "Version the client edited: required on edits (missing: 428); "
            "a stale version is refused with 409."
        ),
    )
    change_reason = serializers.CharField(
        write_only=True,
        required=False,
        max_length=CHANGE_REASON_MAX_LENGTH,
        help_text="Why this record is being changed (required on edits).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if self.instance is not None and not (attrs.get("change_reason") or "").strip():
            raise serializers.ValidationError(
                {"change_reason": _("Say why this record is changed.")}
            )
        version_edited(attrs, editing=self.instance is not None)
        return attrs


class TrackedViewSetMixin:
    """Routes creates and edits through the app's services.

    Subclasses implement ``perform_service_create(serializer)`` and
    ``perform_service_update(serializer, fields, reason, version)``; the
    serializer never saves a tracked model itself.
    """

    perform_service_create: Callable[[dict[str, Any]], Model]
    perform_service_update: Callable[[Any, dict[str, Any], str, int | None], Model]

    def perform_create(self, serializer: serializers.BaseSerializer) -> None:
        data = dict(serializer.validated_data)
        data.pop("change_reason", None)
        data.pop("version", None)
        serializer.instance = self.perform_service_create(data)

    def perform_update(self, serializer: serializers.BaseSerializer) -> None:
        data = dict(serializer.validated_data)
        reason = data.pop("change_reason", "")
        version = data.pop("version", None)
        serializer.instance = self.perform_service_update(
            serializer.instance, data, reason, version
        )
