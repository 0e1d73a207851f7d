"""The budget form (with reason and version) and the usage-and-bill upload form."""

from django import forms
from django.core.validators import MaxValueValidator
from django.utils.html import conditional_escape, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _

from apps.core.forms import EditReasonMixin
from apps.costs import spend_rows
from apps.costs.bill_rows import COLUMNS, MAX_MONEY, REQUIRED_COLUMNS
from apps.costs.models import Budget
from apps.costs.services import BUDGET_FIELDS


class ThresholdsField(forms.CharField):
    """ "70, 90, 100" → [70, 90, 100]."""

    def to_python(self, value):
        text = super().to_python(value) or ""  # the field's empty value is ""
        try:
            return [int(part) for part in text.replace(";", ",").split(",") if part.strip()]
        except ValueError:
            raise forms.ValidationError(
                _("Write whole percentages separated by commas, e.g. 70, 90, 100.")
            ) from None

    def prepare_value(self, value):
        if isinstance(value, list):
            return ", ".join(str(v) for v in value)
        return value


class BudgetForm(EditReasonMixin, forms.ModelForm):
    thresholds_pct = ThresholdsField(
        label=_("Alert thresholds (%)"),
        initial="70, 90, 100",
        max_length=200,
        help_text=_(
            "Percent of the daily, the monthly and the total budget at which the owner is told."
        ),
    )

    class Meta:
        model = Budget
        fields = list(BUDGET_FIELDS)

    def __init__(self, *args, case, creating: bool, **kwargs):
        super().__init__(*args, **kwargs)
        offer = self.fields["offer"]
        assert isinstance(offer, forms.ModelChoiceField)  # the form field of a foreign key
        offer.queryset = case.offers.select_related("vendor")
        offer.help_text = _("Used until an offer is approved; the approved offer then wins.")
        self.fields["daily_amount"].help_text = _(
            "Each day's spend from the daily-spend imports is judged against it; blank turns "
            "daily alerts off."
        )
        for name in ("total_amount", "monthly_amount", "daily_amount", "training_max_spend"):
            # The amounts SQLite gives back exactly (see MAX_MONEY).
            amount = self.fields[name]
            assert isinstance(amount, forms.DecimalField)  # the form field of a money column
            # The stubs type max_value as IntegerField's int; a DecimalField takes a Decimal.
            amount.max_value = MAX_MONEY  # type: ignore[assignment]
            amount.validators.append(MaxValueValidator(MAX_MONEY))
        if creating:
            # The first save needs no reason: there is nothing to compare with.
            self.fields["change_reason"].required = False

    def service_fields(self) -> tuple[dict, str, int | None]:
        fields, reason, version = self.edit_parts()
        return {name: fields[name] for name in BUDGET_FIELDS}, reason or "", version


def _columns_help(text, required, optional) -> str:
    """The file's columns as the header row spells them, each set as code."""

    def names(columns):
        return format_html_join(", ", "<code>{}</code>", ((column,) for column in columns))

    return mark_safe(  # noqa: S308 - the text is escaped, the names are format_html'd
        conditional_escape(text) % {"required": names(required), "optional": names(optional)}
    )


class ImportForm(forms.Form):
    file = forms.FileField(label=_("Usage and bill file (CSV, UTF-8)"))
    replace = forms.BooleanField(
        label=_("Replace months already imported"),
        required=False,
        help_text=_("The earlier rows stay in history, marked replaced by this import."),
    )
    note = forms.CharField(label=_("Note"), max_length=500, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["file"].help_text = _columns_help(
            _("Columns: %(required)s; optional: %(optional)s. One row per month, oldest first."),
            REQUIRED_COLUMNS,
            [c for c in COLUMNS if c not in REQUIRED_COLUMNS],
        )


class DailySpendImportForm(forms.Form):
    file = forms.FileField(label=_("Daily spend file (CSV, UTF-8)"))
    note = forms.CharField(label=_("Note"), max_length=500, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["file"].help_text = _columns_help(
            _(
                "Columns: %(required)s; optional: %(optional)s. One row per charge; times in "
                "ISO 8601 with their offset from UTC (2026-03-04T23:30:00Z), or a day "
                "(2026-03-04)."
            ),
            spend_rows.REQUIRED_COLUMNS,
            spend_rows.OPTIONAL_COLUMNS,
        )
