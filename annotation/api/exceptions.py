"""The API's one translation of domain errors into HTTP responses (``REST_FRAMEWORK["EXCEPTION_HANDLER"]``).

Views call services and let their errors propagate; this handler gives every view the same status and
body for them, and leaves the rest to DRF's own handler.
"""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from config.middleware import STORAGE_RETRY_AFTER_SECONDS, storage_error_body
from config.storage import storage_error

from ..assist import AssistError
from ..services import ServiceError
from ..task_types import PayloadError

#: ``ServiceError.code`` → status; any other code is a 400.
SERVICE_STATUS = {"conflict": status.HTTP_409_CONFLICT, "gold_decided": status.HTTP_409_CONFLICT,
                  "not_found": status.HTTP_404_NOT_FOUND, "forbidden": status.HTTP_403_FORBIDDEN,
                  "guideline": status.HTTP_403_FORBIDDEN, "not_assigned": status.HTTP_400_BAD_REQUEST}


def service_error_response(error: ServiceError) -> Response:
    """``{"detail", "code"[, "field"]}`` with the status the code names."""
    body: dict[str, Any] = {"detail": error.message, "code": error.code}
    if error.field:
        body["field"] = error.field
    return Response(body, status=SERVICE_STATUS.get(error.code, status.HTTP_400_BAD_REQUEST))


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ServiceError):
        return service_error_response(exc)
    if isinstance(exc, AssistError):  # a project's assist setting out of range
        return Response({"detail": exc.message, "code": "invalid", "field": exc.field},
                        status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, PayloadError):  # an item's payload the task type refuses, keyed like a serializer error
        return Response({"payload": [str(exc)], "field": exc.field}, status=status.HTTP_400_BAD_REQUEST)
    if (failure := storage_error(exc)) is not None:  # a full disk, a failing storage (config/middleware.py)
        response = Response(storage_error_body(failure), status=failure.status)
        if not failure.full:
            response["Retry-After"] = str(STORAGE_RETRY_AFTER_SECONDS)
        return response
    return drf_exception_handler(exc, context)
