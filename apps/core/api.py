"""API plumbing shared by every app: error shapes and base classes."""

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousFileOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext as _
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from apps.core.middleware import is_out_of_range
from apps.core.parsers import BodyTooLarge
from apps.core.services import ConcurrentEditError


def exception_handler(exc, context):
    if is_out_of_range(exc):
        # An id or number no database column can hold: no such record.
        exc = exceptions.NotFound()
    if isinstance(exc, RequestDataTooBig):
        exc = BodyTooLarge()
    elif isinstance(exc, SuspiciousFileOperation):
        # An uploaded file's name from which storage can derive no safe name, such as " ".
        exc = exceptions.ValidationError({"file": [_("This file name cannot be used.")]})
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


class TrackedSerializer(serializers.ModelSerializer):
    """Adds the optimistic-lock version and, on edits, a required change reason."""

    version = serializers.IntegerField(
        required=False,
        help_text="Version the client edited; a stale version is refused with 409.",
    )
    change_reason = serializers.CharField(
        write_only=True,
        required=False,
        help_text="Why this record is being changed (required on edits).",
    )

    def validate(self, attrs):
        if self.instance is not None and not (attrs.get("change_reason") or "").strip():
            raise serializers.ValidationError(
                {"change_reason": _("Say why this record is changed.")}
            )
        return attrs


class TrackedViewSetMixin:
    """Routes creates and edits through the app's services.

    Subclasses implement ``perform_service_create(serializer)`` and
    ``perform_service_update(serializer, fields, reason, version)``; the
    serializer never saves a tracked model itself.
    """

    def perform_create(self, serializer):
        data = dict(serializer.validated_data)
        data.pop("change_reason", None)
        data.pop("version", None)
        serializer.instance = self.perform_service_create(data)

    def perform_update(self, serializer):
        data = dict(serializer.validated_data)
        reason = data.pop("change_reason", "")
        version = data.pop("version", None)
        serializer.instance = self.perform_service_update(
            serializer.instance, data, reason, version
        )
