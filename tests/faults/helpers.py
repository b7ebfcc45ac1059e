"""Helpers of the fault tests: their own Celery workers (started and killed by the test), the test
database's URL for subprocesses, a generated JSONL corpus, and an import through the API watched until it
ends (the ``start_worker`` fixture is in this folder's ``conftest.py``)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import AuditEvent, AuditObject, Item, Project
from config.celery import app as celery_app
from datasets_build.models import ImportJob, ImportStatus
from datasets_build.tasks import run_import
from tests.conftest import ROOT, is_postgres

#: The broker gives an unacknowledged message of a dead worker back after this many seconds.
VISIBILITY_TIMEOUT = 4
#: Records of the import the fault tests interrupt: enough for a worker to be killed while it reads them.
IMPORT_RECORDS = 6000
TC_LABELS = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]


def require_postgres_and_broker() -> str:
    """The broker URL; skip the test when there is no broker or no shared (PostgreSQL) database."""
    broker = os.environ.get("CELERY_BROKER_URL")
    if not broker:
        pytest.skip("CELERY_BROKER_URL not set: no broker for a worker to kill")
    if not is_postgres():
        pytest.skip("worker and server subprocesses need a shared database (set DATABASE_URL to PostgreSQL)")
    return broker


def database_url(host: str | None = None, port: int | None = None) -> str:
    """The URL of the test database (optionally through another host and port, e.g. a proxy)."""
    from django.db import connection

    s = connection.settings_dict
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    return (f"postgres://{s['USER'] or ''}{password}@{host or s['HOST'] or '127.0.0.1'}:{port or s['PORT'] or 5432}"
            f"/{s['NAME']}")


def subprocess_env(**extra: str) -> dict[str, str]:
    """This process's environment pointed at the test database, with this checkout first on the path."""
    env = dict(os.environ)
    env["DATABASE_URL"] = database_url()
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra)
    return env


def write_tc_jsonl(path: Path, n: int, *, prefix: str = "f") -> Path:
    """``n`` YNAT-like records (title + label) as JSONL."""
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            label = TC_LABELS[i % 7]
            title = f"{label} 분야 {i}번째 기사 제목 {i * 7919 % 10007}"
            out.write(json.dumps({"guid": f"{prefix}-{i}", "title": title, "label": label}, ensure_ascii=False) + "\n")
    return path


class Worker:
    """``celery -A tests.faults.celery_app worker --pool=prefork --concurrency=1`` (the project's app, see there) on
    its own queue, in its own process group
    so that the test can kill it and its pool child together (what a lost machine or ``docker kill`` does)."""

    def __init__(self, queue: str, log: Path, *, parallel: bool = False) -> None:
        """``parallel``: every import prepares its records in processes forked by the pool child (in production,
        files from ``GOLDSET_IMPORT_PARALLEL_MIN_MB``)."""
        self.queue = queue
        self.name = f"faults-{os.getpid()}-{time.monotonic_ns()}@{socket.gethostname()}"
        celery = shutil.which("celery", path=str(Path(sys.executable).parent)) or "celery"
        self._log: IO[bytes] = log.open("ab")
        self.process = subprocess.Popen(
            [celery, "-A", "tests.faults.celery_app", "worker", "--pool=prefork", "--concurrency=1", "--loglevel=INFO",
             "--without-mingle", "--without-gossip", "-Q", queue, "-n", self.name],
            cwd=ROOT, env=subprocess_env(CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY_TIMEOUT), GOLDSET_FAULTS_QUEUE=queue,
                                         **({"GOLDSET_IMPORT_PARALLEL_MIN_MB": "0", "GOLDSET_IMPORT_PROCESSES": "2"}
                                            if parallel else {})),
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while not celery_app.control.ping(destination=[self.name], timeout=1.0):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"celery worker did not start; see {log}")

    @property
    def pool_children(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in children.read_text().split()] if children.exists() else []

    def kill_pool_child(self) -> int:
        """SIGKILL the pool process running the task; the worker itself lives on and starts another."""
        (child,) = self.pool_children
        os.kill(child, signal.SIGKILL)
        return child

    def kill(self) -> None:
        """SIGKILL the worker's main process and its pool child at once."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self._log.close()

    def kill_main_process(self) -> None:
        """SIGKILL the worker's main process alone: what becomes of its pool child and of the processes that one
        forked is up to them."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):  # an orphan that outlived the worker goes with the test
            os.killpg(self.process.pid, signal.SIGKILL)
        if not self._log.closed:
            self._log.close()


def descendants(pid: int) -> list[int]:
    """The processes ``pid`` forked, and theirs, and so on."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, waiting for a parent to reap it, holds nothing and does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def wait_until(condition: Callable[[], object], timeout: float, what: str, every: float = 0.05) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


# -- an import the tests interrupt -------------------------------------------------------------------


def upload_import(api: Callable, project: Project, tmp_path: Path) -> ImportJob:
    data = write_tc_jsonl(tmp_path / "corpus.jsonl", IMPORT_RECORDS).read_bytes()
    response = api(project.created_by).post(f"/api/projects/{project.pk}/imports/", {
        "file": SimpleUploadedFile("corpus.jsonl", data), "format": "jsonl"}, format="multipart")
    assert response.status_code == 202, response.data
    return ImportJob.objects.get(pk=response.data["id"])


def wait_for_import_midway(api: Callable, project: Project, job: ImportJob) -> None:
    """Until the worker has read part of the file (its progress, as the API reports it), nothing visible."""

    def midway() -> bool:
        detail = api(project.created_by).get(f"/api/projects/{project.pk}/imports/{job.pk}/").data
        assert detail["status"] in (ImportStatus.QUEUED, ImportStatus.RUNNING), "the import finished before the kill"
        return detail["progress"]["read"] >= 1000

    wait_until(midway, 120, "the import to get under way")
    assert not Item.objects.filter(project=project).exists()


def wait_for_import_end(project: Project, job: ImportJob, timeout: float = 240) -> ImportJob:
    """Until the job finishes; all along, the project has either none of the file's items or all of them."""
    seen: set[int] = set()

    def finished() -> bool:
        seen.add(Item.objects.filter(project=project).count())
        job.refresh_from_db()
        return job.is_finished

    wait_until(finished, timeout, "the import to be redone", every=0.1)
    assert seen <= {0, IMPORT_RECORDS}, f"a partial import was visible: {sorted(seen)} items"
    return job


def assert_imported_once(project: Project, job: ImportJob) -> None:
    assert job.status == ImportStatus.SUCCEEDED, job.errors
    assert (job.records_read, job.items_written, job.annotations_written) == (IMPORT_RECORDS,) * 3
    items = Item.objects.filter(project=project)
    assert items.count() == IMPORT_RECORDS
    assert items.values("external_id").distinct().count() == IMPORT_RECORDS
    assert AuditEvent.objects.filter(project=project, object_type=AuditObject.IMPORT).count() == 1
    assert not Path(job.stored_path).exists()  # the upload is deleted once imported

    # The message delivered once more (a worker lost after the commit, before its ack, even before it deleted
    # the upload): nothing is imported again, and the upload goes.
    Path(job.stored_path).write_bytes(b"{}\n")
    assert run_import.delay(job.pk).get(timeout=120)["status"] == ImportStatus.SUCCEEDED
    assert not Path(job.stored_path).exists()
    assert Item.objects.filter(project=project).count() == IMPORT_RECORDS
    assert AuditEvent.objects.filter(project=project, object_type=AuditObject.IMPORT).count() == 1
