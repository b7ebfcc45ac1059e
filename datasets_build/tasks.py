"""Celery tasks of the dataset-building app: thin wrappers that call services."""

from __future__ import annotations

from celery import shared_task

from config.jobs import RETRY_ON_LOST_DATABASE, run_or_retry

from . import services
from .pipeline import Progress


@shared_task(bind=True, name="datasets_build.run_import", **RETRY_ON_LOST_DATABASE)
def run_import(self, job_id: int) -> dict[str, int | str]:
    """Run an import job, publishing records read/screened/written as the task's PROGRESS state. A lost
    database is retried (the import's transaction was rolled back, and a job that committed is not re-run);
    when the retries are spent, the job is recorded as failed."""

    def report(progress: Progress) -> None:
        if not self.request.is_eager:
            self.update_state(state="PROGRESS", meta={"read": progress.read, "screened": progress.screened,
                                                      "written": progress.written})

    job = run_or_retry(self, lambda: services.import_job_run(job_id, on_progress=report),
                       lambda error: services.import_job_abandon(job_id, error))
    return {"job": job.pk, "status": job.status, "items": job.items_written}
