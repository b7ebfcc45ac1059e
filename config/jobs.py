"""Background jobs that outlive a lost database.

A database restart or failover breaks the worker's connection in the middle of a job, and then the job
cannot even record its error. The release and import tasks therefore retry on ``OperationalError`` /
``InterfaceError`` (with backoff, a bounded number of times) instead of failing — and, acknowledged late,
being lost with their release or import job left ``building``/``running``. Their services are idempotent on
redelivery, so a retry is safe; once the retries are spent, the job is recorded as an error if it can be.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from celery import Task
from django.db import InterfaceError, OperationalError, connection

T = TypeVar("T")

#: The errors of a lost (restarting, unreachable) database.
DATABASE_LOST = (OperationalError, InterfaceError)


class RetriesSpent(OperationalError):
    """A lost database that the job will not retry (any more): Celery lets it through, and the web
    middleware still answers it with a 503, being an ``OperationalError``."""


#: Celery task options: retry after 15, 30, 60, 120, 240 and 480 s (about 16 minutes in all). An eager
#: ``apply()`` that keeps errors in its result retries at once; see :func:`will_retry` for the embedded default.
RETRY_ON_LOST_DATABASE: dict[str, Any] = {
    "autoretry_for": DATABASE_LOST,
    "dont_autoretry_for": (RetriesSpent,),
    "retry_backoff": 15,
    "retry_backoff_max": 480,
    "retry_jitter": False,
    "max_retries": 6,
}


def error_summary(error: BaseException) -> str:
    """The first line of a database error's message (drivers add detail lines), or its class name."""
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def drop_connection() -> None:
    """Close this thread's broken connection so that the next query (the retry's, or the error's record)
    connects afresh: Django does not reconnect a connection that failed. A worker reuses its connection
    across tasks, and an eager retry runs in this very process. A connection inside a caller's transaction
    is left alone (closing it would end that transaction)."""
    if not connection.in_atomic_block:
        connection.close()


def will_retry(task: Task) -> bool:
    """Whether this failed attempt of ``task`` will be retried. Not once ``max_retries`` are spent, nor in an
    eager run that propagates errors (the embedded default: the job runs inside the web request or the
    command, which gets the error instead), where Celery cannot retry."""
    if task.request.is_eager and task.app.conf.task_eager_propagates:
        return False
    return task.request.retries < task.max_retries


def run_or_retry(task: Task, run: Callable[[], T], abandon: Callable[[BaseException], object]) -> T:
    """Run a job's service for ``task``: on a lost database drop the broken connection and let Celery
    retry, or, when no retry is left, ``abandon`` the job (record it as an error) and raise ``RetriesSpent``."""
    try:
        return run()
    except DATABASE_LOST as error:
        drop_connection()
        if not will_retry(task):
            abandon(error)
            raise RetriesSpent(str(error)) from error
        raise
