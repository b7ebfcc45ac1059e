"""Celery tasks of releases: thin wrappers over the services."""

from __future__ import annotations

from celery import shared_task

from config.jobs import RETRY_ON_LOST_DATABASE, run_or_retry

from . import services


@shared_task(name="exports.build_release", bind=True, **RETRY_ON_LOST_DATABASE)
def release_build_task(self, release_id: int) -> dict:
    """Build a queued release, reporting progress as Celery task state and on the release row. A lost
    database is retried (the redelivery rebuilds); when the retries are spent, the release is a build error."""

    def progress(state: dict) -> None:
        # Eager runs (the embedded default) have no result backend; the release row has the progress too.
        if not self.request.is_eager:
            self.update_state(state="PROGRESS", meta=state)

    release = run_or_retry(self, lambda: services.release_run(release_id, progress=progress),
                           lambda error: services.release_abandon(release_id, error))
    return {"release": release.pk, "status": release.status}


@shared_task(name="exports.suggester_run", bind=True)
def suggester_run_task(self, run_id: int) -> dict:
    """Retrain the project's baseline (or read an uploaded predictions file) into suggestions; progress goes
    to the run row and, on a worker, to the task state."""
    from . import assist

    def progress(percent: int, note: str) -> None:
        if not self.request.is_eager:
            self.update_state(state="PROGRESS", meta={"percent": percent, "note": note, "run": run_id})

    run = assist.suggester_run(run_id, progress=progress)
    return {"run": run.pk, "status": run.status, "suggestions": run.suggestions}


@shared_task(name="exports.suggester_retrain_due")
def suggester_retrain_due() -> list[int]:
    """Queue a retraining for each project whose gold grew by its ``retrain_every`` since the last one."""
    from . import assist

    return assist.retrain_due_projects()


@shared_task(name="exports.contamination_check")
def contamination_check_task(check_id: int) -> dict:
    """Run a contamination check a maintainer asked for; its result goes to the check row."""
    from . import contamination_services

    check = contamination_services.check_run(check_id)
    return {"check": check.pk, "status": check.status}
