"""The password backends: login rate limiting that also accepts authenticate() calls made outside a request, and
the password check that refuses when the administrator turned local accounts off for single sign-on.

django-axes refuses an ``authenticate()`` call without a ``request``. Every login over HTTP (the login
page, the admin, the DRF token endpoint) passes one and is counted; calls without one come only from
code running on the server itself (management commands, the test client's ``login()``), where there
is no client address to lock out, so they pass straight to the next backend.
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.contrib.auth.backends import ModelBackend
from django.http import HttpRequest

from config import oidc


class RequestOptionalAxesBackend(AxesStandaloneBackend):
    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> None:
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


class LocalPasswordBackend(ModelBackend):
    """Django's username-and-password check, refused for every caller (the login page, the admin, the API token
    endpoint) while ``GOLDSET_LOCAL_LOGIN`` is off and single sign-on is on. Sessions and permissions still go
    through it."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> Any:
        if not oidc.local_login():
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
