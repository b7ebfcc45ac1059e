import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
# The URLconf, and with it every view, serializer and task module, is imported now, as a worker starts,
# rather than by the worker's first request: that request would otherwise wait for it, and the import takes
# its CPU from whatever else the machine is doing at that moment (an import job, other requests).
get_resolver().url_patterns  # noqa: B018
