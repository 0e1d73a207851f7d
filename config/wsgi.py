"""The WSGI application, with the code it serves loaded before the first request.

What is loaded here lives as long as the process: the URL configuration imports every
view, form and service. ``gc.freeze()`` then sets it all aside from the garbage
collector, whose full passes would otherwise walk those objects again and again while a
request waits (some 100 ms each on a loaded machine, every few requests). Garbage made
by requests is still collected.
"""

import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
get_resolver().url_patterns  # noqa: B018 (imports every view now, not on a first request)
gc.freeze()
