"""No lost updates: two editors saving the same version at once — one wins, one is told.

Runs with real transactions and two threads (two database connections), so on
PostgreSQL the row lock in ``tracked_update`` is what decides the race.
"""

import threading

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import make_case


@pytest.mark.django_db(transaction=True)
def test_two_clients_racing_on_one_version_cannot_both_win(people):
    if connection.vendor != "postgresql":
        # The in-memory SQLite test database locks whole tables without waiting;
        # CI runs this test on PostgreSQL.
        pytest.skip("races are tested on PostgreSQL")
    case = make_case(people["priya"])
    barrier = threading.Barrier(2)
    results = {}

    def editor(username: str, name: str) -> None:
        client = APIClient()
        token, _ = Token.objects.get_or_create(user=people[username])
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        barrier.wait()
        response = client.patch(
            f"/api/v1/cases/{case.pk}/",
            {"name": name, "version": 1, "change_reason": f"{username} renames"},
            format="json",
        )
        results[username] = response.status_code
        connection.close()

    threads = [
        threading.Thread(target=editor, args=("priya", "Priya's name")),
        threading.Thread(target=editor, args=("tariq", "Tariq's name")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(results.values()) == [200, 409]
    winner = next(user for user, code in results.items() if code == 200)
    case.refresh_from_db()
    assert case.version == 2
    assert case.name == ("Priya's name" if winner == "priya" else "Tariq's name")
    assert case.history.count() == 2  # created, then exactly one edit
