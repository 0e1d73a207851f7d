"""A page that holds its request a moment and says how many connections its database has,
for the development server's bound (tests/core/test_dev_server_connections.py)."""

import threading
import time

from django.db import connection
from django.http import JsonResponse
from django.urls import path

HOLD_SECONDS = 0.3
_lock = threading.Lock()
in_flight = {"now": 0, "most": 0}


def busy(request):
    with _lock:
        in_flight["now"] += 1
        in_flight["most"] = max(in_flight["most"], in_flight["now"])
    try:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                )
            else:
                cursor.execute("SELECT 0")
            [open_connections] = cursor.fetchone()
        time.sleep(HOLD_SECONDS)
        return JsonResponse({"connections": open_connections})
    finally:
        with _lock:
            in_flight["now"] -= 1


urlpatterns = [path("busy/", busy)]
