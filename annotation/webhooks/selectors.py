"""Reads of a project's webhook endpoints and deliveries."""

from __future__ import annotations

from django.db.models import Count, Prefetch, Q, QuerySet

from ..models import DeliveryStatus, Project, WebhookAttempt, WebhookDelivery, WebhookEndpoint


def endpoints(project: Project) -> QuerySet[WebhookEndpoint]:
    """The project's endpoints, each with ``failed`` (its deliveries whose attempts are spent)."""
    return WebhookEndpoint.objects.filter(project=project).annotate(
        failed=Count("deliveries", filter=Q(deliveries__status=DeliveryStatus.FAILED))).order_by("id")


def deliveries(project: Project, *, endpoint_id: int | None = None,
               failed_only: bool = False) -> QuerySet[WebhookDelivery]:
    """The project's deliveries, newest first, with their attempts (oldest first)."""
    found = WebhookDelivery.objects.filter(endpoint__project=project).select_related("endpoint").prefetch_related(
        Prefetch("attempts", queryset=WebhookAttempt.objects.order_by("at", "id")))
    if endpoint_id is not None:
        found = found.filter(endpoint_id=endpoint_id)
    if failed_only:
        found = found.filter(status=DeliveryStatus.FAILED)
    return found
