"""Writes for the suggester's runs: a retraining requested, a predictions file uploaded, a run's progress and
results recorded. ``exports/assist.py`` runs them (Celery ``exports.suggester_run``) and writes through here."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import IO, Any

from django.db import transaction

from annotation.models import Project, User
from annotation.services import ServiceError

from .models import SuggesterRun, SuggesterRunKind, SuggesterRunStatus


def suggester_run_update(run: SuggesterRun, **fields: Any) -> None:
    """Record a suggester run's status, progress or results (on the instance too)."""
    for name, value in fields.items():
        setattr(run, name, value)
    SuggesterRun.objects.filter(pk=run.pk).update(**fields)


def suggester_request(*, project: Project, user: User | None = None, trigger: str = "manual") -> SuggesterRun:
    """Queue a retraining of the project's baseline (after commit). A queued or running retraining is
    returned instead of starting a second one."""
    from .baselines import ReleaseError, get_baseline
    from .tasks import suggester_run_task

    try:
        get_baseline(project.task_type)
    except ReleaseError:
        raise ServiceError(f"no baseline for task {project.task_type!r}", field="task_type") from None
    with transaction.atomic():
        Project.objects.select_for_update().get(pk=project.pk)
        running = SuggesterRun.objects.filter(project=project, kind=SuggesterRunKind.TRAIN, status__in=[
            SuggesterRunStatus.QUEUED, SuggesterRunStatus.RUNNING]).first()
        if running is not None:
            return running
        run = SuggesterRun.objects.create(project=project, kind=SuggesterRunKind.TRAIN, trigger=trigger,
                                          requested_by=user, progress_note="queued")
        transaction.on_commit(lambda: _suggester_enqueue(suggester_run_task, run))
    return run


def _suggester_enqueue(task: Any, run: SuggesterRun) -> None:
    result = task.apply_async(args=[run.pk], task_id=f"suggester-{run.pk}-{secrets.token_hex(4)}")
    SuggesterRun.objects.filter(pk=run.pk, task_id="").update(task_id=result.id)


def predictions_upload(*, project: Project, upload: IO[bytes], file_name: str, fmt: str, user: User | None,
                       model: str = "") -> SuggesterRun:
    """Store a predictions file and queue reading it into suggestions (after commit)."""
    from datasets_build.services import store_upload

    from .assist import UPLOAD_FORMATS
    from .tasks import suggester_run_task

    if fmt not in UPLOAD_FORMATS:
        raise ServiceError(f"format must be one of {', '.join(UPLOAD_FORMATS)}", field="format")
    if len(model) > 80:
        raise ServiceError("the model name is at most 80 characters", field="model")
    stored = store_upload(upload, file_name, "suggester")
    with transaction.atomic():
        run = SuggesterRun.objects.create(project=project, kind=SuggesterRunKind.UPLOAD, trigger="upload",
                                          requested_by=user, file_name=Path(file_name).name[:255],
                                          stored_path=stored, format=fmt, progress_note="queued",
                                          metrics={"model": model})
        transaction.on_commit(lambda: _suggester_enqueue(suggester_run_task, run))
    return run
