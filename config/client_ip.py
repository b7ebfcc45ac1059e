"""The client address login rate limiting counts failures against (``AXES_CLIENT_IP_CALLABLE``).

Behind a reverse proxy every request arrives from the proxy's address, so counting per ``REMOTE_ADDR`` would
let one client's wrong passwords lock the account for everyone. Each trusted proxy appends the address it
received the request from to ``X-Forwarded-For``; with ``GOLDSET_TRUSTED_PROXY_COUNT`` proxies in front, the
entry that many places from the right was written by the outermost proxy and is the real client. Entries
further left come from the client itself and are never trusted, so a forged header cannot pick the address
its failures are counted against. With the count at 0 (no proxy) the header is ignored.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str | None:
    remote = request.META.get("REMOTE_ADDR")
    count = settings.GOLDSET_TRUSTED_PROXY_COUNT
    if count <= 0:
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if len(forwarded) < count:
        # The request did not pass through every configured proxy: the proxy's own address is all we know.
        return remote
    candidate = forwarded[-count]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote
