"""Tamper evidence (issue 7 part 4): history rows are chained; changes behind the app are found."""

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from apps.audit import chain
from apps.audit.chain import late_columns, row_digest, row_fields, tracked_history_models
from apps.audit.models import ChainEntry, ChainHead, ChainVerification
from apps.audit.verification import Kind, verify_chain
from apps.cases.models import ProcurementCase
from apps.cases.services import case_update
from apps.offers.models import Offer
from tests.audit.tampering import raw_delete, raw_insert_copy, raw_update, triggers_off
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.postgres

HistoricalCase = ProcurementCase.history.model
HistoricalOffer = Offer.history.model


@pytest.fixture
def world(priya):
    case = make_case(priya, name="Chained")
    offer = make_offer(priya, case, spec=FULL_SPEC)
    case = case_update(actor=priya, case=case, fields={"requirements": "64 cards"}, reason="Sized")
    return {"case": case, "offer": offer}


def _case_rows(case):
    """The case's first history row (created) and its last (the "Sized" edit)."""
    rows = list(HistoricalCase.objects.filter(id=case.pk).order_by("history_id"))
    return rows[0], rows[-1]


def test_every_history_row_written_by_the_app_is_chained(world):
    tables = set(connection.introspection.table_names())
    for model in tracked_history_models():
        if model._meta.db_table not in tables:
            continue
        ids = set(model._base_manager.values_list("pk", flat=True))
        chained = set(
            ChainEntry.objects.filter(
                content_type__app_label=model._meta.app_label,
                content_type__model=model._meta.model_name,
            ).values_list("history_id", flat=True)
        )
        assert ids == chained, model._meta.label
    head = ChainHead.objects.get()
    last = ChainEntry.objects.order_by("-seq").first()
    assert (head.seq, head.entry_hash) == (last.seq, last.entry_hash)
    assert head.seq == ChainEntry.objects.count()


def test_entries_link_each_to_the_previous_and_digest_the_stored_row(world):
    first, second = _case_rows(world["case"])
    entry = ChainEntry.objects.get(
        history_id=second.pk, content_type__model="historicalprocurementcase"
    )
    values = HistoricalCase.objects.filter(pk=second.pk).values(*row_fields(HistoricalCase)).get()
    assert entry.row_digest == row_digest(values, late=late_columns(HistoricalCase))
    previous = ChainEntry.objects.get(seq=entry.seq - 1)
    assert entry.prev_hash == previous.entry_hash
    assert second.history_change_reason == "Sized"
    assert second.history_user.username == "priya"


def test_an_untouched_chain_verifies_and_the_command_says_so(world, capsys):
    report = verify_chain()
    assert report.intact, [p.describe() for p in report.problems]
    assert report.rows == ChainEntry.objects.count() > 0
    call_command("verify_audit_chain")
    out = capsys.readouterr().out
    assert f"chain intact: {report.rows} rows, head {report.head_hash}" in out
    assert ChainVerification.objects.get().intact


def test_an_update_behind_the_apps_back_is_found_and_named(world):
    _created, changed = _case_rows(world["case"])
    raw_update(HistoricalCase, changed.pk, "requirements", "8 cards")
    report = verify_chain()
    assert not report.intact
    first = report.first_problem
    assert (first.kind, first.table, first.history_id) == (
        Kind.ALTERED,
        "cases.historicalprocurementcase",
        changed.pk,
    )
    assert (
        first.seq
        == ChainEntry.objects.get(
            history_id=changed.pk, content_type__model="historicalprocurementcase"
        ).seq
    )


def test_a_change_reason_rewritten_is_found(world):
    _created, changed = _case_rows(world["case"])
    raw_update(HistoricalCase, changed.pk, "history_change_reason", "Nothing to see")
    assert verify_chain().first_problem.kind == Kind.ALTERED


def test_a_deletion_behind_the_apps_back_is_found_and_named(world):
    created, _changed = _case_rows(world["case"])
    raw_delete(HistoricalCase, created.pk)
    first = verify_chain().first_problem
    assert (first.kind, first.history_id) == (Kind.DELETED, created.pk)


def test_an_insertion_behind_the_apps_back_is_found_and_named(world):
    row = HistoricalOffer.objects.filter(id=world["offer"].pk).first()
    new_id = raw_insert_copy(HistoricalOffer, row.pk)
    report = verify_chain()
    assert report.problem_count == 1
    first = report.first_problem
    assert (first.kind, first.table, first.history_id, first.seq) == (
        Kind.INSERTED,
        "offers.historicaloffer",
        new_id,
        None,
    )


def test_the_first_broken_row_is_the_earliest_in_the_chain(world):
    created, changed = _case_rows(world["case"])
    raw_update(HistoricalCase, changed.pk, "name", "Renamed")
    raw_update(HistoricalCase, created.pk, "name", "Renamed")
    report = verify_chain()
    # Both history rows altered, and the live row no longer equals the newest one.
    assert sorted(p.kind for p in report.problems) == [Kind.ALTERED, Kind.ALTERED, Kind.LIVE]
    assert report.first_problem.history_id == created.pk


def test_editing_the_chain_itself_is_found(world):
    entry = ChainEntry.objects.order_by("seq")[2]
    raw_update(ChainEntry, entry.pk, "row_digest", "f" * 64)
    kinds = {p.kind for p in verify_chain().problems}
    assert Kind.LINK in kinds and Kind.ALTERED in kinds


def test_cutting_the_tail_of_the_chain_is_found(world):
    last = ChainEntry.objects.order_by("-seq").first()
    raw_delete(ChainEntry, last.pk)
    kinds = {p.kind for p in verify_chain().problems}
    assert Kind.HEAD in kinds


def test_a_rewritten_chain_no_longer_holds_the_verified_head(world):
    call_command("verify_audit_chain")
    anchor = ChainVerification.objects.get()
    raw_update(ChainEntry, ChainEntry.objects.get(seq=anchor.head_seq).pk, "entry_hash", "e" * 64)
    assert Kind.ANCHOR in {p.kind for p in verify_chain().problems}


def test_the_command_names_the_first_broken_row_and_exits_1(world, capsys):
    _created, changed = _case_rows(world["case"])
    raw_update(HistoricalCase, changed.pk, "requirements", "8 cards")
    with pytest.raises(SystemExit) as exit_:
        call_command("verify_audit_chain")
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert f"cases.historicalprocurementcase, history row {changed.pk}" in err
    assert "altered" in err
    recorded = ChainVerification.objects.get()
    assert not recorded.intact and recorded.first_problem["history_id"] == changed.pk


def test_rows_written_during_a_migrate_are_chained_and_older_unchained_rows_are_not(world):
    row = HistoricalOffer.objects.filter(id=world["offer"].pk).first()
    smuggled = raw_insert_copy(HistoricalOffer, row.pk)
    chain.remember_history_watermarks()
    by_migration = raw_insert_copy(HistoricalOffer, row.pk)
    chain.link_rows_written_by_migrations()
    assert ChainEntry.objects.filter(history_id=by_migration).exists()
    problems = verify_chain().problems
    assert [(p.kind, p.history_id) for p in problems] == [(Kind.INSERTED, smuggled)]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="triggers exist on PostgreSQL only")
@pytest.mark.parametrize("statement", ["UPDATE {t} SET {pk} = {pk}", "DELETE FROM {t}"])
def test_postgresql_refuses_changes_to_history_and_chain(world, statement):
    for model in [HistoricalCase, HistoricalOffer, ChainEntry]:
        sql = statement.format(
            t=connection.ops.quote_name(model._meta.db_table), pk=model._meta.pk.column
        )
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="triggers exist on PostgreSQL only")
def test_postgresql_tampering_with_triggers_disabled_is_still_found(world):
    table = HistoricalCase._meta.db_table
    _created, changed = _case_rows(world["case"])
    with triggers_off(table), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET requirements = 'x' WHERE history_id = %s", [changed.pk])
    assert verify_chain().first_problem.history_id == changed.pk
