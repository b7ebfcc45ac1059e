"""Background jobs that outlive a lost database.

A database restart or failover breaks the worker's connection in the middle of a job, and then the job
cannot even record its error. The release and import tasks therefore retry on ``OperationalError`` /
``InterfaceError`` (with backoff, a bounded number of times) instead of failing — and, acknowledged late,
being lost with their release or import job left ``building``/``running``. Their services are idempotent on
redelivery, so a retry is safe; once the retries are spent, the job is recorded as an error if it can be.
"""

from __future__ import annotations

from typing import Any

from django.db import InterfaceError, OperationalError, connection

#: The errors of a lost (restarting, unreachable) database.
DATABASE_LOST = (OperationalError, InterfaceError)

#: Celery task options: retry after 15, 30, 60, 120, 240 and 480 s (about 16 minutes in all). Eager runs
#: (``apply()``, the embedded default) retry at once.
RETRY_ON_LOST_DATABASE: dict[str, Any] = {
    "autoretry_for": DATABASE_LOST,
    "retry_backoff": 15,
    "retry_backoff_max": 480,
    "retry_jitter": False,
    "max_retries": 6,
}


def drop_connection() -> None:
    """Close this thread's broken connection so that the next query (the retry's, or the error's record)
    connects afresh: Django does not reconnect a connection that failed. A worker reuses its connection
    across tasks, and an eager retry runs in this very process. A connection inside a caller's transaction
    is left alone (closing it would end that transaction)."""
    if not connection.in_atomic_block:
        connection.close()
