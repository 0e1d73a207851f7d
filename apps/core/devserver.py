"""The development server (``manage.py runserver``, what ``make run`` starts) for a team.

Django's development server listens with a backlog of 10 connections
(``WSGIServer.request_queue_size``). When more people connect at the same moment than
that, the kernel drops the last packet of their handshake and answers it again a second
later; a request that carries a body (a form sent, an API write) meanwhile is answered
with a reset instead of its page: the person sees "connection reset", and nothing was
saved. ``benchmarks/load.py`` met it with 200 people. The backlog is widened under
runserver only (``settings.RUNSERVER``); gunicorn listens with its own (2,048).
"""

from django.core.servers.basehttp import WSGIServer

BACKLOG = 1024


def widen_backlog() -> None:
    WSGIServer.request_queue_size = max(WSGIServer.request_queue_size, BACKLOG)
