"""A project's webhook endpoints, the deliveries of its events, and every attempt at one (registered as models of
the annotation app by ``annotation.models``)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class WebhookEvent(models.TextChoices):
    IMPORT_FINISHED = "import.finished", _("Import finished")
    IMPORT_FAILED = "import.failed", _("Import failed")
    RELEASE_BUILT = "release.built", _("Release built")
    RELEASE_PUBLISHED = "release.published", _("Release published")
    AGREEMENT_READY = "agreement.ready", _("Agreement report ready")
    ADJUDICATION_QUEUE_ABOVE = "adjudication.queue_above", _("Adjudication queue above its threshold")


class WebhookEndpoint(models.Model):
    """A URL told of the project's chosen events; ``secret`` signs every delivery (shown once, at creation)."""

    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=64)
    #: The ``WebhookEvent`` values it wants.
    events = models.JSONField(default=list)
    active = models.BooleanField(default=True)
    #: For ``adjudication.queue_above``: told when more items than this wait for adjudication.
    adjudication_threshold = models.PositiveIntegerField(null=True, blank=True)
    #: Whether the queue was above the threshold at the last gold computation: the event is sent once per rise.
    adjudication_above = models.BooleanField(default=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.url


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    SUCCEEDED = "succeeded", _("Delivered")
    FAILED = "failed", _("Failed")


class WebhookDelivery(models.Model):
    """One event for one endpoint: the JSON body sent (ids and figures only), its state, its attempts."""

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40, choices=WebhookEvent.choices)
    payload = models.JSONField()
    status = models.CharField(max_length=12, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["endpoint", "-created_at"], name="webhook_delivery_endpoint_at")]

    def __str__(self) -> str:
        return f"{self.event} → {self.endpoint_id} ({self.status})"


class WebhookAttempt(models.Model):
    """One POST of a delivery: the receiver's status code (none when it was not reached), time taken, error."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempts")
    at = models.DateTimeField(auto_now_add=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=500, blank=True)
    ok = models.BooleanField(default=False)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.delivery_id}: {self.status_code or self.error}"
