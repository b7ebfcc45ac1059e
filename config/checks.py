"""Deployment checks (``manage.py check --deploy``): whether the forwarded headers Goldset trusts agree with the
proxies it is told are in front of it.

Whether gunicorn is reachable directly cannot be seen from inside Django, so these checks look at what can be:
settings that trust a proxy's headers while no proxy is counted (then anyone reaching gunicorn forges them), and a
counted proxy whose HTTPS header is not trusted (then every request redirects to itself). docs/security.md,
"Behind a reverse proxy", says how to count the proxies.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error
from django.core.checks import Warning as CheckWarning

_HOW = ("Set GOLDSET_TRUSTED_PROXY_COUNT to the number of reverse proxies in front of gunicorn that append the "
        "client to X-Forwarded-For (nginx alone: 1), and bind gunicorn where only they reach it; see docs/security.md, "
        "'Behind a reverse proxy'.")


def proxy_trust(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    count = settings.GOLDSET_TRUSTED_PROXY_COUNT
    if count < 0:
        return [Error(f"GOLDSET_TRUSTED_PROXY_COUNT is {count}; it counts proxies, so it is 0 or more.",
                      hint=_HOW, id="goldset.E001")]
    found: list[CheckMessage] = []
    if count == 0 and settings.SECURE_PROXY_SSL_HEADER:
        found.append(CheckWarning(
            "SECURE_PROXY_SSL_HEADER is set but GOLDSET_TRUSTED_PROXY_COUNT is 0: either no proxy is in front, and "
            "any client can claim HTTPS with the header, or one is, and the login lockout counts every client's "
            "failures against the proxy's address (one client locks an account out for everyone).",
            hint=_HOW, id="goldset.W001"))
    if count == 0 and (settings.USE_X_FORWARDED_HOST or settings.USE_X_FORWARDED_PORT):
        found.append(CheckWarning(
            "USE_X_FORWARDED_HOST or USE_X_FORWARDED_PORT is on but GOLDSET_TRUSTED_PROXY_COUNT is 0: with no proxy "
            "counted, a client chooses the host and port Goldset builds its links with.",
            hint=_HOW, id="goldset.W002"))
    if count > 0 and not settings.SECURE_PROXY_SSL_HEADER:
        found.append(CheckWarning(
            f"GOLDSET_TRUSTED_PROXY_COUNT is {count} but SECURE_PROXY_SSL_HEADER is not set: the proxy's "
            "X-Forwarded-Proto is not trusted, so a request it received over HTTPS looks like plain HTTP (with the "
            "HTTPS redirect on, every page redirects to itself).",
            hint="Run with DJANGO_ENV=production, which trusts X-Forwarded-Proto when a proxy is counted, or set "
                 "SECURE_PROXY_SSL_HEADER = ('HTTP_X_FORWARDED_PROTO', 'https').",
            id="goldset.W003"))
    return found
