"""Login rate limiting that also accepts authenticate() calls made outside a request.

django-axes refuses an ``authenticate()`` call without a ``request``. Every login over HTTP (the login
page, the admin, the DRF token endpoint) passes one and is counted; calls without one come only from
code running on the server itself (management commands, the test client's ``login()``), where there
is no client address to lock out, so they pass straight to the next backend.
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.http import HttpRequest


class RequestOptionalAxesBackend(AxesStandaloneBackend):
    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> None:
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
