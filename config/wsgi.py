import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
# The URLconf, and with it every view, serializer and task module, is imported now, as a worker starts,
# rather than by the worker's first request: that request would otherwise wait for it, and the import takes
# its CPU from whatever else the machine is doing at that moment (an import job, other requests).
get_resolver().url_patterns  # noqa: B018
# With a broker, a web worker queues jobs (an import, a release) and reads their progress from the broker: its
# client (kombu's transport, the result backend, the redis library) is imported now too, not by the request that
# queues the first job, which waited for it (0.1-0.6 s of the harness's import request). Nothing connects here.
if not settings.CELERY_TASK_ALWAYS_EAGER:
    from config.celery import app

    app.connection_for_write().get_transport_cls()
    app.backend  # noqa: B018
