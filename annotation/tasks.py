"""Celery tasks of the annotation app: thin wrappers that call services."""

from celery import shared_task

from . import services


@shared_task(name="annotation.expire_leases")
def expire_leases() -> int:
    """Return abandoned items to the pool (the queue ignores expired leases anyway; this keeps the
    status column honest for progress pages and reports)."""
    return services.assignments_expire()
