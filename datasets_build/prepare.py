"""Record preparation — parse, validate, screen, hash — in this process or in worker processes.

Everything an import does to one record before it is written depends on that record alone, so it can
run anywhere: :class:`RecordPreparer` turns a chunk of read records into :class:`Prepared` entries (the
item's row and its checked labels encoded for writing, flags, dedup key, MinHash signature and band keys)
or :class:`Failed` ones. The pipeline consumes them in file order and does what needs the whole file or
the database (duplicates, writing). A large file's chunks go to a pool of forked processes, so that the
preparation of later records overlaps the writing of earlier ones and the database's work (in one
process they wait for one another; docs/performance.md); a small file is prepared in place, with no
processes to start.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import logging
import multiprocessing
import os
import signal
import stat
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any, Self, TypeVar

import numpy as np
from django.conf import settings

from annotation import bulk
from annotation.models import Annotation, FlagKind, Item, ScreeningStatus
from annotation.services import item_checked
from annotation.task_types import ParsedRecord, PayloadError, TaskType, reject_nul_characters

from . import dedup, morph
from .interop import IMPORTED_ANNOTATIONS
from .pii import PiiPolicy, Scrubber
from .pii.apply import scrub_identifier, scrub_record
from .pii.redact import redact_message
from .readers import MAX_DEPTH, RecordError
from .screening import (
    ScreenHit,
    let_go_after,
    load_models,
    model_screeners_configured,
    screen_with_models,
    screen_without_models,
)

logger = logging.getLogger(__name__)
#: How the importer's items and labels are written (the rows encoded here, in the workers). An item's screening
#: status is given when it is written: the model screeners may finish with it after its preparation.
ITEM_ROWS = bulk.EncodedRows(Item, writer_fields=("screening_status",))
ANNOTATION_ROWS = bulk.EncodedRows(Annotation, writer_fields=("item", "annotator"))
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


@dataclass
class Prepared:
    """A record ready to write."""

    record_no: int
    external_id: str
    content_hash: str
    group_key: str
    #: :func:`dedup_key` of the item.
    key: str
    #: The item's row without its id and screening status (:data:`ITEM_ROWS`), and per imported label its
    #: annotator's name and row without item and annotator (:data:`ANNOTATION_ROWS`).
    item: dict[str, Any] | str
    annotations: list[tuple[str, dict[str, Any] | str]]
    #: With ``later``, those of its PII findings only so far.
    flags: list[tuple[str, str]]
    #: (type, action) of each PII finding and (kind, category) of each screening hit, for the summary.
    pii: list[tuple[str, str]]
    hits: list[tuple[str, str]]
    #: The model screeners' look at the text, when it comes after the preparation (see :class:`ModelScreening`).
    later: LaterScreening | None = None
    #: The item's text until its chunk is MinHashed, then its signature and band keys.
    text: str = ""
    signature: np.ndarray | None = None
    band_keys: list[int] = field(default_factory=list)

    @property
    def screening_status(self) -> str:
        return ScreeningStatus.NEEDS_REVIEW if self.flags else ScreeningStatus.CLEAR

    def finish_screening(self) -> list[tuple[str, str]]:
        """Complete the screening that the model screeners did after the record was prepared (waiting for them
        if they are not done): the flags of all its hits added. Returns (kind, category) of their hits."""
        later, self.later = self.later, None
        assert later is not None
        found = later.result()
        self.flags += screening_flags(later.hits + found)
        summary = _summarised(found)
        self.hits += summary
        return summary


@dataclass
class LaterScreening:
    """A text that the model screeners must still look at, and the hits the others found in it."""

    text: str
    hits: list[ScreenHit]
    #: Their hits of the text's chunk, and the text's place among them, once it was handed to them.
    found: Future[list[list[ScreenHit]]] | None = None
    index: int = 0
    screening: ModelScreening | None = None

    def result(self) -> list[ScreenHit]:
        assert self.found is not None and self.screening is not None
        try:
            return self.found.result()[self.index]
        except BrokenProcessPool:
            raise self.screening.died() from None


@dataclass
class Screened:
    """What :meth:`RecordPreparer.screened` makes of an item: its payload, labels, meta and ids as stored, its PII
    findings, its flags (kind, note; with ``later``, its PII flags only so far) and screening hits."""

    payload: dict[str, Any]
    content_hash: str
    annotations: list[tuple[str, str, dict[str, Any]]]
    external_id: str
    group_key: str
    meta: dict[str, Any]
    findings: list[dict[str, Any]]
    flags: list[tuple[str, str]]
    hits: list[ScreenHit]
    later: LaterScreening | None
    text: str

    @property
    def screening_status(self) -> str:
        return ScreeningStatus.NEEDS_REVIEW if self.flags else ScreeningStatus.CLEAR


@dataclass
class Failed:
    """A record that cannot be imported (its message already has the record's PII taken out): one that was
    read but is wrong, or (``read`` false) a line that could not be read; ``fatal`` when the file cannot be
    read any further."""

    error: dict[str, Any]
    read: bool = True
    fatal: bool = False


def dedup_key(task: TaskType, payload: dict[str, Any], text_hash: str) -> str:
    """The text hash, plus the structure the text alone does not show: an RE sentence with another entity
    pair is another item. Provenance (guid, url, source…) is not part of the key."""
    structure = {k: v for k, v in payload.items() if k not in task.text_fields and (
        isinstance(v, dict) or (isinstance(v, list) and any(isinstance(x, dict) for x in v)))}
    if not structure:
        return text_hash
    canonical = json.dumps(structure, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(f"{text_hash}\n{canonical}".encode()).hexdigest()


class RecordPreparer:
    """What preparing a record needs of its import: the task type, the project's label schema, the
    item's owners and the PII policy — no database access, so it runs in worker processes too."""

    def __init__(self, *, task: TaskType, label_schema: dict[str, Any], project_id: int, source_id: int | None,
                 policy: PiiPolicy, corpus_annotator: str) -> None:
        self.task = task
        self.label_schema = label_schema
        self.project_id = project_id
        self.source_id = source_id
        self.policy = policy
        self.corpus_annotator = corpus_annotator

    def prepare_chunk(self, entries: list[tuple[int, dict[str, Any]] | Failed], *, models_later: bool = False
                      ) -> list[Prepared | Failed]:
        """Prepare read records (``(record no, record)``; failures pass through) and MinHash the chunk; with
        ``models_later``, the texts the model screeners might hit are left to them (:class:`ModelScreening`)."""
        results: list[Prepared | Failed] = []
        for entry in entries:
            if isinstance(entry, Failed):
                results.append(entry)
                continue
            record_no, record = entry
            try:
                results.append(self.prepare(record_no, record, models_later=models_later))
            except RecordError as error:
                # Messages may quote the raw record; the errors are stored and shown, so its PII is taken out.
                results.append(Failed({**error.as_dict(), "message": redact_message(error.message, record)}))
            except Exception as error:  # a record no check foresaw: the import fails naming it, never hangs
                message = f"the record could not be prepared ({type(error).__name__}: {error})"
                results.append(Failed({"record": record_no, "field": "", "message": redact_message(message, record)}))
        prepared = [r for r in results if isinstance(r, Prepared)]
        signatures = dedup.signatures(p.text for p in prepared)
        for p, signature, keys in zip(prepared, signatures, dedup.batch_band_keys(signatures), strict=True):
            p.text, p.signature, p.band_keys = "", signature, keys
        return results

    def prepare(self, record_no: int, record: dict[str, Any], *, models_later: bool = False) -> Prepared:
        task = self.task
        record = task.complete_record(record)
        try:
            if problem := _structure_problem(record, 0):
                if problem == "depth":
                    raise PayloadError("", f"the record nests more than {MAX_DEPTH} levels deep")
                reject_nul_characters(record)  # raises, naming the field
            # Labels a reader of another tool's export (interop.py) has already split per author: they are the
            # record's only labels, and its text is never read for more.
            split_labels = record.get(IMPORTED_ANNOTATIONS) or []
            if IMPORTED_ANNOTATIONS in record:
                record = {k: v for k, v in record.items() if k != IMPORTED_ANNOTATIONS}
                parsed: ParsedRecord = task.parse_tool_record(record)
            else:
                parsed = task.parse_record(record)
        except PayloadError as error:
            raise RecordError(record_no, error.field, error.message) from None
        annotations = [(a.annotator, a.stage, a.payload) for a in parsed.annotations]
        annotations += [(a["annotator"], a["stage"], a["payload"]) for a in split_labels]
        self._check_one_label_each(record_no, annotations)
        screened = self.screened(record_no, parsed.payload, meta=parsed.meta, annotations=annotations,
                                 external_id=parsed.external_id, group_key=parsed.group_key, models_later=models_later)
        item = ITEM_ROWS.encode({
            "project_id": self.project_id, "source_id": self.source_id, "payload": screened.payload,
            "external_id": screened.external_id, "meta": screened.meta, "content_hash": screened.content_hash,
            "group_key": screened.group_key, "split": parsed.split, "pii_findings": screened.findings,
        })
        return Prepared(
            record_no, screened.external_id, screened.content_hash, screened.group_key,
            dedup_key(task, screened.payload, screened.content_hash), item,
            [(who, ANNOTATION_ROWS.encode({"stage": stage, "payload": label, "imported": True}))
             for who, stage, label in screened.annotations],
            screened.flags, pii=[(f["type"], f["action"]) for f in screened.findings],
            hits=_summarised(screened.hits), later=screened.later, text=screened.text)

    def screened(self, record_no: int, payload: dict[str, Any], *, meta: dict[str, Any],
                 annotations: list[tuple[str, str, dict[str, Any]]], external_id: str, group_key: str,
                 models_later: bool = False) -> Screened:
        """An item's payload, labels, meta and ids checked, pseudonymized under the policy and screened: what
        every item gets before it is stored, imported or created one at a time (:mod:`.item_screening`).
        Raises :class:`RecordError` naming the field."""
        task = self.task
        (checked, text_hash), annotations = self._validate(record_no, payload, annotations, prefix="")
        try:
            task.validate_carried(meta, item=checked, schema=self.label_schema)
        except PayloadError as error:
            raise RecordError(record_no, error.field, error.message) from None

        tokens = payload.get("tokens")
        scrubber = Scrubber(self.policy, single_words=isinstance(tokens, list))
        scrubbed = scrub_record(
            scrubber=scrubber, task_slug=task.slug, text_fields=task.text_fields,
            payload=payload, meta=meta, annotations=[p for _, _, p in annotations],
        )
        if scrubbed.leaks:
            raise RecordError(record_no, "pii", f"{len(scrubbed.leaks)} pseudonymized value(s) still appear in the "
                                                f"record after replacement; the record was not imported")
        annotations = [(who, stage, label) for (who, stage, _), label in zip(annotations, scrubbed.annotations,
                                                                             strict=True)]
        if scrubber.replaced and isinstance(tokens, list):
            _refresh_tokens(tokens, scrubbed.payload.get("tokens") or [])
        if scrubber.replaced:  # otherwise the item checked above stands as it is
            (checked, text_hash), annotations = self._validate(record_no, scrubbed.payload, annotations,
                                                               prefix="after pseudonymizing: ")

        # The guid is exported and shown like the text: screened under the same policy.
        screened_id, guid_findings = scrub_identifier(external_id, self.policy)
        findings = scrubbed.findings
        if guid_findings:
            findings = [*findings, *guid_findings]
            if group_key == external_id:  # WoS: a dialogue's group is its guid
                group_key = screened_id
        flags = pii_flags(findings)
        text = task.item_text(checked)
        hits, to_models = screen_without_models(text)
        later = None
        if to_models and models_later:
            later = LaterScreening(text, hits)
        else:
            if to_models:
                hits += screen_with_models(text)
            flags += screening_flags(hits)
        return Screened(checked, text_hash, annotations, screened_id, group_key, scrubbed.meta, findings, flags, hits,
                        later, text)

    def _check_one_label_each(self, record_no: int, annotations: list[tuple[str, str, dict[str, Any]]]) -> None:
        """An item holds one label per annotator and stage: a second one is the record's error (the database
        would refuse it later, with a traceback instead of a reason)."""
        seen: set[tuple[str, str]] = set()
        for i, (annotator, stage, _) in enumerate(annotations):
            if (annotator, stage) in seen:
                raise RecordError(record_no, f"annotations[{i}]", f"a second label by annotator "
                                                                  f"{annotator or self.corpus_annotator} at stage "
                                                                  f"{stage}; an item has one per annotator and stage")
            seen.add((annotator, stage))

    def _validate(self, record_no: int, payload: dict[str, Any], annotations: list[tuple[str, str, dict[str, Any]]],
                  *, prefix: str) -> tuple[tuple[dict[str, Any], str], list[tuple[str, str, dict[str, Any]]]]:
        try:
            checked_item = item_checked(self.task, payload)
        except PayloadError as error:
            raise RecordError(record_no, error.field, prefix + error.message) from None
        checked = []
        for i, (annotator, stage, label) in enumerate(annotations):
            try:
                normalised = self.task.validate_annotation(label, item=checked_item[0], schema=self.label_schema,
                                                           stage=stage)
            except PayloadError as error:
                where = f"annotations[{i}]" + (f".{error.field}" if error.field else "")
                who = f" (annotator {annotator or self.corpus_annotator}, stage {stage})"
                raise RecordError(record_no, where, prefix + error.message + who) from None
            checked.append((annotator, stage, normalised))
        return checked_item, checked


def pii_flags(findings: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The flag (kind, note) of PII findings that were only detected: the item waits for a reviewer."""
    # Most records have no finding, and a Counter costs more to build than the rest of this.
    detected = Counter(f["type"] for f in findings if f["action"] == "detected") if findings else None
    if not detected:
        return []
    return [(FlagKind.PII, "PII detected and kept for review: "
             + ", ".join(f"{t} ×{n}" for t, n in sorted(detected.items())))]


def screening_flags(hits: list[ScreenHit]) -> list[tuple[str, str]]:
    """The flags (kind, note) of the toxicity and bias screeners' hits, offsets in the item's text."""
    flags = []
    for kind in (FlagKind.TOXIC, FlagKind.BIAS) if hits else ():
        found = [h for h in hits if h.kind == kind]
        if found:
            flags.append((kind, "; ".join(f"{h.category} at [{h.start}, {h.end}) by {h.rule}" for h in found)))
    return flags


def _summarised(hits: list[ScreenHit]) -> list[tuple[str, str]]:
    return [(h.kind, h.category) for h in hits if h.kind in (FlagKind.TOXIC, FlagKind.BIAS)]


_SCALARS = (int, float, bool, type(None))


def _structure_problem(value: Any, depth: int) -> str:
    """``"nul"`` when a key or string holds U+0000 (PostgreSQL cannot store it), ``"depth"`` when dicts and lists
    nest more than MAX_DEPTH levels (everything that walks a record recurses), else ``""``."""
    if isinstance(value, str):
        return "nul" if "\x00" in value else ""
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            return "depth"
        for key, inner in value.items():
            if isinstance(key, str) and "\x00" in key:
                return "nul"
            if not isinstance(inner, _SCALARS) and (problem := _structure_problem(inner, depth + 1)):
                return problem
    elif isinstance(value, list):
        if depth >= MAX_DEPTH:
            return "depth"
        for inner in value:
            if not isinstance(inner, _SCALARS) and (problem := _structure_problem(inner, depth + 1)):
                return problem
    return ""


def _refresh_tokens(before: list[Any], after: list[Any]) -> None:
    """Eojeol whose form a pseudonym changed get their morphemes and tags from the analyser again."""
    for old, new in zip(before, after, strict=False):
        if isinstance(old, dict) and isinstance(new, dict) and old.get("form") != new.get("form") and new.get("form"):
            columns = morph.analyse_sentence(str(new["form"]))
            new["lemma"] = " ".join(columns["lemma"])
            new["pos"] = "+".join(columns["pos"])


# -- running it -----------------------------------------------------------------------------------

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
        self._before = set(multiprocessing.active_children())
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
            self._processes.extend(p for p in multiprocessing.active_children() if p not in self._before)
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
