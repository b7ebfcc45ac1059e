"""Helpers of the fault tests: their own Celery workers (started and killed by the test), the test
database's URL for subprocesses, and a generated JSONL corpus."""

from __future__ import annotations

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

from config.celery import app as celery_app
from tests.conftest import ROOT, is_postgres

#: The broker gives an unacknowledged message of a dead worker back after this many seconds.
VISIBILITY_TIMEOUT = 4
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

    def __init__(self, queue: str, log: Path) -> None:
        self.queue = queue
        self.name = f"faults-{os.getpid()}-{time.monotonic_ns()}@{socket.gethostname()}"
        celery = shutil.which("celery", path=str(Path(sys.executable).parent)) or "celery"
        self._log: IO[bytes] = log.open("ab")
        self.process = subprocess.Popen(
            [celery, "-A", "tests.faults.celery_app", "worker", "--pool=prefork", "--concurrency=1", "--loglevel=INFO",
             "--without-mingle", "--without-gossip", "-Q", queue, "-n", self.name],
            cwd=ROOT, env=subprocess_env(CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY_TIMEOUT), GOLDSET_FAULTS_QUEUE=queue),
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

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
        self._log.close()


def wait_until(condition: Callable[[], object], timeout: float, what: str, every: float = 0.05) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
