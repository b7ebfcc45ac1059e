"""The fault tests' fixture: Celery workers of their own, which a test may kill."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator

import pytest

from config.celery import app as celery_app
from tests.conftest import ROOT
from tests.faults.helpers import Worker, require_postgres_and_broker


@pytest.fixture
def start_worker() -> Iterator[Callable[..., Worker]]:
    """Start workers on a queue of this test's own (so no other worker takes its jobs); stopped at the end."""
    require_postgres_and_broker()
    queue = f"goldset-faults-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    previous = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = queue
    workers: list[Worker] = []

    def start(*, parallel: bool = False) -> Worker:
        workers.append(Worker(queue, ROOT / "celery-faults-worker.log", parallel=parallel))
        return workers[-1]

    yield start
    celery_app.conf.task_default_queue = previous
    for worker in workers:
        worker.stop()
