"""Two Celery workers on one queue: every job of a mixed batch runs exactly once and gives the right result.

The two worker processes are started here (not the session ``live_worker``) on the run's queue
(``TEST_QUEUE``) against the PostgreSQL test database; if the session worker is alive it stops consuming
for the duration, so the jobs are shared by exactly these two. Each worker logs to its own file; the
``Task name[id] succeeded`` lines show which worker ran what, and that no job ran twice.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from annotation import services
from annotation.agreement import services as agreement_services
from annotation.models import AgreementReport, Assignment, AssignmentStatus, Item, JobStatus
from annotation.tasks import expire_leases
from config.celery import app as celery_app
from datasets_build.models import ImportJob, ImportStatus
from datasets_build.services import import_job_create
from exports import services as release_services
from exports.models import Release, ReleaseStatus
from tests.builders import load_records, sample_records
from tests.conftest import ROOT, TEST_QUEUE, is_postgres

pytestmark = [pytest.mark.worker, pytest.mark.postgres]
SUCCEEDED = re.compile(r"Task ([\w.]+)\[([^\]]+)\] succeeded")


def _database_url(settings_dict: dict[str, Any]) -> str:
    """The test database as a URL for the worker processes (they read ``DATABASE_URL``)."""
    auth = settings_dict["USER"] or ""
    if settings_dict.get("PASSWORD"):
        auth += f":{settings_dict['PASSWORD']}"
    return f"postgres://{auth}@{settings_dict['HOST'] or ''}:{settings_dict['PORT'] or 5432}/{settings_dict['NAME']}"


@pytest.fixture
def two_workers(django_db_setup: None, tmp_path: Path) -> Iterator[dict[str, Path]]:
    """Two ``celery worker`` processes (concurrency 1 each) on the run's queue; yields name → log file."""
    import os

    if not os.environ.get("CELERY_BROKER_URL"):
        pytest.skip("CELERY_BROKER_URL not set: no broker for live workers")
    if not is_postgres():
        pytest.skip("live workers need a shared database (set DATABASE_URL to PostgreSQL)")
    from django.db import connection

    env = {**os.environ, "DATABASE_URL": _database_url(connection.settings_dict)}
    celery = shutil.which("celery", path=str(Path(sys.executable).parent)) or "celery"
    host = socket.gethostname()
    session_worker = f"test-worker-{os.getpid()}@{host}"  # conftest's live_worker, if this run started it
    celery_app.control.cancel_consumer(TEST_QUEUE, destination=[session_worker])
    names = [f"scale-{i}-{os.getpid()}@{host}" for i in (1, 2)]
    logs = {name: tmp_path / f"worker-{i}.log" for i, name in enumerate(names, 1)}
    processes = []
    for name, log in logs.items():
        processes.append(subprocess.Popen(
            [celery, "-A", "config", "worker", "--loglevel=INFO", "--concurrency=1", "--without-mingle",
             "--without-gossip", "-Q", TEST_QUEUE, "-n", name, "--logfile", str(log)],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        ))
    try:
        deadline = time.monotonic() + 90
        waiting = set(names)
        while waiting and time.monotonic() < deadline:
            for process in processes:
                assert process.poll() is None, f"a celery worker exited with {process.returncode}"
            for reply in celery_app.control.ping(destination=list(waiting), timeout=1.0):
                waiting -= set(reply)
        assert not waiting, f"workers did not answer a ping within 90 s: {waiting}"
        yield logs
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        celery_app.control.add_consumer(TEST_QUEUE, destination=[session_worker])


def _wait(predicate: Any, what: str, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"{what} did not finish within {timeout} s")


def _jsonl(prefix: str, n: int) -> bytes:
    records = ({"guid": f"{prefix}-{i}", "title": f"{prefix} 워커 기사 {i}번", "label": "사회"} for i in range(n))
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records).encode("utf-8")


@pytest.mark.django_db(transaction=True)
def test_two_workers_share_a_mixed_batch_and_run_each_job_once(two_workers, make_project, annotator_in, settings,
                                                                tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"  # uploads are stored under an absolute path the workers read
    # Imports: three uploads into three projects.
    imports = []
    for i in range(3):
        project = make_project("tc", slug=f"scale-import-{i}")
        job = import_job_create(project=project, upload=SimpleUploadedFile(f"s{i}.jsonl", _jsonl(f"s{i}", 300 + i)),
                                file_name=f"s{i}.jsonl", fmt="jsonl", user=project.created_by)
        imports.append((job.pk, project, 300 + i))
    # Agreement reports and releases: two projects with corpus annotations (three annotators per item).
    reports, releases = [], []
    for i in range(2):
        project = make_project("tc", slug=f"scale-release-{i}")
        load_records(project, sample_records("tc", 200, prefix=f"r{i}"))  # 20 dev records: enough for a verdict
        report, queued = agreement_services.report_request(project=project)
        assert queued
        reports.append(report.pk)
        release = release_services.release_request(project=project, version="1.0.0", formats=["klue", "jsonl"],
                                                   out=tmp_path / "releases", agreement=False)
        releases.append(release.pk)
    # Lease expiry: two stale leases, then two runs of the periodic task (the second finds nothing).
    lease_project = make_project("tc", k=1, slug="scale-leases")
    for title in ("만료될 첫 기사", "만료될 둘째 기사"):
        services.item_create(project=lease_project, payload={"title": title})
    # Both leases are taken before either goes stale: a take expires its project's stale leases itself.
    leased = [services.assignment_next(project=lease_project, user=annotator_in(lease_project)).pk for _ in range(2)]
    Assignment.objects.filter(pk__in=leased).update(lease_expires_at=timezone.now() - timedelta(hours=1))
    expiries = [expire_leases.delay()]
    assert expiries[0].get(timeout=120) == 2
    expiries.append(expire_leases.delay())
    assert expiries[1].get(timeout=120) == 0

    _wait(lambda: all(ImportJob.objects.get(pk=pk).is_finished for pk, _, _ in imports), "imports")
    _wait(lambda: all(AgreementReport.objects.get(pk=pk).status in (JobStatus.DONE, JobStatus.FAILED)
                      for pk in reports), "agreement reports")
    finished = (ReleaseStatus.PASSED, ReleaseStatus.INCONCLUSIVE, ReleaseStatus.UNCHECKED, ReleaseStatus.FAILED,
                ReleaseStatus.ERROR)
    _wait(lambda: all(Release.objects.get(pk=pk).status in finished for pk in releases), "releases")

    for pk, project, n in imports:
        job = ImportJob.objects.get(pk=pk)
        assert job.status == ImportStatus.SUCCEEDED, job.errors
        assert job.items_written == n and Item.objects.filter(project=project).count() == n
    for pk in reports:
        report = AgreementReport.objects.get(pk=pk)
        assert report.status == JobStatus.DONE, report.error
        assert report.data
    for pk in releases:
        release = Release.objects.get(pk=pk)
        assert release.status == ReleaseStatus.PASSED, release.error
        assert release.split_counts == {"train": 160, "dev": 20, "test": 20}
    assert Assignment.objects.filter(item__project=lease_project, status=AssignmentStatus.EXPIRED).count() == 2

    # Every job ran once, and the two workers shared the batch.
    time.sleep(1)  # the "succeeded" line is logged just after the result is stored
    runs: Counter[str] = Counter()
    per_worker: dict[str, set[str]] = {}
    for name, log in two_workers.items():
        found = SUCCEEDED.findall(log.read_text(encoding="utf-8")) if log.exists() else []
        runs.update(task_id for _, task_id in found)
        per_worker[name] = {task for task, _ in found}
    import_tasks = {ImportJob.objects.get(pk=pk).celery_task_id for pk, _, _ in imports}
    expected = import_tasks | {result.id for result in expiries}
    assert expected <= set(runs), f"jobs not seen in the worker logs: {expected - set(runs)}"
    assert sum(runs.values()) == 3 + 2 + 2 + 2, runs  # imports, reports, releases, expiries
    assert all(count == 1 for count in runs.values()), f"jobs run more than once: {runs}"
    assert all(per_worker.values()), f"a worker ran nothing: {per_worker}"
