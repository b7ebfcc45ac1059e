"""The import's writes in a thread of their own, on the import's connection and inside its transaction.

While the database takes one batch (PostgreSQL parsing and indexing a ``COPY`` in its own process; SQLite
inside its library, which lets go of the GIL), the importer already reads, checks and deduplicates the next:
in one thread it waited for each batch to be written before it took the next (docs/performance.md). One
batch is written at a time, in the order given, so the statements are the same, in the same order, as
written inline. The importer's own queries (its lookups of earlier items) wait until the batch being written
is done: a connection runs one statement at a time, and the lookups must see what the import wrote.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections

T = TypeVar("T")


class BatchWriter:
    """Runs callables (a batch's writes) one after the other in one thread on this thread's connection.
    :meth:`submit` returns once the previous one is done (raising its error, if it failed), so that at most one
    batch is held beside the one being checked."""

    def __init__(self) -> None:
        self._connection = connections[DEFAULT_DB_ALIAS]
        self._owner = threading.get_ident()
        self._pending: Future[Any] | None = None
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="import-writer", initializer=self._share)

    def _share(self) -> None:
        # Django's connections are per thread: this thread uses the importer's (its transaction).
        connections[DEFAULT_DB_ALIAS] = self._connection

    def submit(self, write: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``write(*args)`` once the previous one is done; its result (or error) in the future returned."""
        self.wait()
        self._pending = self._executor.submit(write, *args)
        return self._pending

    def wait(self) -> None:
        """Until the batch being written is written; its error, if it failed, is raised here."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def _before_query(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        if threading.get_ident() == self._owner:
            self.wait()
        return execute(sql, params, many, context)


@contextmanager
def batch_writer() -> Iterator[BatchWriter]:
    """A :class:`BatchWriter` for the block; every batch it was given is written (or has failed) when the
    block ends, and a failed batch's error is raised — unless the block failed itself: then its own error is,
    once the batch being written is done. The block's queries (through Django's cursors) wait for that batch;
    everything it writes goes through :meth:`BatchWriter.submit`."""
    writer = BatchWriter()
    connection = writer._connection
    connection.inc_thread_sharing()
    try:
        with connection.execute_wrapper(writer._before_query):
            try:
                yield writer
            except BaseException:
                with suppress(Exception):  # the block's own error is the one to report
                    writer.wait()
                raise
            writer.wait()
    finally:
        writer._executor.shutdown(wait=True)
        connection.dec_thread_sharing()
