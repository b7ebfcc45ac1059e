"""Answer 503 with Retry-After, not a 500 traceback, while the database cannot be reached.

A database restart (or failover) closes every connection: the requests in flight and those arriving before
it is back fail with ``OperationalError``/``InterfaceError``. Clients are told to retry; writes are
idempotent (annotations are upserts per item, annotator and stage), so a retried submission is stored once.
Django then drops the broken connection at the end of the request and the next one connects afresh.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

from config.jobs import error_summary

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
MESSAGE = ("The database is unavailable (restarting or unreachable), so this request was not completed. "
           "Work saved before is kept; try again in a few seconds.")


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        logger.warning("database unavailable for %s %s: %s", request.method, request.path, error_summary(exception))
        if request.path.startswith("/api/"):
            response: HttpResponse = JsonResponse({"detail": MESSAGE, "code": "database_unavailable"}, status=503)
        else:
            response = HttpResponse(MESSAGE, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
