"""Celery tasks of the dataset-building app: thin wrappers that call services."""

from __future__ import annotations

from celery import shared_task

from . import services
from .pipeline import Progress


@shared_task(bind=True, name="datasets_build.run_import")
def run_import(self, job_id: int) -> dict[str, int | str]:
    """Run an import job, publishing records read/screened/written as the task's PROGRESS state."""

    def report(progress: Progress) -> None:
        if not self.request.is_eager:
            self.update_state(state="PROGRESS", meta={"read": progress.read, "screened": progress.screened,
                                                      "written": progress.written})

    job = services.import_job_run(job_id, on_progress=report)
    return {"job": job.pk, "status": job.status, "items": job.items_written}
