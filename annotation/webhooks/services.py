"""Registering webhook endpoints, emitting a project's events to them, and delivering them signed.

A delivery is queued on commit of the transaction that emitted it (a rolled-back import tells no one), POSTed by
the ``annotation.webhook_deliver`` task, and retried with exponential backoff; every attempt is recorded.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import json
import secrets
import socket
import time
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _

from ..models import (
    DeliveryStatus,
    Project,
    User,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from ..services.errors import ServiceError

#: Attempts per delivery before it is left failed (a replay starts a new round).
MAX_ATTEMPTS = 6
#: The wait before the second attempt; each later one waits twice the one before (30 s, 1, 2, 4, 8 min).
BACKOFF_SECONDS = 30
#: Seconds a receiver has to answer one attempt.
TIMEOUT_SECONDS = 10
SIGNATURE_HEADER = "X-Goldset-Signature"


def url_check(url: str) -> str:
    """Refuse a URL that is not HTTPS, or whose host resolves to a loopback, link-local, private, multicast or
    reserved address — unless the administrator allows private receivers (``GOLDSET_WEBHOOKS_ALLOW_PRIVATE``,
    which also allows plain HTTP). Called at registration and again before every attempt, so a name that later
    resolves elsewhere (DNS rebinding) is refused too; returns the checked address the attempt connects to."""
    parts = urlsplit(url)
    allowed = settings.GOLDSET_WEBHOOKS_ALLOW_PRIVATE
    if parts.scheme != "https" and not (allowed and parts.scheme == "http"):
        raise ServiceError(_("A webhook URL must start with https://."), field="url")
    if not parts.hostname:
        raise ServiceError(_("A webhook URL needs a host."), field="url")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        found = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (OSError, ValueError) as error:
        raise ServiceError(_("The webhook host %(host)s cannot be resolved.") % {"host": parts.hostname},
                           field="url") from error
    for *_rest, address in found:
        ip = ipaddress.ip_address(address[0].split("%")[0])
        if not allowed and (not ip.is_global or ip.is_multicast):
            raise ServiceError(_("The webhook host %(host)s resolves to %(ip)s, a loopback, link-local, private or "
                                 "reserved address; only an administrator can allow those.")
                               % {"host": parts.hostname, "ip": ip}, field="url")
    return found[0][4][0]


def _events_check(events: list[str]) -> list[str]:
    known = set(WebhookEvent.values)
    unknown = sorted(set(events) - known)
    if unknown:
        raise ServiceError(_("Unknown webhook events: %(events)s.") % {"events": ", ".join(unknown)},
                           field="events")
    if not events:
        raise ServiceError(_("Choose at least one event."), field="events")
    return [event for event in WebhookEvent.values if event in events]


def endpoint_create(*, project: Project, url: str, events: list[str], by: User | None,
                    adjudication_threshold: int | None = None) -> WebhookEndpoint:
    """Register an endpoint; its ``secret`` is generated here and shown to the caller once."""
    url = url.strip()
    chosen = _events_check(list(events))
    if WebhookEvent.ADJUDICATION_QUEUE_ABOVE in chosen and adjudication_threshold is None:
        raise ServiceError(_("Say above how many waiting items the adjudication queue is reported."),
                           field="adjudication_threshold")
    url_check(url)
    return WebhookEndpoint.objects.create(
        project=project, url=url, events=chosen, created_by=by, secret=secrets.token_hex(32),
        adjudication_threshold=adjudication_threshold if WebhookEvent.ADJUDICATION_QUEUE_ABOVE in chosen else None)


def endpoint_delete(endpoint: WebhookEndpoint) -> None:
    endpoint.delete()


def emit(project: Project | int, event: str, data: dict[str, Any]) -> list[WebhookDelivery]:
    """Record ``event`` for every active endpoint of the project that wants it, and queue its delivery when the
    current transaction commits. ``data`` holds ids and figures only: never a text, a label or a name."""
    project_id = project if isinstance(project, int) else project.pk
    endpoints = [endpoint for endpoint in WebhookEndpoint.objects.filter(project_id=project_id, active=True)
                 if event in endpoint.events]
    return _deliveries_queue(endpoints, event, project_id, data)


def _deliveries_queue(endpoints: list[WebhookEndpoint], event: str, project_id: int,
                      data: dict[str, Any]) -> list[WebhookDelivery]:
    deliveries = []
    for endpoint in endpoints:
        delivery = WebhookDelivery.objects.create(endpoint=endpoint, event=event, payload={})
        delivery.payload = {"id": delivery.pk, "event": event, "project": project_id,
                            "created": delivery.created_at.isoformat(), "data": data}
        delivery.save(update_fields=["payload"])
        deliveries.append(delivery)
    if deliveries:
        from ..tasks import webhook_deliver

        ids = [delivery.pk for delivery in deliveries]
        transaction.on_commit(lambda: [webhook_deliver.delay(pk) for pk in ids])
    return deliveries


def adjudication_queue_check(project: Project, waiting: int) -> list[WebhookDelivery]:
    """Tell each endpoint whose adjudication threshold ``waiting`` items now exceed, once per rise: an endpoint
    is told again only after a gold computation found the queue back at or below its threshold."""
    event = WebhookEvent.ADJUDICATION_QUEUE_ABOVE
    rising = []
    for endpoint in WebhookEndpoint.objects.filter(project=project, active=True,
                                                   adjudication_threshold__isnull=False):
        if event not in endpoint.events:
            continue
        above = waiting > endpoint.adjudication_threshold
        # A conditional update: of two computations at once, only one sees the flag change and sends.
        if WebhookEndpoint.objects.filter(pk=endpoint.pk, adjudication_above=not above).update(
                adjudication_above=above) and above:
            rising.append(endpoint)
    return [delivery for endpoint in rising for delivery in _deliveries_queue(
        [endpoint], event, project.pk, {"waiting": waiting, "threshold": endpoint.adjudication_threshold})]


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """``t=<unix>,v1=<hex>``: HMAC-SHA256 with the endpoint's secret of ``<timestamp>.<body>``."""
    digest = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def deliver(delivery_id: int, *, attempt: int = 1) -> WebhookAttempt:
    """POST a delivery once and record the attempt (``attempt`` of this round): the delivery succeeds on a 2xx
    answer, stays pending while attempts remain, and is failed when they are spent."""
    delivery = WebhookDelivery.objects.select_related("endpoint").get(pk=delivery_id)
    endpoint = delivery.endpoint
    body = json.dumps(delivery.payload, separators=(",", ":"), sort_keys=True).encode()
    started = time.perf_counter()
    status_code: int | None = None
    error = ""
    try:
        status_code = _post(endpoint.url, url_check(endpoint.url), body, headers={
            "Content-Type": "application/json", "User-Agent": "Goldset-Webhooks/1",
            "X-Goldset-Event": delivery.event, "X-Goldset-Delivery": str(delivery.pk),
            SIGNATURE_HEADER: signature(endpoint.secret, int(time.time()), body)})
        if not 200 <= status_code < 300:
            error = f"HTTP {status_code}"
    except ServiceError as refused:
        error = refused.message
    except (OSError, ValueError, http.client.HTTPException) as failure:
        error = f"{type(failure).__name__}: {failure}"
    ok = status_code is not None and 200 <= status_code < 300
    record = WebhookAttempt.objects.create(delivery=delivery, status_code=status_code, ok=ok, error=error[:500],
                                            duration_ms=round((time.perf_counter() - started) * 1000))
    status = (DeliveryStatus.SUCCEEDED if ok else DeliveryStatus.PENDING if retry_delay(attempt) is not None
              else DeliveryStatus.FAILED)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(status=status)
    return record


def _post(url: str, address: str, body: bytes, headers: dict[str, str]) -> int:
    """POST ``body`` to ``url`` over a connection to ``address``, the one :func:`url_check` just checked (so a
    second lookup cannot hand the connection another address); TLS still verifies the certificate against the
    URL's host. Redirects are not followed: they could point at an address the check refuses."""
    parts = urlsplit(url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parts.hostname, parts.port, timeout=TIMEOUT_SECONDS)

    def connect(where: tuple[str, int], *args: Any) -> socket.socket:
        return socket.create_connection((address, where[1]), *args)

    connection._create_connection = connect  # the hook http.client opens its socket with
    try:
        connection.request("POST", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), body=body,
                           headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


def retry_delay(attempts: int) -> int | None:
    """Seconds before the next attempt after ``attempts`` failed ones in this round, or None when they are spent."""
    if attempts >= MAX_ATTEMPTS:
        return None
    return BACKOFF_SECONDS * 2 ** (attempts - 1)


def delivery_replay(delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a delivery again (a new round of attempts, signed with a fresh timestamp)."""
    from ..tasks import webhook_deliver

    WebhookDelivery.objects.filter(pk=delivery.pk).update(status=DeliveryStatus.PENDING)
    transaction.on_commit(lambda: webhook_deliver.delay(delivery.pk))
    delivery.status = DeliveryStatus.PENDING
    return delivery
