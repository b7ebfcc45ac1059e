"""The webhook payloads as OpenAPI 3.1 webhooks (``SPECTACULAR_SETTINGS["WEBHOOKS"]`` names the constants below):
every POST carries the same envelope, whose ``data`` holds the event's ids and figures — never a text or a name."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, OpenApiWebhook, extend_schema, inline_serializer
from rest_framework import serializers

from ..models import WebhookEvent

_SIGNATURE = ("Signed in the `X-Goldset-Signature` header, `t=<unix seconds>,v1=<hex>`: HMAC-SHA256 with the "
              "endpoint's secret of `<t>.<raw body>`. Refuse a signature that does not match or a `t` more than "
              "five minutes old. `X-Goldset-Event` names the event, `X-Goldset-Delivery` the delivery (the same on a "
              "retry or a replay: use it to drop duplicates). Answer with a 2xx status within 10 seconds.")

_DATA = {
    WebhookEvent.IMPORT_FINISHED: {
        "import": serializers.IntegerField(), "status": serializers.CharField(),
        "records_read": serializers.IntegerField(), "items_written": serializers.IntegerField(),
        "annotations_written": serializers.IntegerField(), "errors": serializers.IntegerField()},
    WebhookEvent.RELEASE_BUILT: {
        "release": serializers.IntegerField(), "version": serializers.CharField(),
        "status": serializers.CharField(help_text="passed, failed, inconclusive, unchecked or error")},
    WebhookEvent.RELEASE_PUBLISHED: {
        "release": serializers.IntegerField(), "version": serializers.CharField(), "status": serializers.CharField(),
        "published_at": serializers.DateTimeField()},
    WebhookEvent.AGREEMENT_READY: {
        "report": serializers.IntegerField(), "annotations_counted": serializers.IntegerField(),
        "items_counted": serializers.IntegerField(), "annotators": serializers.IntegerField(),
        "measure": serializers.CharField(allow_null=True),
        "value": serializers.FloatField(allow_null=True, help_text="The primary coefficient.")},
    WebhookEvent.ADJUDICATION_QUEUE_ABOVE: {
        "waiting": serializers.IntegerField(help_text="Items waiting for adjudication."),
        "threshold": serializers.IntegerField(help_text="The endpoint's threshold they exceed.")},
}
_DATA[WebhookEvent.IMPORT_FAILED] = _DATA[WebhookEvent.IMPORT_FINISHED]


def _webhook(event: WebhookEvent) -> OpenApiWebhook:
    name = event.value.replace(".", "_").title().replace("_", "")
    payload = inline_serializer(f"Webhook{name}", fields={
        "id": serializers.IntegerField(help_text="The delivery."),
        "event": serializers.ChoiceField(choices=[event.value]),
        "project": serializers.IntegerField(),
        "created": serializers.DateTimeField(),
        "data": inline_serializer(f"Webhook{name}Data", fields=_DATA[event]),
    })
    return OpenApiWebhook(name=event.value, decorator=extend_schema(
        summary=str(event.label), description=_SIGNATURE, request=payload,
        responses={200: OpenApiResponse(description="Received (any 2xx).")}))


IMPORT_FINISHED = _webhook(WebhookEvent.IMPORT_FINISHED)
IMPORT_FAILED = _webhook(WebhookEvent.IMPORT_FAILED)
RELEASE_BUILT = _webhook(WebhookEvent.RELEASE_BUILT)
RELEASE_PUBLISHED = _webhook(WebhookEvent.RELEASE_PUBLISHED)
AGREEMENT_READY = _webhook(WebhookEvent.AGREEMENT_READY)
ADJUDICATION_QUEUE_ABOVE = _webhook(WebhookEvent.ADJUDICATION_QUEUE_ABOVE)
