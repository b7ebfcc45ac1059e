"""Celery tasks of releases: thin wrappers over the services."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(name="exports.build_release", bind=True)
def release_build_task(self, release_id: int) -> dict:
    """Build a queued release, reporting progress as Celery task state and on the release row."""

    def progress(state: dict) -> None:
        # Eager runs (the embedded default) have no result backend; the release row has the progress too.
        if not self.request.is_eager:
            self.update_state(state="PROGRESS", meta=state)

    release = services.release_run(release_id, progress=progress)
    return {"release": release.pk, "status": release.status}
