"""Writes of the dataset-building app: imports (synchronous and as jobs) and screening review."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.audit import audit_record
from annotation.gold import selectors as gold_selectors
from annotation.gold.services import gold_compute
from annotation.models import (
    AuditObject,
    Flag,
    FlagKind,
    FlagResolution,
    Item,
    Project,
    ScreeningStatus,
    Source,
    User,
    WebhookEvent,
)
from annotation.services import ServiceError, flag_resolve
from annotation.webhooks import services as webhooks
from config.jobs import DATABASE_LOST, drop_connection, error_summary
from config.storage import UploadTooLarge, upload_delete, upload_local, upload_save

from . import heap, selectors
from .licenses import normalise_spdx
from .models import ImportJob, ImportStatus
from .ontology import ontology_record, read_ontology
from .pii import resolve_policy
from .pii.redact import redact_message
from .pipeline import DUPLICATE_POLICIES, FORMATS, ImportPipeline, ImportStopped, Progress
from .readers import ENCODINGS, RecordError

#: File name endings accepted per format (the reader decides whether the content really is that format).
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "klue": (".json", ".tsv"),
    "jsonl": (".jsonl", ".ndjson", ".json", ".txt"),
    "csv": (".csv", ".txt"),
    "doccano": (".jsonl", ".zip"),
    "labelstudio": (".json",),
}

logger = logging.getLogger(__name__)


@dataclass
class ImportResult:
    """What an import did; ``errors`` non-empty means nothing was written."""

    project: Project
    items: int = 0
    annotations: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    source: Source | None = None
    progress: Progress = field(default_factory=Progress)

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_json(self) -> dict[str, Any]:
        return {
            "project": self.project.slug,
            "task_type": self.project.task_type,
            "created": {"items": self.items, "annotations": self.annotations},
            "errors": self.errors,
            "source": {"name": self.source.name, "license": self.source.license} if self.source else None,
            "read": self.progress.read,
            "summary": self.summary,
        }


class _Rollback(Exception):
    """Raised inside the import transaction to undo everything when a record was bad."""


def max_upload_bytes() -> int:
    return int(settings.GOLDSET_MAX_UPLOAD_MB) * 1024 * 1024


def items_import(
    project: Project,
    path: str | Path,
    fmt: str = "jsonl",
    *,
    source: str = "",
    license: str = "",
    pii: str | None = None,
    user: User | None = None,
    encoding: str = "auto",
    duplicates: str = "skip",
    approved_only: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    ontology: str | Path | None = None,
    ontology_name: str = "",
) -> ImportResult:
    """Import one file into a project through the whole pipeline, synchronously; all of it or nothing.

    ``source``/``license`` name the corpus (SPDX id); ``pii`` overrides the project's PII policy for every
    type (``pseudonymize``, ``detect`` or ``off``); ``duplicates`` is ``skip`` (report exact duplicates and
    import the rest) or ``refuse`` (an exact duplicate is an error). ``approved_only`` says a doccano export
    was made with "Export only approved documents" (``interop.iter_doccano``). ``user`` is recorded by the job that
    calls this; the import itself needs no user. ``ontology`` is the WoS ontology file the dialogues come with
    (``ontology_name`` what the user calls it): it becomes the project's before the states are read
    (``ontology.py``).
    """
    path = Path(path)
    schema_before = project.label_schema
    result = ImportResult(project=project)
    try:
        _check_options(fmt, encoding, duplicates, approved_only)
        policy = resolve_policy(project.options, pii)
    except ValueError as error:
        result.errors = [{"record": 0, "field": "options", "message": str(error)}]
        return result
    if not path.is_file():
        result.errors = [{"record": 0, "field": "file", "message": f"no such file: {path.name}"}]
        return result
    try:
        with transaction.atomic():
            # A corpus with its labels imported into a new project: its gold is computed here, so that the
            # first release finds it current (a release computes only what changed since; where the database
            # keeps no gold state, the release computes all of it anyway).
            first = gold_selectors.gold_state_kept() and not Item.objects.filter(project=project).exists()
            result.source = source_ensure(name=source, license=license, project=project, fmt=fmt,
                                       file_name=path.name)
            ontology_name = ontology_name or (Path(ontology).name if ontology is not None else "")
            if ontology is not None:
                recorded = read_ontology(Path(ontology), ontology_name)
                changed = ontology_record(project, recorded, ontology_name)
            pipeline = ImportPipeline(project=project, path=path, fmt=fmt, source=result.source, policy=policy,
                                      encoding=encoding, duplicates=duplicates, approved_only=approved_only,
                                      on_progress=on_progress)
            outcome = pipeline.run()
            result.summary = outcome.summary
            result.progress = outcome.progress
            if not outcome.ok:
                result.errors = outcome.errors
                raise _Rollback
            if not outcome.progress.read:
                # Stored in English like every import error; pages show it in the reader's language (display.py).
                result.errors = [{"record": 0, "field": "file",
                                  "message": "the file holds no records: nothing was imported"}]
                raise _Rollback
            result.items, result.annotations = outcome.items, outcome.annotations
            if first and result.annotations:
                _gold_of_import(project)
            after = {"file": path.name, "format": fmt, "source": result.source.name, "items": result.items,
                     "annotations": result.annotations}
            if ontology is not None:
                result.summary["ontology"] = after["ontology"] = {
                    "file": ontology_name, "slots": len(recorded), "values": sum(map(len, recorded.values())),
                    "recorded": changed}
            audit_record(project=project, actor=user, object_type=AuditObject.IMPORT, object_id=result.source.pk,
                         action="import", after=after)
    except _Rollback:
        result.source = None
    except RecordError as error:
        result.errors = [error.as_dict()]
        result.source = None
    except ImportStopped as error:
        result.errors = [{"record": 0, "field": "", "message": str(error)}]
        result.progress = Progress(read=error.read)
        result.source = None
    finally:
        heap.trim()  # the worker that ran the import does not keep its peak for the next job
    if result.errors:
        project.label_schema = schema_before  # as the rolled-back transaction left it
    return result


def _gold_of_import(project: Project) -> None:
    """The gold of a new project's labelled import. Its failure is the release's to report (which computes it
    again), never the import's: the gold is rolled back to its savepoint and the import goes on."""
    try:
        with transaction.atomic():
            gold_compute(project)
    except DATABASE_LOST:
        raise
    except Exception:
        logger.exception("the gold of %s's import was not computed; its first release computes it", project.slug)


def source_ensure(*, name: str, license: str, project: Project, fmt: str, file_name: str) -> Source:
    """The project's Source of that name (created with its licence on first use), or a default; a licence
    other than the one the source was registered under is refused."""
    spdx = normalise_spdx(license) if license else ""
    if not name:
        name = "KLUE" if fmt == "klue" else f"{project.slug}:{file_name}"
        spdx = spdx or ("CC-BY-SA-4.0" if fmt == "klue" else "NOASSERTION")
    source = Source.objects.filter(project=project, name=name).first()
    if source is None:
        return Source.objects.create(project=project, name=name, license=spdx or "NOASSERTION",
                                     provenance=f"imported from {file_name}")
    if spdx and source.license != spdx:
        raise RecordError(0, "license", f"source {name!r} is already registered under {source.license}, not {spdx}; "
                                        f"use that licence or another source name")
    return source


def _check_options(fmt: str, encoding: str, duplicates: str, approved_only: bool = False) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r}; expected one of {', '.join(ENCODINGS)}")
    if duplicates not in DUPLICATE_POLICIES:
        raise ValueError(f"unknown duplicates policy {duplicates!r}; expected one of {', '.join(DUPLICATE_POLICIES)}")
    if approved_only and fmt != "doccano":
        raise ValueError(f"approved_only is for doccano exports (\"Export only approved documents\"), not {fmt}")


# -- import jobs ----------------------------------------------------------------------------------


def store_upload(upload: IO[bytes], file_name: str, folder: str = "imports") -> str:
    """Store an upload in the ``uploads`` storage as ``<folder>/<random hex><ext>``, enforcing the size limit;
    return its recorded location (config/storage.py)."""
    limit = max_upload_bytes()
    try:
        stored, size = upload_save(upload, folder, Path(file_name).suffix.lower(), limit)
    except UploadTooLarge:
        raise ServiceError(f"the file is larger than the upload limit of {limit // (1024 * 1024)} MB",
                           field="file") from None
    if size == 0:
        upload_delete(stored)
        raise ServiceError("the file is empty", field="file")
    return stored


def import_job_create(
    *,
    project: Project,
    upload: IO[bytes],
    file_name: str,
    fmt: str,
    user: User | None,
    source: str = "",
    license: str = "",
    pii: str | None = None,
    encoding: str = "auto",
    duplicates: str = "skip",
    approved_only: bool = False,
    ontology: IO[bytes] | None = None,
    ontology_file_name: str = "",
) -> ImportJob:
    """Store the upload (and the WoS ontology the dialogues come with, checked now) and queue its import (after
    commit); the job's id is what clients poll."""
    try:
        _check_options(fmt, encoding, duplicates, approved_only)
        resolve_policy(project.options, pii or None)
    except ValueError as error:
        raise ServiceError(str(error), field="options") from None
    suffix = Path(file_name).suffix.lower()
    if suffix not in EXTENSIONS[fmt]:
        raise ServiceError(f"a {fmt} import takes {', '.join(EXTENSIONS[fmt])} files, not {suffix or 'no extension'}",
                           field="file")
    stored_ontology = _ontology_upload(project, ontology, ontology_file_name) if ontology is not None else None
    stored = store_upload(upload, file_name)
    options: dict[str, Any] = {"source": source, "license": license, "pii": pii or None, "encoding": encoding,
                               "duplicates": duplicates, "approved_only": approved_only}
    if stored_ontology is not None:
        options["ontology"] = {"file": Path(ontology_file_name).name, "stored": stored_ontology}
    job = ImportJob.objects.create(project=project, file_name=Path(file_name).name[:255], stored_path=stored,
                                   format=fmt, options=options, created_by=user)
    from .tasks import run_import

    def enqueue() -> None:
        result = run_import.apply_async(args=[job.pk], task_id=f"import-{job.pk}-{secrets.token_hex(4)}")
        ImportJob.objects.filter(pk=job.pk, celery_task_id="").update(celery_task_id=result.id)

    transaction.on_commit(enqueue)
    return job


def _ontology_upload(project: Project, upload: IO[bytes], file_name: str) -> str:
    """Store an ontology upload once it reads as one for this project (else ``ServiceError`` on ``ontology``)."""
    if not project.task.klue_file.ontology:
        raise ServiceError(f"an ontology comes with WoS dialogues (dst); {project.slug} is a {project.task_type} "
                           "project", field="ontology")
    if Path(file_name).suffix.lower() != ".json":
        raise ServiceError("the ontology is a .json file, like wos-v1.1_ontology.json", field="ontology")
    stored = store_upload(upload, file_name)
    problem = ""
    with upload_local(stored) as path:
        try:
            read_ontology(path, Path(file_name).name)
        except RecordError as error:  # a frozen exception: not raised through the context manager
            problem = error.message
    if problem:
        upload_delete(stored)
        raise ServiceError(problem, field="ontology")
    return stored


def _uploads_delete(job: ImportJob) -> None:
    """The job's uploads, gone once the import no longer needs them (they may hold raw personal data)."""
    upload_delete(job.stored_path)
    if isinstance(job.options.get("ontology"), dict):
        upload_delete(job.options["ontology"]["stored"])


def import_job_run(job_id: int, *, on_progress: Callable[[Progress], None] | None = None) -> ImportJob:
    """Run a queued import job; safe to run twice (late acks redeliver a job whose worker died).

    The job row is locked for the whole import and the items are written in the same transaction as the
    job's final status, so a second run either waits and then sees a finished job, or — after a crash,
    which rolled everything back — starts afresh.
    """
    with transaction.atomic():
        job = ImportJob.objects.select_for_update().get(pk=job_id)
        if job.is_finished:
            # Delivered again after the import committed: at most the uploads' deletion is left to do.
            _uploads_delete(job)
            return job
        job.status = ImportStatus.RUNNING
        job.started_at = timezone.now()
        job.save(update_fields=["status", "started_at"])

    try:
        with transaction.atomic():
            job = ImportJob.objects.select_for_update().select_related("project").get(pk=job_id)
            if job.is_finished:
                return job
            options = job.options
            ontology = options.get("ontology") or None
            with upload_local(job.stored_path) as path, (
                    upload_local(ontology["stored"]) if ontology else nullcontext()) as ontology_path:
                result = items_import(job.project, path, job.format, source=options.get("source") or "",
                                      license=options.get("license") or "", pii=options.get("pii") or None,
                                      user=job.created_by, encoding=options.get("encoding") or "auto",
                                      duplicates=options.get("duplicates") or "skip",
                                      approved_only=bool(options.get("approved_only")), on_progress=on_progress,
                                      ontology=ontology_path, ontology_name=ontology["file"] if ontology else "")
            job.status = ImportStatus.SUCCEEDED if result.ok else ImportStatus.FAILED
            job.records_read = result.progress.read
            job.records_screened = result.progress.screened
            job.items_written = result.items
            job.annotations_written = result.annotations
            job.errors = result.errors
            job.summary = result.summary
            job.message = (f"imported {result.items} items and {result.annotations} annotations" if result.ok
                           else f"nothing imported: {len(result.errors)} problem(s), first: "
                                f"{_describe(result.errors[0])}")[:500]
            job.finished_at = timezone.now()
            job.save()
    except DATABASE_LOST:
        raise  # the task retries; the transaction was rolled back
    except Exception as error:
        # Whatever else stopped it (a bug, a killed preparation process, a value the database refused): the
        # import was rolled back; the job must end, never stay running, and the upload must go.
        job = _import_job_stopped(job_id, error)
    # The upload may hold raw personal data: keep it no longer than the import needs it.
    _uploads_delete(job)
    _import_emit(job)
    return job


def _import_emit(job: ImportJob) -> None:
    """Tell the project's webhooks how the import ended (counts only: no file name, no message text)."""
    event = WebhookEvent.IMPORT_FINISHED if job.status == ImportStatus.SUCCEEDED else WebhookEvent.IMPORT_FAILED
    webhooks.emit(job.project_id, event, {
        "import": job.pk, "status": job.status, "records_read": job.records_read,
        "items_written": job.items_written, "annotations_written": job.annotations_written,
        "errors": len(job.errors or [])})


def _import_job_stopped(job_id: int, error: Exception) -> ImportJob:
    read = error.read if isinstance(error, ImportStopped) else 0
    detail = str(error) if isinstance(error, ImportStopped) else redact_message(f"{type(error).__name__}: {error}")
    logger.error("import job %s failed: %s", job_id, detail)
    message = f"nothing imported: {detail}"
    with transaction.atomic():
        job = ImportJob.objects.select_for_update().get(pk=job_id)
        job.status = ImportStatus.FAILED
        job.records_read = read
        job.records_screened = job.items_written = job.annotations_written = 0
        job.errors = [{"record": 0, "field": "", "message": message.replace("\x00", "\\x00")}]
        job.message = message.replace("\x00", "\\x00")[:500]
        job.finished_at = timezone.now()
        job.save()
    return job


def import_job_abandon(job_id: int, error: Exception) -> None:
    """Record an import that the database's loss stopped (retries spent) as failed, if the database is back;
    the import's transaction was rolled back, so nothing was imported. The upload is deleted with it."""
    drop_connection()
    message = (f"nothing imported: the database was lost during the import ({error_summary(error)});"
               " upload the file again")
    try:
        job = ImportJob.objects.get(pk=job_id)
        if ImportJob.objects.filter(pk=job_id, status__in=(ImportStatus.QUEUED, ImportStatus.RUNNING)).update(
                status=ImportStatus.FAILED, message=message[:500], finished_at=timezone.now()):
            _uploads_delete(job)
            job.refresh_from_db()
            _import_emit(job)
    except DATABASE_LOST:
        logger.error("import job %s: %s; the database is still unavailable, so it stays running", job_id, message)


def _describe(error: dict[str, Any]) -> str:
    where = f"record {error['record']}" if error.get("record") else "file"
    field_name = f", {error['field']}" if error.get("field") else ""
    return f"{where}{field_name}: {error['message']}"


# -- screening review -----------------------------------------------------------------------------

REVIEW_DECISIONS = ("keep", "drop")


@transaction.atomic
def screening_review(*, item: Item, decision: str, reason: str, by: User) -> Item:
    """A manager's verdict on a screened or flagged item: keep it for annotation or drop it, with a reason.

    Every open flag on the item is resolved with the same decision and reason.
    """
    if decision not in REVIEW_DECISIONS:
        raise ServiceError(f"unknown decision {decision!r}; expected keep or drop", field="decision")
    if not reason.strip():
        raise ServiceError("give a reason for the decision", field="reason")
    item = Item.objects.select_for_update().get(pk=item.pk)
    resolution = FlagResolution.KEPT if decision == "keep" else FlagResolution.DROPPED
    for flag in Flag.objects.filter(item=item, resolution=FlagResolution.OPEN):
        flag_resolve(flag=flag, resolution=resolution, by=by, note=reason.strip())
    before = item.screening_status
    item.screening_status = ScreeningStatus.KEPT if decision == "keep" else ScreeningStatus.DROPPED
    item.save(update_fields=["screening_status"])
    audit_record(project=item.project_id, actor=by, object_type=AuditObject.SCREENING, object_id=item.pk,
                 action=decision, before={"screening_status": before},
                 after={"screening_status": item.screening_status, "reason": reason.strip()})
    return item


@transaction.atomic
def screening_review_bulk(*, project: Project, decision: str, reason: str, by: User,
                          item_ids: list[int] | None = None, kind: str | None = None) -> int:
    """One decision for many items of the review queue: the ``item_ids`` chosen on the page, or (``None``)
    every item in the queue with an open flag of ``kind`` (every queued item when no kind is given).

    As many statements as for one item, whatever the number of items: the ids are read once, then their open
    flags and the items are updated by one UPDATE each, and one audit event records the decision with its
    filter and the ids. Returns how many items were decided. Items that left the queue meanwhile are skipped.
    """
    if decision not in REVIEW_DECISIONS:
        raise ServiceError(f"unknown decision {decision!r}; expected keep or drop", field="decision")
    if not reason.strip():
        raise ServiceError("give a reason for the decision", field="reason")
    if kind and kind not in FlagKind.values:
        raise ServiceError(f"unknown flag kind {kind!r}", field="kind")
    queue = selectors.review_queue_items(project, kind=kind or None)
    if item_ids is not None:
        queue = queue.filter(pk__in=item_ids)
    ids = list(queue.select_for_update(of=("self",)).values_list("pk", flat=True))
    if not ids:
        return 0
    resolution = FlagResolution.KEPT if decision == "keep" else FlagResolution.DROPPED
    status = ScreeningStatus.KEPT if decision == "keep" else ScreeningStatus.DROPPED
    Flag.objects.filter(item_id__in=ids, resolution=FlagResolution.OPEN).update(
        resolution=resolution, resolution_note=reason.strip(), resolved_by=by, resolved_at=timezone.now())
    Item.objects.filter(pk__in=ids).update(screening_status=status)
    audit_record(project=project, actor=by, object_type=AuditObject.SCREENING, object_id=None,
                 action=f"bulk {decision}",
                 after={"screening_status": status, "reason": reason.strip(), "items": len(ids),
                        "selection": "chosen items" if item_ids is not None else f"all matching kind={kind or 'any'}",
                        "item_ids": ids})
    return len(ids)
