"""The import's writes in a thread of their own, on the import's connection and inside its transaction.

While the database takes one batch (PostgreSQL parsing and indexing a ``COPY`` in its own process; SQLite
inside its library, which lets go of the GIL), the importer already reads, checks and deduplicates the next:
in one thread it waited for each batch to be written before it took the next (docs/performance.md). One
write runs at a time, in the order given, so the statements are the same, in the same order, as written
inline; a few may wait their turn, so that a write held up (by the model screeners, or by the database) does
not hold the importer up. The importer's own queries (its lookups of earlier items) wait until every write
given is done: a connection runs one statement at a time, and the lookups must see what the import wrote.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections

T = TypeVar("T")


class BatchWriter:
    """Runs callables (a batch's writes) one after the other in one thread on this thread's connection.
    :meth:`submit` returns once fewer than ``ahead`` are waiting or running (raising the error of one that
    failed), so that the batches held beside the one being checked are bounded. After a write failed, those
    given after it are not run: they raise its error."""

    def __init__(self, ahead: int = 1) -> None:
        self._connection = connections[DEFAULT_DB_ALIAS]
        self._owner = threading.get_ident()
        self._ahead = ahead
        self._pending: deque[Future[Any]] = deque()
        self._failed: BaseException | None = None
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="import-writer", initializer=self._share)

    def _share(self) -> None:
        # Django's connections are per thread: this thread uses the importer's (its transaction).
        connections[DEFAULT_DB_ALIAS] = self._connection

    def submit(self, write: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``write(*args)`` after the writes given before; its result (or error) in the future returned."""
        while len(self._pending) >= self._ahead:
            self._pending.popleft().result()
        future = self._executor.submit(self._run, write, *args)
        self._pending.append(future)
        return future

    def _run(self, write: Callable[..., T], *args: Any) -> T:
        if self._failed is not None:
            raise self._failed
        try:
            return write(*args)
        except BaseException as error:
            self._failed = error
            raise

    def wait(self) -> None:
        """Until every write given is done; the error of one that failed is raised here."""
        while self._pending:
            self._pending.popleft().result()

    def _before_query(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        if threading.get_ident() == self._owner:
            self.wait()
        return execute(sql, params, many, context)


@contextmanager
def batch_writer(ahead: int = 1) -> Iterator[BatchWriter]:
    """A :class:`BatchWriter` for the block; every batch it was given is written (or has failed) when the
    block ends, and a failed batch's error is raised — unless the block failed itself: then its own error is,
    once the writes given are done. The block's queries (through Django's cursors) wait for those writes;
    everything it writes goes through :meth:`BatchWriter.submit`."""
    writer = BatchWriter(ahead)
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
