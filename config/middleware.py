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
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.utils.translation import gettext as _

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


class RejectNulMiddleware:
    """Answer 400 to a request with a NUL character in its path, a query parameter or a form field.

    PostgreSQL cannot hold a NUL in text, so a NUL reaching a query (a filter, a search, a form saved to a model)
    failed there with a 500. No real input contains one. Multipart bodies (uploads) are left to the views so
    their files are not read here; JSON bodies are checked by ``annotation.api.parsers.CheckedJSONParser``.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where = self._nul_in(request)
        if where is None:
            return self.get_response(request)
        message = _("%(where)s contains a NUL character (\\u0000), which is not allowed.") % {"where": where}
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": message, "code": "nul_character"}, status=400)
        return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")

    @staticmethod
    def _nul_in(request: HttpRequest) -> str | None:
        if "\x00" in request.path:
            return _("The URL path")
        fields = [(_("The query parameter"), request.GET)]
        if request.method == "POST" and request.content_type == "application/x-www-form-urlencoded":
            fields.append((_("The form field"), request.POST))
        for label, data in fields:
            for name, values in data.lists():
                if "\x00" in name or any("\x00" in value for value in values):
                    return f"{label} {name!r}"  # repr shows a NUL in the name as \x00
        return None
