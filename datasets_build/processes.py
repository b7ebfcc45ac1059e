"""The import's forked processes: the preparation workers and the model screeners' process.

:func:`prepared_records` gives the pipeline every read record prepared (:class:`.prepare.RecordPreparer`), in
the order read: in place for a small file, else chunk by chunk in a pool of forked workers, with the model
screeners in a process of their own (:class:`ModelScreening`). Each process the import forks lets go of the
sockets it inherited and dies with the importer (:func:`_start_worker`); one that dies makes the import fail
with :class:`WorkerDied` (docs/import.md, "A killed importer takes its processes with it").
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import stat
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack, contextmanager
from dataclasses import fields
from operator import attrgetter
from typing import Any, Self, TypeVar

import numpy as np
from django.conf import settings

from . import dedup
from .prepare import Failed, LaterScreening, Prepared, RecordPreparer
from .screening import ScreenHit, let_go_after, load_models, model_screeners_configured, screen_with_models

logger = logging.getLogger(__name__)
#: Records per chunk handed to a worker: large enough that the hand-over (pickling) is a small part of
#: its cost and the MinHash of a chunk is one numpy pass, small enough to keep every process busy.
CHUNK_SIZE = 250
#: Chunks handed out and not yet consumed: enough for the workers to prepare the next batches while the
#: pipeline writes one (BATCH_SIZE records), few enough to bound the memory.
IN_FLIGHT_CHUNKS = 12
#: The default's cap: the importer itself keeps up with a few workers only (docs/performance.md), and a
#: machine's core count (a container sees its host's) must not become dozens of processes.
MAX_DEFAULT_PROCESSES = 4
#: How much a preparation worker gives way to the importer and its database server (``nice``): they are the
#: import's critical path, and the workers, which prepare ahead of them, took their CPU on 2 cores.
PREPARATION_NICENESS = 10

T = TypeVar("T")


def import_processes(file_bytes: int) -> int:
    """Worker processes for a file of ``file_bytes``: none (prepare in place) below
    ``GOLDSET_IMPORT_PARALLEL_MIN_MB``, else ``GOLDSET_IMPORT_PROCESSES`` (0: one per core this process may
    use, at most :data:`MAX_DEFAULT_PROCESSES`). One per core beside the importer and the database server
    paid best on 2 cores (docs/performance.md)."""
    if file_bytes < settings.GOLDSET_IMPORT_PARALLEL_MIN_MB * 1024 * 1024:
        return 0
    return settings.GOLDSET_IMPORT_PROCESSES or min(MAX_DEFAULT_PROCESSES, len(os.sched_getaffinity(0)))


#: The preparer of the import a worker process serves (given to it when forked: inherited, never pickled).
_worker_preparer: RecordPreparer | None = None


def _start_worker(parent: int, preparer: RecordPreparer | None = None) -> None:
    """Start a process forked by the import (``parent``: the importer's pid). It lets go of every socket it
    inherited and dies with the importer (:func:`_drop_inherited_sockets`, :func:`_die_with`). A worker forked
    from a Celery worker inherits its signal handlers; the pool stops workers with SIGTERM, which must simply
    end them. A preparation worker also gives way to the importer (:data:`PREPARATION_NICENESS`)."""
    global _worker_preparer
    _drop_inherited_sockets()
    _die_with(parent)
    _worker_preparer = preparer
    if preparer is not None:
        os.nice(PREPARATION_NICENESS)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, signal.SIG_DFL)


def _drop_inherited_sockets() -> None:
    """Point every socket descriptor inherited from the importer at ``/dev/null``. The processes use none of
    them, and holding one keeps its connection open on the server's side after the importer is gone: the
    database's, with the import's open transaction and the job's row lock, which the redelivered job would wait
    for forever (issue 35). ``dup2`` over the descriptor, not ``close``: the connection objects the fork copied
    still name it, and anything that ever wrote to it (psycopg's Terminate message when the object is finalised,
    or Django's ``close()``) would end the importer's session on the shared socket, or write into whatever file
    took the number next; ``/dev/null`` swallows it. No shutdown is sent, so the importer's connections live on."""
    try:
        descriptors = [int(name) for name in os.listdir("/proc/self/fd")]
    except FileNotFoundError:  # no /proc (not Linux): the database connections, which Django knows, at least
        from django.db import connections

        descriptors = [c.connection.fileno() for c in connections.all(initialized_only=True)
                       if c.connection is not None and c.vendor == "postgresql"]
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in descriptors:
            try:
                if fd != null and stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.dup2(null, fd)
            except OSError:  # the listing's own descriptor, closed since
                continue
    finally:
        os.close(null)


#: ``prctl`` option: the signal a process receives when the thread that forked it ends (linux/prctl.h).
_PR_SET_PDEATHSIG = 1
#: How often the fallback watchdog looks for the importer, in seconds.
_PARENT_WATCH_SECONDS = 1.0


def _die_with(parent: int) -> None:
    """End this process when the importer (``parent``) ends, however it ends (SIGKILL included, where no handler
    of its own runs): the kernel sends SIGKILL when it dies (Linux's ``PR_SET_PDEATHSIG``), and a watchdog thread
    that sees this process adopted by another (systems without it) ends it too. Without them, a process
    waiting for its next chunk would wait forever: its siblings hold the task queue's pipe open."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            logger.warning("prctl(PR_SET_PDEATHSIG) failed: errno %d", ctypes.get_errno())
    if os.getppid() != parent:  # it died before the line above
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_WATCH_SECONDS)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="importer-watchdog", daemon=True).start()


#: A worker's result: entries with each Prepared as a tuple of these fields, and the chunk's signatures and
#: band keys as two arrays. Unpickling a dataclass per record, and a numpy array per signature, cost the
#: importer more than rebuilding the entries from this (docs/performance.md).
_PACKED_FIELDS = tuple(f.name for f in fields(Prepared) if f.name not in ("text", "signature", "band_keys"))
_packed_fields = attrgetter(*_PACKED_FIELDS)
Packed = tuple[list[tuple[Any, ...] | Failed], np.ndarray, np.ndarray]


def _prepare_in_worker(entries: list[tuple[int, dict[str, Any]] | Failed]) -> Packed:
    assert _worker_preparer is not None
    results = _worker_preparer.prepare_chunk(entries, models_later=True)
    prepared = [r for r in results if isinstance(r, Prepared)]
    signatures = np.array([p.signature for p in prepared], dtype=np.uint32).reshape(-1, dedup.NUM_PERM)
    band_keys = np.array([p.band_keys for p in prepared], dtype=np.int64).reshape(-1, dedup.BANDS)
    return [r if isinstance(r, Failed) else _packed_fields(r) for r in results], signatures, band_keys


def _unpacked(packed: Packed) -> Iterator[Prepared | Failed]:
    entries, signatures, band_keys = packed
    rows = iter(zip(signatures, band_keys.tolist(), strict=True))
    for entry in entries:
        if isinstance(entry, Failed):
            yield entry
        else:
            signature, keys = next(rows)
            yield Prepared(*entry, signature=signature, band_keys=keys)


def prepared_records(preparer: RecordPreparer, entries: Iterable[tuple[int, dict[str, Any]] | Failed],
                     processes: int = 0) -> Iterator[Prepared | Failed]:
    """Every entry prepared, in the order read. With ``processes``, chunks are prepared by that many forked
    workers, at most IN_FLIGHT_CHUNKS in flight, so memory stays bounded whatever the file's size, and the
    model screeners run in a process of their own (:class:`ModelScreening`): a record they must still look at
    comes with its ``later`` screening, to finish (:meth:`Prepared.finish_screening`) before it is written."""
    chunks = _chunks(entries)
    if processes <= 0:
        with let_go_after():
            for chunk in chunks:
                yield from preparer.prepare_chunk(chunk)
        return
    logger.info("preparing records in %d worker processes", processes)
    # The workers never touch the database: the parent's connection, inherited with its open transaction,
    # is let go of without a word to the server (_drop_inherited_sockets), and they die with the importer
    # (_die_with), so a killed importer's transaction and locks end with it.
    # Fork: the workers inherit the preparer (as the initializer's argument: two imports in one process's
    # threads each give their own), the task registry and the loaded lexicons instead of starting afresh.
    # An executor rather than multiprocessing.Pool: a worker killed in the middle (the OOM killer) breaks it,
    # and every wait then fails at once, where a Pool would replace the worker and wait for the lost chunk
    # forever — or hang when stopped, on a queue lock the dead worker held.
    with ExitStack() as stack:
        screening = stack.enter_context(ModelScreening()) if model_screeners_configured() else None
        workers = stack.enter_context(_Processes(processes, initargs=(preparer,)))
        pending: deque[Future[Packed]] = deque()

        def prepared(future: Future[Packed]) -> list[Prepared | Failed]:
            chunk = list(_unpacked(workers.result(future)))
            if screening is not None:
                screening.hand([p.later for p in chunk if isinstance(p, Prepared) and p.later is not None])
            return chunk

        for chunk in chunks:
            pending.append(workers.submit(_prepare_in_worker, chunk))
            if len(pending) >= IN_FLIGHT_CHUNKS:
                yield from prepared(pending.popleft())
        while pending:
            yield from prepared(pending.popleft())


class _Processes:
    """Forked processes running the import's functions, as a context manager: on leaving it (also when the
    consumer stops early or fails) the tasks not started are dropped, those running finish (a fraction of a
    second), and the processes exit. A process that died makes every wait raise :class:`WorkerDied`."""

    cancel_on_exit = True
    #: How :class:`WorkerDied` names one of these processes.
    which = "a preparation process"

    def __init__(self, processes: int, initargs: tuple[Any, ...] = ()) -> None:
        self._executor = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork"),
                                             initializer=_start_worker, initargs=(os.getpid(), *initargs))
        self._processes: list[multiprocessing.process.BaseProcess] = []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._executor.shutdown(wait=True, cancel_futures=self.cancel_on_exit)

    def submit(self, function: Callable[..., T], *args: Any) -> Future[T]:
        try:
            with _children_allowed():  # the first submit forks the processes
                future = self._executor.submit(function, *args)
        except BrokenProcessPool:
            raise self.died() from None
        if not self._processes:
            # The executor's own process objects (forked by this first submit), not multiprocessing's list of live
            # children: a process killed at once is reaped from that list before it could be read, and its exit
            # code (the signal the error names) would be lost.
            self._processes.extend((self._executor._processes or {}).values())  # type: ignore[attr-defined]
        return future

    def result(self, future: Future[T]) -> T:
        try:
            return future.result()
        except BrokenProcessPool:
            raise self.died() from None

    def died(self) -> WorkerDied:
        # The executor stops the others (SIGTERM): their exit codes follow soon. The wait is generous because a
        # busy machine can take more than a second to reap them, and without a code the reason says less.
        for process in self._processes:
            process.join(timeout=5)
        codes = sorted((p.exitcode for p in self._processes if p.exitcode),
                       key=lambda code: code == -signal.SIGTERM)
        return WorkerDied(codes[0] if codes else None, self.which)


class ModelScreening(_Processes):
    """The model screeners of an import prepared by workers, in a process of their own. Forked before any model
    is loaded, it loads them while the workers prepare the first records (loaded in the importer before the
    workers were forked, Kiwi held everything up for a second: docs/performance.md); then it screens the texts
    the workers could not clear without them, a chunk's at a time. When it ends, the models' memory goes with
    it. The hits of a corpus's texts are the same as screening each text whole in one process. Texts given
    to it are screened even when the import stops (batches the writer holds may wait for them)."""

    cancel_on_exit = False
    which = "the model screening process"

    def __init__(self) -> None:
        super().__init__(1)
        self.submit(load_models)

    def hand(self, later: list[LaterScreening]) -> None:
        """Give these texts to the model screeners (their hits follow in each one's ``found``)."""
        if not later:
            return
        found = self.submit(_screen_with_models, [screening.text for screening in later])
        for index, screening in enumerate(later):
            screening.text, screening.found, screening.index, screening.screening = "", found, index, self


def _screen_with_models(texts: list[str]) -> list[list[ScreenHit]]:
    return [screen_with_models(text) for text in texts]


class WorkerDied(RuntimeError):
    """A process of the import (``which``: a preparation process, the model screening process) ended in the
    middle of it (killed: out of memory, a signal)."""

    def __init__(self, exitcode: int | None, which: str) -> None:
        how = (f"killed by signal {signal.Signals(-exitcode).name}" if exitcode is not None and exitcode < 0
               and -exitcode in signal.valid_signals() else f"exit code {exitcode}" if exitcode
               else "killed or crashed")
        super().__init__(f"{which} stopped in the middle of the import ({how}); if it ran out of "
                         f"memory, give the worker more or import the file in parts")


@contextmanager
def _children_allowed() -> Iterator[None]:
    """Let a daemonic process start the pool: Celery's prefork workers are daemons, and multiprocessing
    refuses them children because it could not stop those when the daemon is killed. The executor here
    is shut down before the import returns or raises, and a process whose importer is killed is killed with
    it (:func:`_die_with`), so none outlives its import."""
    config = multiprocessing.current_process()._config  # type: ignore[attr-defined]
    daemon = config.get("daemon")
    config["daemon"] = False
    try:
        yield
    finally:
        if daemon is not None:
            config["daemon"] = daemon


def _chunks(entries: Iterable[tuple[int, dict[str, Any]] | Failed]) -> Iterator[
        list[tuple[int, dict[str, Any]] | Failed]]:
    chunk: list[tuple[int, dict[str, Any]] | Failed] = []
    for entry in entries:
        chunk.append(entry)
        if len(chunk) >= CHUNK_SIZE or (isinstance(entry, Failed) and entry.fatal):
            yield chunk
            chunk = []
    if chunk:
        yield chunk
