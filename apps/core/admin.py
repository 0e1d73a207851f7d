"""Admin pages of tracked records: they show everything and write only as the app does.

Two kinds of page, one for each kind of record:

- ``RecordAdmin``: decisions, sign-offs, waivers, published versions and what
  was received or sent. The admin reads them; it never adds, changes, reverts
  or deletes one. They are made in the app, by the person whose judgement
  they record.
- ``TrackedAdmin``: everything else. An edit goes through the app's own
  service for the model (``update``), so it is validated as in the app, needs
  a reason, names the version it was made against (a stale one is refused),
  bumps the version and writes one history row. Nothing is deleted, and only
  a model whose admin names a create service (``create``) can be added.

Webhooks are the administrators' own settings, not records: they add, change and
delete them; each attempt at a delivery is shown read-only, on its webhook's page and
in its own list.

simple-history's "revert" page saves a past version with a plain ``save()``
and, even on POST, checks only that the user may view the record: both kinds
refuse it.
"""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from apps.core.forms import stale_edit_message
from apps.core.models import FileIntegrityAlarm, NotificationEvent, Webhook, WebhookDelivery
from apps.core.services import ConcurrentEditError, tracked_update


class ReadOnlyInline(admin.TabularInline):
    """Rows shown inside their parent's page; each is edited on its own page, if at all."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


def _holds_no_key(model: type[models.Model], value: str) -> bool:
    """Whether an id from the URL is one the model's primary key cannot hold."""
    try:
        model._meta.pk.to_python(unquote(value))
    except ValidationError:
        return True
    return False


class _NoRevert(SimpleHistoryAdmin):
    def revert_disabled(self, request, obj=None) -> bool:
        return True

    # simple-history looks the URL's ids up as given, and one the key cannot hold
    # ("abc") raised a ValueError there, a 500: it names no record, so it is a 404.
    def history_view(self, request, object_id, extra_context=None):
        if _holds_no_key(self.model, object_id):
            raise Http404
        return super().history_view(request, object_id, extra_context)

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        if request.method != "GET":
            raise PermissionDenied
        history = getattr(self.model, self.model._meta.simple_history_manager_attribute)
        if _holds_no_key(self.model, object_id) or _holds_no_key(history.model, version_id):
            raise Http404
        return super().history_form_view(request, object_id, version_id, extra_context)

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class RecordAdmin(_NoRevert, SimpleHistoryAdmin):
    """A record the admin may read but never add, change, revert or delete."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class TrackedChangeForm(forms.ModelForm):
    """The admin's change form: the record's fields, why they change, and the version edited."""

    change_reason = forms.CharField(
        label=_("Reason for this change"),
        max_length=500,
        help_text=_("Kept in the audit history with your name and the time."),
    )
    # Not named ``version``: that model field is not editable, so a ModelForm
    # may not list it.
    edited_version = forms.IntegerField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["edited_version"].initial = self.instance.version

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        edited = cleaned.get("edited_version")
        # The admin loaded the instance from the database for this request.
        if edited is not None and edited != self.instance.version:
            raise ValidationError(stale_edit_message(self.instance.version, edited), code="stale")
        return cleaned


class TrackedAdmin(_NoRevert, SimpleHistoryAdmin):
    """Edits go through the app's service: a reason, a version check, one history row."""

    form = TrackedChangeForm
    add_form = forms.ModelForm
    # The fields the model's update service accepts; every other field is shown read-only.
    editable_fields: tuple[str, ...] = ()

    def update(self, request: HttpRequest, obj: Any, *, fields: dict, reason: str, version: int):
        """Write an edit; ``obj`` is the stored record. Subclasses call the app's service."""
        return tracked_update(
            obj, actor=request.user, reason=reason, fields=fields, expected_version=version
        )

    def create(self, request: HttpRequest, *, fields: dict) -> models.Model:
        raise PermissionDenied  # only where a subclass names the app's create service

    def has_add_permission(self, request) -> bool:
        return type(self).create is not TrackedAdmin.create and super().has_add_permission(request)

    def get_fields(self, request, obj=None) -> list[str]:
        if obj is None:
            return list(self.editable_fields)
        shown = [
            f.name
            for f in self.model._meta.concrete_fields
            if not f.auto_created and f.name not in self.editable_fields
        ]
        return [*self.editable_fields, *shown, "change_reason", "edited_version"]

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        if obj is None:
            return []
        return [
            name
            for name in self.get_fields(request, obj)
            if name not in (*self.editable_fields, "change_reason", "edited_version")
        ]

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = self.add_form
        return super().get_form(request, obj, change=change, **kwargs)

    def save_model(self, request, obj, form, change) -> None:
        fields = {name: form.cleaned_data[name] for name in self.editable_fields}
        if change and not set(self.editable_fields) & set(form.changed_data):
            return  # nothing of the record changed: no write, no version, no history row
        if change:
            # ``obj`` already carries the submitted values; services compare with the stored row.
            stored = type(obj)._default_manager.get(pk=obj.pk)
            saved = self.update(
                request,
                stored,
                fields=fields,
                reason=form.cleaned_data["change_reason"],
                version=form.cleaned_data["edited_version"],
            )
        else:
            saved = self.create(request, fields=fields)
        for field in obj._meta.concrete_fields:
            setattr(obj, field.attname, getattr(saved, field.attname))
        obj._state.adding = False
        obj._state.db = saved._state.db

    def save_related(self, request, form, formsets, change) -> None:
        # Inline rows are read-only (ReadOnlyInline) and no tracked model has an
        # m2m field: nothing is saved here. commit=False only lists what the
        # rows would change, for the admin's log; a row that would is refused.
        for formset in formsets:
            formset.save(commit=False)
            if formset.new_objects or formset.changed_objects or formset.deleted_objects:
                raise PermissionDenied

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        # The admin runs the whole view in one transaction: a refusal raised by
        # the service leaves it, so nothing of the edit is kept.
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ConcurrentEditError as error:
            message = stale_edit_message(error.current.version, error.expected_version)
        except ValidationError as error:
            message = "; ".join(error.messages)
        self.message_user(request, message, messages.ERROR)
        return _back(request)


def _back(request: HttpRequest) -> HttpResponse:
    return HttpResponseRedirect(request.get_full_path())


@admin.register(FileIntegrityAlarm)
class FileIntegrityAlarmAdmin(RecordAdmin):
    """Raised when a download finds a stored file changed; the admin cannot clear or remove it."""

    list_display = ["record", "case", "detected_at", "resolved_at"]
    list_select_related = ["case"]
    list_filter = ["resolved_at"]


class WebhookForm(forms.ModelForm):
    url = forms.URLField(
        label=_("address"),
        max_length=500,
        assume_scheme="https",
        help_text=Webhook._meta.get_field("url").help_text,
    )
    events = forms.MultipleChoiceField(
        label=_("events"),
        choices=NotificationEvent.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text=_("What is posted to this address."),
    )

    class Meta:
        model = Webhook
        fields = ["name", "url", "secret", "events", "active"]


# The webhook's page shows its latest attempts; the delivery log lists them all.
SHOWN_ATTEMPTS = 50


class WebhookDeliveryInline(admin.TabularInline):
    """The latest attempts, newest first; each read-only."""

    model = WebhookDelivery
    shown = ("attempted_at", "event", "attempt", "status_code", "delivered", "error", "retry_at")
    fields = shown
    readonly_fields = shown
    ordering = ["-attempted_at", "-pk"]
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_queryset(self, request):
        rows = super().get_queryset(request)
        match = request.resolver_match
        webhook = match.kwargs.get("object_id") if match is not None else None
        if webhook is None or _holds_no_key(Webhook, webhook):
            return rows.none()
        latest = rows.filter(webhook_id=unquote(webhook)).order_by("-attempted_at", "-pk")
        return rows.filter(pk__in=list(latest.values_list("pk", flat=True)[:SHOWN_ATTEMPTS]))


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    form = WebhookForm
    list_display = ["name", "url", "active", "created_at"]
    list_filter = ["active"]
    search_fields = ["name", "url"]
    inlines = [WebhookDeliveryInline]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    """The delivery log: every attempt, with the receiver's answer. Nobody edits it."""

    list_display = ["attempted_at", "webhook", "event", "attempt", "status_code", "delivered"]
    list_select_related = ["webhook"]
    list_filter = ["delivered", "event", "webhook"]
    search_fields = ["delivery", "error"]
    date_hierarchy = "attempted_at"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
