"""Reading a query's rows ahead, on a thread of its own with its own database connection.

A release streams three queries (items, annotations, gold) and turns their rows into records. Read in the
build's thread, each ``FETCH`` — and the first, which runs the whole query — waits for PostgreSQL while this
process does nothing, and PostgreSQL waits while the rows become records. Read ahead, the three queries run
at once, each on its connection, and their rows come while the previous ones are being turned into records.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import suppress
from itertools import islice
from typing import Any

from django.db import connection, connections

#: Rows handed over at a time, and how many such chunks may wait: a few thousand rows, however big the query.
CHUNK = 500
CHUNKS = 8
_END = object()


def may_read_ahead() -> bool:
    """Whether another connection sees what this one sees: PostgreSQL outside a transaction (a test's
    transaction, or SQLite's one writer, would hide it)."""
    return connection.vendor == "postgresql" and not connection.in_atomic_block


class ReadAhead(threading.Thread):
    """The values of ``produce()`` read on a thread of its own (with its own connection), started at once and
    handed over in bounded chunks when iterated; where :func:`may_read_ahead` says no, iterating runs
    ``produce()`` in the calling thread instead. Iterate it once; :meth:`close` it in any case."""

    def __init__(self, produce: Callable[[], Iterator[Any]], *, name: str = "read-ahead") -> None:
        super().__init__(name=name, daemon=True)
        self._produce = produce
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=CHUNKS)
        self._closed = threading.Event()
        self._ahead = may_read_ahead()
        if self._ahead:
            with connection.cursor() as cursor:  # the caller's sort memory (a release raises it) goes along
                cursor.execute("SELECT current_setting('work_mem')")
                self._work_mem = cursor.fetchone()[0]
            self.start()

    def run(self) -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('work_mem', %s, false)", [self._work_mem])
            values = self._produce()
        except BaseException as error:
            self._put(error)
            connections.close_all()
            return
        try:
            while chunk := list(islice(values, CHUNK)):
                if not self._put(chunk):
                    return
            self._put(_END)
        except BaseException as error:  # raised in the reading thread by __iter__
            self._put(error)
        finally:
            with suppress(Exception):  # its cursor goes with the connection in any case
                values.close()  # type: ignore[attr-defined]
            connections.close_all()  # this thread's connections

    def _put(self, value: Any) -> bool:
        """Hand ``value`` over, waiting for room; ``False`` once closed."""
        while not self._closed.is_set():
            with suppress(queue.Full):
                self._queue.put(value, timeout=0.1)
                return True
        return False

    def __iter__(self) -> Iterator[Any]:
        if not self._ahead:
            yield from self._produce()
            return
        while True:
            value = self._queue.get()
            if value is _END:
                return
            if isinstance(value, BaseException):
                raise value
            yield from value

    def close(self) -> None:
        """Stop reading and wait for the thread to end (its connection closed)."""
        self._closed.set()
        if self._ahead:
            self.join()
