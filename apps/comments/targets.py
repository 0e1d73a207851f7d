"""The records people may comment on: how each is found, named, read and opened.

A record is commented on where it is shown; its thread (``comments:thread``)
is the one page that holds them all, and the record's page links to it.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.apps import apps as django_apps
from django.db.models import Model
from django.http import Http404
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _


@dataclass(frozen=True)
class Target:
    kind: str  # in the thread's URL
    model: str  # "app_label.ModelName"
    label: object  # what the record is, for a heading: "Offer"
    case_path: str  # from the record to its case's id
    related: tuple[str, ...]  # read with the record, for its name and its page
    name: Callable[[Any], str]
    page: Callable[[Any], str]

    @property
    def model_class(self) -> type[Model]:
        return django_apps.get_model(self.model)

    @property
    def view_permission(self) -> str:
        meta = self.model_class._meta
        return f"{meta.app_label}.view_{meta.model_name}"

    def case_id(self, record: Model) -> int:
        value = record
        for step in self.case_path.split("__"):
            value = getattr(value, step)
        return int(value)  # type: ignore[call-overload]

    def get(self, pk: int) -> Model:
        found = self.model_class._default_manager.select_related(*self.related).filter(pk=pk)
        record = found.first()
        if record is None:
            raise Http404
        return record


def _answer_name(answer) -> str:
    question = answer.question
    label = str(question.label) if question else answer.question_key
    return f"{label} · {_assessment_name(answer.assessment)}"


def _assessment_name(assessment) -> str:
    scope = str(assessment.offer.vendor) if assessment.offer_id else gettext("whole case")
    return f"{gettext('Data-export assessment')} · {scope}"


TARGETS = (
    Target(
        "offer",
        "offers.Offer",
        _("Offer"),
        "case_id",
        ("vendor", "case"),
        lambda offer: str(offer),
        lambda offer: reverse("offers:detail", args=[offer.pk]),
    ),
    Target(
        "clause",
        "contracts.ChecklistItem",
        _("Contract clause"),
        "checklist__offer__case_id",
        ("checklist__offer__vendor",),
        lambda item: f"{item.number}. {item.title} · {item.checklist.offer}",
        lambda item: (
            reverse("offers:detail", args=[item.checklist.offer_id]) + f"#clause-{item.key}"
        ),
    ),
    Target(
        "assessment",
        "assessments.DataExportAssessment",
        _("Data-export assessment"),
        "case_id",
        ("offer__vendor", "case"),
        _assessment_name,
        lambda assessment: reverse("assessments:detail", args=[assessment.pk]),
    ),
    Target(
        "answer",
        "assessments.AssessmentAnswer",
        _("Assessment answer"),
        "assessment__case_id",
        ("assessment__offer__vendor",),
        _answer_name,
        lambda answer: (
            reverse("assessments:detail", args=[answer.assessment_id])
            + f"#question-{answer.question_key}"
        ),
    ),
    Target(
        "matrix",
        "access.AccessMatrix",
        _("Access matrix"),
        "case_id",
        ("case",),
        lambda matrix: f"{gettext('Access matrix')} · {matrix.case}",
        lambda matrix: reverse("access:matrix", args=[matrix.case_id]),
    ),
    Target(
        "evidence",
        "evidence.EvidenceBundle",
        _("Evidence bundle"),
        "case_id",
        ("case", "offer__vendor"),
        lambda bundle: (
            f"{gettext('Evidence')} {bundle.sha256[:12]} · {bundle.offer or bundle.case}"
        ),
        lambda bundle: reverse("evidence:detail", args=[bundle.pk]),
    ),
    Target(
        "approval",
        "approvals.Approval",
        _("Approval decision"),
        "case_id",
        ("case", "offer__vendor"),
        lambda approval: (
            f"{approval.get_decision_display()} · {approval.offer or approval.case}"
            f" · {approval.decided_at:%Y-%m-%d}"
        ),
        lambda approval: (
            reverse("approvals:case", args=[approval.case_id]) + f"#decision-{approval.pk}"
        ),
    ),
)


@cache
def _by_kind() -> dict[str, Target]:
    return {target.kind: target for target in TARGETS}


@cache
def _by_model() -> dict[type[Model], Target]:
    return {target.model_class: target for target in TARGETS}


def target_named(kind: str) -> Target:
    try:
        return _by_kind()[kind]
    except KeyError:
        raise Http404 from None


def target_for_type(content_type) -> Target | None:
    """The target of a content type, or None for a type nobody comments on."""
    model = content_type.model_class()
    return _by_model().get(model) if model is not None else None


def target_of(record: Model) -> Target:
    """The target ``record`` is; a record nobody may comment on is a programming error."""
    return _by_model()[type(record)]
