"""The writes of the contamination check: a project's references (files uploaded, projects named) and the checks
run on demand. Each change is audited; a check runs in the background (after commit) and records its result on
a :class:`~exports.models.ContaminationCheck`, since a published release does not change."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import IO, Any

from django.db import transaction
from django.utils import timezone

from annotation.audit import audit_record
from annotation.models import AuditObject, Membership, Project, Role, User
from annotation.services import ServiceError
from config.jobs import error_summary
from datasets_build.selectors import near_duplicate_links

from . import diff
from .contamination import release_contamination
from .models import BUILT, ContaminationCheck, ContaminationReference, ReferenceKind, Release, SuggesterRunStatus

#: Roles in the named project that may lend its items as a reference: those who may read all of it.
_LENDING = (Role.MANAGER, Role.MAINTAINER)


def _name_checked(project: Project, name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise ServiceError("a reference needs a name", field="name")
    if len(name) > 120:
        raise ServiceError("a reference's name is at most 120 characters", field="name")
    if ContaminationReference.objects.filter(project=project, name=name).exists():
        raise ServiceError(f"this project already has a reference named {name!r}", field="name", code="conflict")
    return name


def _audit(reference: ContaminationReference, action: str, by: User | None) -> None:
    audit_record(project=reference.project, actor=by, object_type=AuditObject.PROJECT, object_id=reference.project_id,
                 action=action, before={}, after={"reference": reference.name, "kind": reference.kind,
                                                  "training": reference.training,
                                                  "other": reference.other.slug if reference.other else None,
                                                  "file_name": reference.file_name, "format": reference.format,
                                                  "records": reference.records})


def reference_add_project(*, project: Project, other: Project, by: User | None, name: str = "",
                          training: bool = True) -> ContaminationReference:
    """Name another project of this server as a reference. The caller must manage (or maintain) that project
    too: the check reveals which of its items match."""
    if other.pk == project.pk:
        raise ServiceError("a project's own items are checked through its releases; name another project",
                           field="other")
    if by is not None and not by.is_superuser and not Membership.objects.filter(
            project=other, user=by, role__in=_LENDING).exists():
        raise ServiceError(f"you do not manage project {other.slug}, so you cannot name it as a reference",
                           field="other", code="forbidden")
    with transaction.atomic():
        reference = ContaminationReference.objects.create(
            project=project, kind=ReferenceKind.PROJECT, other=other, training=training, created_by=by,
            name=_name_checked(project, name or other.slug), records=other.items.count())
        _audit(reference, "add_reference", by)
    return reference


def reference_add_file(*, project: Project, upload: IO[bytes], file_name: str, fmt: str, by: User | None,
                       name: str = "", training: bool = True, encoding: str = "auto") -> ContaminationReference:
    """Store an uploaded reference file once it reads as records of the project's task type (else
    ``ServiceError`` saying why, and nothing is kept)."""
    from config.storage import upload_delete, upload_local
    from datasets_build.pipeline import FORMATS
    from datasets_build.readers import RecordError
    from datasets_build.references import ReadOutcome, reference_batches
    from datasets_build.services import store_upload

    if fmt not in FORMATS:
        raise ServiceError(f"format must be one of {', '.join(FORMATS)}", field="format")
    name = _name_checked(project, name or Path(file_name).name)
    stored = store_upload(upload, file_name, "references")
    outcome = ReadOutcome()
    try:
        with upload_local(stored) as path:
            for _batch in reference_batches(path, fmt, project.task, outcome, encoding=encoding):
                pass
    except (RecordError, ValueError) as error:
        upload_delete(stored)
        message = getattr(error, "message", None) or str(error)
        raise ServiceError(f"the file cannot be read as {fmt}: {message}", field="file") from None
    if outcome.read - outcome.skipped <= 0:
        upload_delete(stored)
        first = outcome.problems[0]["message"] if outcome.problems else "it holds no records"
        raise ServiceError(f"no record of the file reads as a {project.task_type} item ({first})", field="file")
    with transaction.atomic():
        reference = ContaminationReference.objects.create(
            project=project, kind=ReferenceKind.FILE, name=name, training=training, file_name=Path(file_name).name,
            stored_path=stored, format=fmt, records=outcome.read - outcome.skipped, skipped=outcome.skipped,
            created_by=by)
        _audit(reference, "add_reference", by)
    return reference


def reference_delete(*, reference: ContaminationReference, by: User | None) -> None:
    from config.storage import upload_delete

    with transaction.atomic():
        _audit(reference, "remove_reference", by)
        stored = reference.stored_path
        reference.delete()
        if stored:
            transaction.on_commit(lambda: upload_delete(stored))


def check_request(*, release: Release, by: User | None, now: bool = False) -> ContaminationCheck:
    """Queue a contamination check of a built release against its project's earlier releases and current
    references (after commit), or with ``now`` run it here (the command)."""
    from .tasks import contamination_check_task

    if release.status not in BUILT:
        raise ServiceError(f"release {release.version} is {release.status}: only built releases can be checked",
                           code="conflict")
    diff.held_of(release)  # refuses a release that recorded no items, now rather than in the job
    with transaction.atomic():
        check = ContaminationCheck.objects.create(release=release, requested_by=by)
        audit_record(project=release.project, actor=by, object_type=AuditObject.RELEASE, object_id=release.pk,
                     action="check_contamination", before={}, after={"check": check.pk})

        def enqueue() -> None:
            contamination_check_task.apply_async(args=[check.pk], task_id=f"contamination-{check.pk}-"
                                                                          f"{secrets.token_hex(4)}")
        if not now:
            transaction.on_commit(enqueue)
    return check_run(check.pk) if now else check


def check_run(check_id: int) -> ContaminationCheck:
    """Run a queued check and record what it found (or why it could not run)."""
    check = ContaminationCheck.objects.select_related("release__project").get(pk=check_id)
    ContaminationCheck.objects.filter(pk=check.pk).update(status=SuggesterRunStatus.RUNNING)
    release = check.release
    fields: dict[str, Any]
    try:
        result = release_contamination(release, diff.held_of(release), near_duplicate_links(release.project))
        fields = {"status": SuggesterRunStatus.DONE, "result": result}
    except Exception as error:  # recorded on the check: the page and the API say why it did not run
        fields = {"status": SuggesterRunStatus.FAILED, "error": error_summary(error)[:4000]}
    ContaminationCheck.objects.filter(pk=check.pk).update(finished_at=timezone.now(), **fields)
    check.refresh_from_db()
    return check
