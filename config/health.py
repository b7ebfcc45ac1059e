"""``GET /healthz``: an unauthenticated readiness check for load balancers and start-up scripts.

It answers 200 once the process serves requests and the database answers a query; a lost database is a 503
(``DatabaseUnavailableMiddleware``). It reveals nothing else, so it stays open while the API schema needs a login.
"""

from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
