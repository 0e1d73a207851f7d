"""Forms of the audit pages: timeline filters and the export upload."""

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext_lazy as _

from apps.audit.timeline import TimelineFilter
from apps.core.forms import option_tags


def max_export_upload_bytes() -> int:
    return settings.AUDIT_EXPORT_MAX_UPLOAD_BYTES


class TimelineFilterForm(forms.Form):
    """Who, when and which records; submitted by GET so filtered pages can be linked."""

    user = forms.ModelChoiceField(
        label=_("User"),
        queryset=get_user_model().objects.order_by("username"),
        required=False,
        empty_label=_("Anyone"),
    )
    since = forms.DateField(
        label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        label=_("Until"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    area = forms.MultipleChoiceField(
        label=_("Areas"), required=False, widget=forms.CheckboxSelectMultiple
    )
    record_type = forms.MultipleChoiceField(
        label=_("Record types"), required=False, widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args, sources=(), **kwargs):
        super().__init__(*args, **kwargs)
        record_type = self.fields["record_type"]
        assert isinstance(record_type, forms.ChoiceField)
        record_type.choices = [(s.key, s.label_plural) for s in sources]
        self._areas = {s.key: s.model._meta.app_config.verbose_name for s in sources}
        # An area (contracts, evidence, approvals, access...) stands for every kind of
        # record it holds: one box instead of a dozen. A kind can still be chosen alone.
        self._kinds_of_area: dict[str, list[str]] = {}
        names = {}
        for source in sources:
            label = source.model._meta.app_label
            self._kinds_of_area.setdefault(label, []).append(source.key)
            names[label] = source.model._meta.app_config.verbose_name
        if len(names) < 2:
            del self.fields["area"]  # the records of one area: nothing to choose between
        else:
            area = self.fields["area"]
            assert isinstance(area, forms.ChoiceField)
            area.choices = list(names.items())

    def user_options(self) -> str:
        """The ``<option>`` elements of the person filter, the chosen one selected."""
        field = self.fields["user"]
        assert isinstance(field, forms.ModelChoiceField) and field.queryset is not None
        people = [("", field.empty_label or "")]
        people += [(person.pk, str(person)) for person in field.queryset]
        return option_tags(people, self["user"].value())

    def kinds_chosen(self) -> bool:
        """Whether single kinds were chosen (their list is then shown open)."""
        return bool(self.is_valid() and self.cleaned_data.get("record_type"))

    def record_type_groups(self) -> list[tuple[str, list]]:
        """The record-type boxes by the area they belong to, each area once, in the
        order the areas first come: a fieldset each, with the area as its legend."""
        groups: dict[str, list] = {}
        for box in self["record_type"]:
            area = str(self._areas.get(box.data["value"], ""))
            groups.setdefault(area, []).append(box)
        return list(groups.items())

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        since, until = data.get("since"), data.get("until")
        if since and until and until < since:
            self.add_error("until", _("The end of the range is before its start."))
        return data

    def timeline_filter(self) -> TimelineFilter:
        data = self.cleaned_data if self.is_valid() else {}
        return TimelineFilter(
            user_id=data["user"].pk if data.get("user") else None,
            since=data.get("since"),
            until=data.get("until"),
            record_types=tuple(
                dict.fromkeys(
                    [
                        *(
                            key
                            for area in data.get("area") or ()
                            for key in self._kinds_of_area[area]
                        ),
                        *(data.get("record_type") or ()),
                    ]
                )
            ),
        )


class ExportUploadForm(forms.Form):
    file = forms.FileField(label=_("Case export (ZIP)"))

    @classmethod
    def refused(cls, message: str) -> "ExportUploadForm":
        """The form showing ``message`` on its file, for an upload refused before it was read."""
        form = cls(data={})
        form.full_clean()
        form.errors["file"] = form.error_class([message])
        return form

    def clean_file(self):
        upload = self.cleaned_data["file"]
        limit = max_export_upload_bytes()
        # Checked from the upload's recorded size, before a byte of it is read.
        if upload.size > limit:
            raise forms.ValidationError(
                _("The file is %(size)s; exports up to %(limit)s can be checked here.")
                % {"size": filesizeformat(upload.size), "limit": filesizeformat(limit)}
            )
        return upload
