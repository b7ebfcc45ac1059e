"""Answer 503 with Retry-After, not a 500 traceback, while the database cannot be reached; 507 or 503 when a file
cannot be stored (the disk full, the storage failing).

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
from django.shortcuts import render
from django.utils.translation import gettext as _

from config.jobs import error_summary
from config.storage import StorageError, storage_error

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
#: When to try again after the storage failed (not full: that waits for someone to free space).
STORAGE_RETRY_AFTER_SECONDS = 60
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


def storage_error_message(failure: StorageError) -> str:
    """What people are told when a file could not be stored, in their language."""
    if failure.full:
        return _("The server has no storage space left, so the file was not stored and nothing was changed. "
                 "Ask an administrator to free some space, then try again.")
    return _("The server's file storage is not available right now, so the file was not stored and nothing was "
             "changed. Try again in a few minutes.")


def storage_error_body(failure: StorageError) -> dict[str, str]:
    """The JSON body of a storage failure (the API's exception handler answers with it too)."""
    return {"detail": storage_error_message(failure), "code": failure.code}


class StorageErrorMiddleware:
    """A file that could not be stored (``config.storage.StorageError``, or the disk's ``OSError`` from anywhere:
    a full temporary folder while an upload is received) answers 507 Insufficient Storage when the disk is full,
    503 with Retry-After when the storage fails otherwise: JSON on API routes, a page in the user's language
    elsewhere — never a 500. The storage removed whatever was half written (config/storage.py)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        failure = storage_error(exception)
        if failure is None:
            return None
        logger.error("storage failure for %s %s: %s", request.method, request.path, error_summary(exception))
        if request.path.startswith("/api/"):
            response: HttpResponse = JsonResponse(storage_error_body(failure), status=failure.status)
        else:
            response = render(request, "storage_error.html", {"message": storage_error_message(failure),
                                                              "full": failure.full}, status=failure.status)
        if not failure.full:
            response["Retry-After"] = str(STORAGE_RETRY_AFTER_SECONDS)
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
