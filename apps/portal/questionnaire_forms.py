"""Forms of the questionnaire library, and the vendor's form for one sent questionnaire.

The vendor's form takes each answer as typed (every field optional); the service reads
and checks them, and refuses a save whole, naming each question it refused.
"""

from decimal import Decimal, InvalidOperation
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from apps.portal.models import (
    DateDirection,
    Direction,
    Question,
    QuestionKind,
    Questionnaire,
)
from apps.portal.questionnaire_selectors import published_versions
from apps.portal.questionnaires import NO, YES


class QuestionnaireForm(forms.Form):
    title = forms.CharField(label=_("Title"), max_length=200)
    purpose = forms.CharField(
        label=_("Purpose"),
        required=False,
        max_length=Questionnaire._meta.get_field("purpose").max_length,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("Why vendors are asked these questions, in a sentence or two."),
    )


def _options_parse(text: str) -> list[dict[str, Any]]:
    """``Label = score`` per line (a line without a score scores 0)."""
    options = []
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        label, _sep, score = line.rpartition("=") if "=" in line else (line, "", "0")
        try:
            value = Decimal(score.strip() or "0")
        except InvalidOperation:
            raise forms.ValidationError(
                _("Write each choice as “label = score”, the score from 0 to 100.")
            ) from None
        options.append({"label": label.strip(), "score": float(value)})
    return options


def options_text(options: list[dict[str, Any]]) -> str:
    return "\n".join(f"{o.get('label')} = {o.get('score')}" for o in options or [])


class QuestionForm(forms.Form):
    text = forms.CharField(label=_("Question"), max_length=500)
    key = forms.SlugField(
        label=_("Key"),
        max_length=60,
        required=False,
        help_text=_(
            "Names the question across versions: keep it when the question carries over "
            "unchanged, so a vendor's earlier answer is offered again. Blank: made from "
            "the question."
        ),
    )
    help_text = forms.CharField(label=_("Help text"), max_length=500, required=False)
    kind = forms.ChoiceField(label=_("Kind of answer"), choices=QuestionKind.choices)
    required = forms.BooleanField(label=_("Required"), required=False, initial=True)
    weight = forms.IntegerField(
        label=_("Weight in the score"), min_value=0, max_value=100, initial=1
    )
    expected_yes = forms.TypedChoiceField(
        label=_("Expected answer (yes or no)"),
        choices=[("", _("Not scored")), ("yes", _("Yes")), ("no", _("No"))],
        coerce=lambda value: value == "yes",
        empty_value=None,
        required=False,
    )
    options = forms.CharField(
        label=_("Choices (one per line, “label = score” from 0 to 100)"),
        required=False,
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 4}),
    )
    unit = forms.CharField(label=_("Unit"), max_length=30, required=False)
    min_value = forms.DecimalField(
        label=_("Smallest number taken"), max_digits=18, decimal_places=4, required=False
    )
    max_value = forms.DecimalField(
        label=_("Largest number taken"), max_digits=18, decimal_places=4, required=False
    )
    threshold_direction = forms.ChoiceField(
        label=_("Expected number"),
        choices=[("", _("Not scored")), *Direction.choices],
        required=False,
    )
    threshold = forms.DecimalField(
        label=_("Threshold"), max_digits=18, decimal_places=4, required=False
    )
    date_direction = forms.ChoiceField(
        label=_("Expected date"),
        choices=[("", _("Not scored")), *DateDirection.choices],
        required=False,
    )
    date_limit = forms.DateField(
        label=_("Date limit"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def clean_options(self) -> list[dict[str, Any]]:
        return _options_parse(self.cleaned_data.get("options", ""))

    @classmethod
    def of(cls, question: Question) -> "QuestionForm":
        initial = {name: getattr(question, name) for name in cls.base_fields if name != "version"}
        initial["options"] = options_text(question.options)
        expected = question.expected_yes
        initial["expected_yes"] = "" if expected is None else ("yes" if expected else "no")
        initial["version"] = question.version
        return cls(initial=initial)


class PublishForm(forms.Form):
    note = forms.CharField(label=_("What this version is for, or what changed"), max_length=500)


class QuestionnairesField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj) -> str:
        return f"{obj.questionnaire.title} — v{obj.number}"


def questionnaires_field() -> forms.Field:
    """The invitation form's choice of published questionnaire versions to include."""
    return QuestionnairesField(
        label=_("Questionnaires to include"),
        queryset=published_versions(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("The vendor answers each one as a section of its own."),
    )


def _answer_field(question: Question) -> forms.Field:
    common: dict[str, Any] = {
        "label": question.text,
        "required": False,
        "help_text": question.help_text,
    }
    if question.kind == QuestionKind.YES_NO:
        return forms.ChoiceField(
            choices=[(YES, _("Yes")), (NO, _("No"))], widget=forms.RadioSelect, **common
        )
    if question.kind == QuestionKind.CHOICE:
        labels = [str(o.get("label")) for o in question.options]
        return forms.ChoiceField(choices=[("", "—"), *[(x, x) for x in labels]], **common)
    if question.kind == QuestionKind.NUMBER:
        if question.unit:
            common["label"] = f"{question.text} ({question.unit})"
        return forms.CharField(
            max_length=40,
            widget=forms.TextInput(attrs={"inputmode": "decimal", "autocomplete": "off"}),
            **common,
        )
    if question.kind == QuestionKind.DATE:
        return forms.CharField(
            max_length=20, widget=forms.DateInput(attrs={"type": "date"}), **common
        )
    return forms.FileField(allow_empty_file=True, **common)


class AnswersForm(forms.Form):
    """One field per question, named by its key."""

    def __init__(self, *args, questions: list[Question], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.questions = questions
        for question in questions:
            self.fields[question.key] = _answer_field(question)

    def typed(self) -> dict[str, str]:
        """What was typed, raw (the service reads and checks it)."""
        return {
            q.key: str(self.data.get(q.key, "") or "")
            for q in self.questions
            if q.kind != QuestionKind.FILE
        }

    def uploads(self) -> dict[str, Any]:
        return {
            q.key: self.files[q.key]
            for q in self.questions
            if q.kind == QuestionKind.FILE and q.key in self.files
        }
