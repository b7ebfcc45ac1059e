"""Celery tasks of the annotation app: thin wrappers that call services."""

from typing import Any

from celery import shared_task
from celery.signals import worker_process_init

from . import services


@worker_process_init.connect
def load_agreement_report(**_kwargs: Any) -> None:
    """A worker process computes agreement reports (their own jobs, and every release's): it loads the report's
    modules when it starts rather than in the first job that needs them. pandas is not among them: a report
    imports it only when some item has two or more annotators (``annotation.agreement.lazy``), and loading it
    in every pool process cost each 42 MB. The web app and the embedded default load the report only when
    asked."""
    from .agreement import report  # noqa: F401


@shared_task(name="annotation.expire_leases")
def expire_leases() -> int:
    """Return abandoned items to the pool (the take also expires its project's leases; this keeps the
    status column and the queue counter honest) and give items an import committed late their queue
    slot."""
    expired = services.assignments_expire()
    services.queue_slots_sync()
    return expired


@shared_task(bind=True, name="annotation.agreement_report")
def agreement_report_compute(self, report_id: int) -> int:
    """Compute a queued agreement report; progress goes to the report row and to the task state."""
    from .agreement import services as agreement_services

    def progress(percent: int, note: str) -> None:
        if self.request.id and not self.request.is_eager:
            self.update_state(state="PROGRESS", meta={"percent": percent, "note": note, "report": report_id})

    agreement_services.report_run(report_id, progress=progress)
    return report_id


@shared_task(name="annotation.webhook_deliver")
def webhook_deliver(delivery_id: int, attempt: int = 1) -> bool:
    """POST one webhook delivery; a failed attempt queues the next after an exponential backoff until
    ``MAX_ATTEMPTS`` are spent (each attempt is recorded by the service)."""
    from .webhooks import services as webhooks

    record = webhooks.deliver(delivery_id, attempt=attempt)
    if not record.ok and (delay := webhooks.retry_delay(attempt)) is not None:
        webhook_deliver.apply_async(args=[delivery_id], kwargs={"attempt": attempt + 1}, countdown=delay)
    return record.ok
