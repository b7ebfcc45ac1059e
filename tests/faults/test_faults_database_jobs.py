"""The database lost in the middle of a release build or an import job (issue 9, faults).

The job's step loses its connection: on PostgreSQL the test really terminates the job's backend
(``pg_terminate_backend`` from a second connection), so the next query fails the way a database restart
makes it fail; on SQLite the step raises ``OperationalError``. The Celery task must retry on a fresh
connection and finish with the right result, or, when every retry fails, leave the release or job in a
visible error state rather than ``building``/``running`` for ever. The tasks run eagerly with errors not
propagated, as on a worker: Celery then runs each retry at once (without the countdown).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import OperationalError, connection
from django.utils import timezone

from annotation.models import AuditEvent, AuditObject, Item
from config.celery import app as celery_app
from config.jobs import RetriesSpent
from datasets_build import services as import_services
from datasets_build.models import ImportJob, ImportStatus
from datasets_build.tasks import run_import
from exports import services as release_services
from exports.models import Release, ReleaseStatus
from exports.tasks import release_build_task
from tests.builders import load_records, sample_records
from tests.conftest import is_postgres
from tests.faults.helpers import (
    assert_imported_once,
    database_url,
    upload_import,
    wait_for_import_end,
    wait_for_import_midway,
)

ATTEMPTS = 1 + release_build_task.max_retries


def lose_database() -> None:
    """Cut this process's database connection as a restart would (SQLite: fail as if it had)."""
    if not is_postgres():
        raise OperationalError("database unavailable (simulated on SQLite)")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with psycopg.connect(database_url(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])


def failing(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, *, times: int) -> list[tuple[Any, ...]]:
    """Make ``module.name`` lose the database on its first ``times`` calls, then run the real step (which
    queries the database, so on PostgreSQL it is the real query that fails). Returns the call log: each
    call's positional arguments."""
    original: Callable[..., Any] = getattr(module, name)
    calls: list[tuple[Any, ...]] = []

    def step(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        if len(calls) <= times:
            lose_database()
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, step)
    return calls


@pytest.fixture
def worker_semantics() -> Iterator[None]:
    """Eager runs that keep errors in the result, as a worker does; only then does Celery retry eagerly."""
    previous = celery_app.conf.task_eager_propagates
    celery_app.conf.task_eager_propagates = False
    yield
    celery_app.conf.task_eager_propagates = previous


def data_files(release: Release) -> dict[str, str]:
    return dict(release.files.exclude(split="").values_list("path", "sha256"))


@pytest.mark.django_db(transaction=True)
def test_release_build_that_loses_the_database_while_recording_files_is_retried_and_built(make_project, tmp_path,
                                                                                           monkeypatch,
                                                                                           worker_semantics):
    project = make_project("tc")
    load_records(project, sample_records("tc", 200))  # 20 dev records: enough for the check's verdict
    reference = release_services.release_build(project, version="1.0.0", seed=2, formats="klue,jsonl",
                                               out=tmp_path / "reference")
    assert reference.status == ReleaseStatus.PASSED, reference.error
    release = release_services.release_create(project=project, version="1.0.1", seed=2, formats="klue,jsonl",
                                              out=tmp_path / "faulty")
    calls = failing(monkeypatch, release_services, "_record_files", times=1)

    assert release_build_task.apply(args=[release.pk]).get()["status"] == ReleaseStatus.PASSED
    release.refresh_from_db()
    assert len(calls) == 2  # the lost database, then the retry
    assert release.status == ReleaseStatus.PASSED and release.error == "" and release.finished_at is not None
    assert release_services.release_verify(release)["ok"]
    assert data_files(release) == data_files(reference) and data_files(release)
    assert [p.name for p in (tmp_path / "faulty").iterdir()] == [Path(release.out_dir).name]  # no .partial/.records
    assert release.split_counts == reference.split_counts


@pytest.mark.django_db(transaction=True)
def test_release_build_whose_retries_are_spent_ends_as_a_build_error(make_project, tmp_path, monkeypatch,
                                                                     worker_semantics):
    project = make_project("tc")
    load_records(project, sample_records("tc", 30))
    release = release_services.release_create(project=project, version="1.0.0", seed=2, formats="jsonl", out=tmp_path)
    calls = failing(monkeypatch, release_services, "_record_files", times=ATTEMPTS)

    result = release_build_task.apply(args=[release.pk])
    assert result.failed() and isinstance(result.result, RetriesSpent)
    release.refresh_from_db()
    assert len(calls) == ATTEMPTS
    assert release.status == ReleaseStatus.ERROR and "database was lost" in release.error
    assert release.finished_at is not None and not release.files.exists()
    assert list(tmp_path.iterdir()) == []  # nothing half-written is left


def tc_upload(n: int) -> SimpleUploadedFile:
    lines = "".join(json.dumps({"guid": f"d-{i}", "title": f"데이터베이스가 끊긴 기사 제목 {i}번", "label": "사회"},
                               ensure_ascii=False) + "\n" for i in range(n))
    return SimpleUploadedFile("d.jsonl", lines.encode("utf-8"))


@pytest.mark.django_db(transaction=True)
def test_import_that_loses_the_database_before_committing_is_retried_and_imports_once(api, make_project, settings,
                                                                                     tmp_path, monkeypatch,
                                                                                     worker_semantics):
    settings.MEDIA_ROOT = tmp_path
    project = make_project("tc")
    # The import's last step inside its transaction, after every item is written.
    calls = failing(monkeypatch, import_services, "audit_record", times=1)

    response = api(project.created_by).post(f"/api/projects/{project.pk}/imports/",
                                            {"file": tc_upload(250), "format": "jsonl"}, format="multipart")
    assert response.status_code == 202, response.content
    job = ImportJob.objects.get(pk=response.data["id"])
    assert len(calls) == 2
    assert job.status == ImportStatus.SUCCEEDED and job.items_written == 250, job.errors
    assert Item.objects.filter(project=project).count() == 250
    assert sorted(Item.objects.filter(project=project).values_list("external_id", flat=True)) == sorted(
        f"d-{i}" for i in range(250))
    assert AuditEvent.objects.filter(project=project, object_type=AuditObject.IMPORT).count() == 1
    assert not Path(job.stored_path).exists()

    assert run_import.delay(job.pk).get()["status"] == ImportStatus.SUCCEEDED  # delivered again: not re-run
    assert len(calls) == 2 and Item.objects.filter(project=project).count() == 250


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_import_that_loses_the_database_during_a_copy_is_retried_and_imports_once(api, make_project, settings,
                                                                                 tmp_path, monkeypatch,
                                                                                 worker_semantics):
    """The import writes by ``COPY`` through the driver's own cursor, outside Django's error translation: a
    connection lost there must still be the ``OperationalError`` the task retries, not an unknown error that
    leaves the job ``running`` for ever (what a live worker's cut connection ran into under load)."""
    if not is_postgres():
        pytest.skip("COPY is PostgreSQL's; elsewhere the import writes with bulk_create")
    settings.MEDIA_ROOT = tmp_path
    project = make_project("tc")
    calls = failing(monkeypatch, psycopg.Cursor, "copy", times=1)
    response = api(project.created_by).post(f"/api/projects/{project.pk}/imports/",
                                            {"file": tc_upload(250), "format": "jsonl"}, format="multipart")
    assert response.status_code == 202, response.content
    job = ImportJob.objects.get(pk=response.data["id"])
    assert job.status == ImportStatus.SUCCEEDED and job.items_written == 250, (job.status, job.message)
    copies = [str(statement) for _cursor, statement, *_ in calls]
    assert len(copies) > 1 and copies.count(copies[0]) == 2  # the lost COPY, then the retry's
    assert Item.objects.filter(project=project).count() == 250
    assert AuditEvent.objects.filter(project=project, object_type=AuditObject.IMPORT).count() == 1


@pytest.mark.django_db(transaction=True)
def test_import_whose_retries_are_spent_is_recorded_as_failed_with_nothing_imported(api, make_project, settings,
                                                                                   tmp_path, monkeypatch,
                                                                                   worker_semantics):
    settings.MEDIA_ROOT = tmp_path
    project = make_project("tc")
    calls = failing(monkeypatch, import_services, "audit_record", times=ATTEMPTS)

    response = api(project.created_by).post(f"/api/projects/{project.pk}/imports/",
                                            {"file": tc_upload(40), "format": "jsonl"}, format="multipart")
    assert response.status_code == 202, response.content
    job = ImportJob.objects.get(pk=response.data["id"])
    assert len(calls) == ATTEMPTS
    assert job.status == ImportStatus.FAILED and "database was lost" in job.message and job.finished_at
    assert not Item.objects.filter(project=project).exists()
    assert not Path(job.stored_path).exists()


@pytest.mark.django_db(transaction=True)
def test_an_eager_build_does_not_retry_and_records_the_error_for_its_caller(make_project, tmp_path, monkeypatch):
    """The embedded default (no broker) runs the job inside the request or command, where Celery cannot
    retry: the caller gets the error (the web middleware makes it a 503) and the release is a build error."""
    project = make_project("tc")
    load_records(project, sample_records("tc", 30))
    release = release_services.release_create(project=project, version="1.0.0", seed=2, formats="jsonl", out=tmp_path)
    calls = failing(monkeypatch, release_services, "_record_files", times=1)

    with pytest.raises(RetriesSpent):
        release_build_task.delay(release.pk)
    release.refresh_from_db()
    assert len(calls) == 1 and release.status == ReleaseStatus.ERROR and "database was lost" in release.error


@pytest.mark.worker
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_import_whose_database_connection_is_cut_on_a_live_worker_is_retried_and_imported_once(
        start_worker, api, make_project, settings, tmp_path):
    """A live worker's connection is terminated by PostgreSQL in the middle of an import (what a restart or
    failover does to it): the task is retried 15 s later on a fresh connection and imports the file once."""
    settings.MEDIA_ROOT = tmp_path
    project = make_project("tc")
    start_worker()
    job = upload_import(api, project, tmp_path)
    wait_for_import_midway(api, project, job)

    cut = timezone.now()
    with connection.cursor() as cursor:
        # The import's backend, the only one inside a transaction: other backends (another live worker's
        # idle connection) are left alone, so that no other test inherits a cut connection.
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                       "AND backend_type = 'client backend' AND xact_start IS NOT NULL")
        assert cursor.fetchone()[0] == 1
    job = wait_for_import_end(project, job)
    assert job.started_at > cut and job.finished_at - cut >= timedelta(seconds=15)  # the retry, after its countdown
    assert_imported_once(project, job)
