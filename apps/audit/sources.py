"""Which history tables belong to a case, found from the models themselves.

A tracked model belongs to a case when a chain of foreign keys leads from it
to ``ProcurementCase`` (``apps.cases.records.case_path``).
Apps installed later are included without listing them here; an app that is
not installed is simply absent. Shared records (vendors, templates) belong to
no single case and are left out.
"""

from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db import connection
from django.db.models import Model, QuerySet

from apps.audit.chain import tracked_history_models
from apps.cases.records import case_path


@dataclass(frozen=True)
class HistorySource:
    """One tracked model's history, and how its rows are tied to a case."""

    key: str
    model: type[Model]
    history_model: type[Model]
    case_path: str | None

    @property
    def label(self) -> str:
        return str(self.model._meta.verbose_name)

    @property
    def label_plural(self) -> str:
        return str(self.model._meta.verbose_name_plural)

    @property
    def view_permission(self) -> str:
        return f"{self.model._meta.app_label}.view_{self.model._meta.model_name}"

    def for_case(self, case) -> QuerySet:
        manager = self.history_model._base_manager
        if self.case_path == "":
            return manager.filter(**{self.model._meta.pk.attname: case.pk})
        # Only case sources (case_sources()) are asked for a case's rows.
        assert self.case_path is not None
        return manager.filter(**{self.case_path: case.pk})

    def for_record(self, object_id) -> QuerySet:
        return self.history_model._base_manager.filter(**{self.model._meta.pk.attname: object_id})


@cache
def all_sources() -> tuple[HistorySource, ...]:
    """Every tracked model, case-linked or not, keyed ``app_label.model``."""
    sources = []
    for history_model in tracked_history_models():
        # django-simple-history sets instance_type on the history model it
        # builds at run time; it ships no type information for it.
        model: type[Model] = history_model.instance_type  # type: ignore[attr-defined]
        sources.append(
            HistorySource(
                key=model._meta.label_lower,
                model=model,
                history_model=history_model,
                case_path=case_path(model),
            )
        )
    return tuple(sources)


def source_by_key(key: str) -> HistorySource | None:
    return next((source for source in all_sources() if source.key == key), None)


def sources_of(querysets: list[QuerySet]) -> list[tuple[HistorySource, QuerySet]]:
    """Each history queryset with the source of its table, for ``Timeline``."""
    by_model = {source.history_model: source for source in all_sources()}
    return [(by_model[queryset.model], queryset) for queryset in querysets]


def case_sources() -> list[HistorySource]:
    return [source for source in all_sources() if source.case_path is not None]


def case_sources_for(actor) -> list[HistorySource]:
    """The case sources ``actor`` may read (all of them without an actor)."""
    return [source for source in case_sources() if may_read(actor, source)]


def case_history_sources(case, *, actor=None) -> list[tuple[HistorySource, QuerySet]]:
    """History querysets of a case and the records hanging from it (those ``actor`` may read)."""
    return [(source, source.for_case(case)) for source in case_sources_for(actor)]


@cache
def case_link(source: HistorySource) -> tuple[str, str]:
    """How a case source's history table reaches its case, in SQL: the table (as ``h``)
    with the records it hangs from joined on, and the column holding the case's id.

    The same joins as ``for_case`` (a clause's row through its checklist and offer),
    worked out once, for the timeline's pages, which read every table of a case.
    """
    quote = connection.ops.quote_name
    history = source.history_model._meta
    tables = f"{quote(history.db_table)} h"
    if source.case_path == "":
        return tables, f"h.{quote(str(source.model._meta.pk.column))}"
    assert source.case_path is not None
    names = source.case_path.split("__")
    meta, alias = history, "h"
    for depth, name in enumerate(names[:-1]):
        # A foreign key (case_path follows nothing else); the stubs type it as any field.
        hop: Any = meta.get_field(name)
        target = hop.target_field.model._meta
        joined = f"j{depth}"
        tables += (
            f" INNER JOIN {quote(target.db_table)} {joined}"
            f" ON {joined}.{quote(hop.target_field.column)} = {alias}.{quote(hop.column)}"
        )
        meta, alias = target, joined
    last: Any = meta.get_field(names[-1])
    return tables, f"{alias}.{quote(last.column)}"


def case_history_querysets(case) -> list[QuerySet]:
    """The history of the case and of every record that hangs from it: the one source.

    The case timeline, its history page, the packet and the export all read
    this, so a tracked model tied to a case can be left out of none of them.
    """
    return [source.for_case(case) for source in case_sources()]


def may_read(actor, source: HistorySource) -> bool:
    """Auditors browse every history (docs/roles.md); others the record types they may view."""
    return (
        actor is None
        or actor.has_perm("cases.view_history")
        or actor.has_perm(source.view_permission)
    )
