"""The import pipeline: reader → preparer → deduplicator → writer, driven here.

* reader — :mod:`.readers` (JSONL, CSV) or :mod:`.klue_formats` (KLUE files) yield ``(record no, dict)``;
* preparer — :mod:`.prepare`, one record at a time and in worker processes for a large file
  (:mod:`.processes`): raw DP sentences get their eojeol columns from Kiwi (:mod:`.morph`), the task type's
  ``parse_record`` splits the record into item payload, meta and imported annotations, ``item_checked`` and
  ``validate_annotation`` check the item and every label, PII is pseudonymized with offset remapping
  (:mod:`.pii`), toxicity/bias screened (:mod:`.screening`), the content hash and MinHash signature computed;
* deduplicator — exact duplicates within the file (here, in file order) and against the project (per batch,
  looked up by :mod:`.batch_selectors`);
* writer — ``COPY`` (PostgreSQL; executemany elsewhere: :mod:`.batch_services` on ``annotation/bulk.py``) in
  batches inside the caller's transaction, in a thread of its own (:mod:`.writer`); each batch given to it is
  indexed for near duplicates (groups: :mod:`.near_duplicates`) here while the writer writes, and the writer
  then writes its groups. A batch whose texts the model screeners still screen (in a process of their own,
  :class:`.processes.ModelScreening`) waits for them in the writer, not here.

All or nothing: after the first bad record nothing more is written, but reading and checking go on so
the report lists every problem (up to the cap); the caller then rolls the transaction back. Memory is
bounded by the batch size: records stream in, duplicates are checked against the database.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from itertools import compress
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import DatabaseError, reset_queries

from annotation import bulk
from annotation.display import CORPUS_ANNOTATOR
from annotation.models import Item, Project, Source
from annotation.task_types import TaskType

from . import batch_selectors, batch_services, dedup
from .batch_services import ImportedAnnotators, foreign_keys_checked_as_written
from .heap import long_lived_objects_frozen
from .interop import READERS as INTEROP_READERS
from .near_duplicates import NearDuplicateIndex
from .pii import PiiPolicy
from .pii.redact import redact_message
from .prepare import Failed, Prepared, RecordPreparer, dedup_key
from .processes import import_processes, prepared_records
from .readers import FatalReadError, RecordError, iter_csv, iter_jsonl, max_record_chars
from .writer import BatchWriter, batch_writer

FORMATS = ("klue", "jsonl", "csv", *INTEROP_READERS)
DUPLICATE_POLICIES = ("skip", "refuse")
#: Runs of the items' record numbers kept in the job's summary (a file whose every other record is skipped would
#: need one per item; past this many, the later items' records are not known).
RECORD_RUNS_KEPT = 100_000
#: Records per written batch: larger batches spread the per-batch queries thinner but hold more in memory
#: (docs/performance.md, "Import: batches and preparation workers"); memory stays bounded by it.
BATCH_SIZE = 1000
#: Writes that may wait their turn in the writer (two a batch: its items, then its groups): enough for the
#: batches prepared while the model screeners load their models (about a second) to be checked and indexed
#: meanwhile, few enough to bound the memory.
WRITES_AHEAD = 24


def max_errors() -> int:
    return int(settings.GOLDSET_IMPORT_MAX_ERRORS)


class ImportStopped(Exception):
    """An import that an unforeseen error stopped (not a record's problem: those are reported as errors);
    ``read`` records had been read when it happened."""

    def __init__(self, read: int, error: Exception) -> None:
        detail = redact_message(f"{type(error).__name__}: {error}").replace("\x00", "\\x00")
        super().__init__(f"the import stopped after {read} record(s) were read: {detail}")
        self.read = read


@dataclass
class Progress:
    read: int = 0
    screened: int = 0
    written: int = 0


@dataclass
class PipelineOutcome:
    items: int = 0
    annotations: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    progress: Progress = field(default_factory=Progress)

    @property
    def ok(self) -> bool:
        return not self.errors


class ImportPipeline:
    """One run over one file into one project. Call :meth:`run` inside a transaction."""

    def __init__(
        self, *, project: Project, path: Path, fmt: str, source: Source, policy: PiiPolicy,
        encoding: str = "auto", duplicates: str = "skip", approved_only: bool = False,
        on_progress: Callable[[Progress], None] | None = None,
    ) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
        if duplicates not in DUPLICATE_POLICIES:
            raise ValueError(f"unknown duplicates policy {duplicates!r}; expected one of "
                             f"{', '.join(DUPLICATE_POLICIES)}")
        self.project = project
        self.task = project.task
        self.path = path
        self.fmt = fmt
        self.source = source
        self.policy = policy
        self.encoding = encoding
        self.duplicates = duplicates
        self.approved_only = approved_only
        self.on_progress = on_progress
        self.outcome = PipelineOutcome()
        self._annotators = ImportedAnnotators(project, source)
        self._batch: list[Prepared] = []
        self._batch_hashes: dict[str, int] = {}
        self._batch_ids: set[str] = set()
        self._pii = Counter[tuple[str, str]]()
        self._hits = Counter[tuple[str, str]]()
        self._flagged = 0
        #: Records read since the last write whose model screening comes later, and what it found (counted in
        #: the writer's thread, which finishes it).
        self._screened_later: list[Prepared] = []
        self._later_hits = Counter[tuple[str, str]]()
        self._later_flagged = 0
        self._duplicates: list[dict[str, Any]] = []
        self._duplicate_count = 0
        #: What this import has written, while the project held nothing else (see dedup.SeenKeys).
        self._seen: dedup.SeenKeys | None = None
        #: The near-duplicate groups of the batches written (set while :meth:`run` runs).
        self._index: NearDuplicateIndex | None = None
        #: Writes each checked batch while the next is read and checked (set while :meth:`run` runs).
        self._writer: BatchWriter | None = None
        #: Item ids taken ahead of the writes (PostgreSQL), so that a batch is indexed without waiting for them.
        self._ids = bulk.ReservedIds(Item)
        #: The batch given to the writer last (its ids, or their future) and not yet indexed for near duplicates.
        self._unindexed: tuple[list[int] | Future[list[int]], list[Prepared]] | None = None
        #: Which record of the file each written item came from, as runs ``[first item id, its record number,
        #: length]`` of consecutive ids from consecutive records (an item's provenance names its file line).
        self._record_runs: list[list[int]] = []

    # -- driving ----------------------------------------------------------------------------------

    def run(self) -> PipelineOutcome:
        outcome = self.outcome
        if not Item.objects.filter(project=self.project).exists():
            self._seen = dedup.SeenKeys()
        self._index = NearDuplicateIndex(self.project, self._seen)
        preparer = RecordPreparer(task=self.task, label_schema=self.project.label_schema, project_id=self.project.pk,
                                  source_id=self.source.pk if self.source else None, policy=self.policy,
                                  corpus_annotator=CORPUS_ANNOTATOR)
        try:
            with long_lived_objects_frozen(), foreign_keys_checked_as_written(), \
                    batch_writer(WRITES_AHEAD) as self._writer:
                self._consume(prepared_records(preparer, self._records(),
                                               import_processes(self.path.stat().st_size)))
        except DatabaseError:
            raise  # to the caller, whose transaction rolls back (a lost database: the job retries)
        except Exception as error:
            raise ImportStopped(outcome.progress.read, error) from error
        if self.on_progress:
            self.on_progress(outcome.progress)
        outcome.summary = self._summary()
        return outcome

    def _consume(self, entries: Iterator[Prepared | Failed]) -> None:
        cap = max_errors()
        outcome = self.outcome
        for entry in entries:
            if isinstance(entry, Failed):
                self._error(entry.error)
                if entry.fatal:
                    break
                outcome.progress.read += entry.read
            else:
                outcome.progress.read += 1
                outcome.progress.screened += 1
                self._tally(entry)
                if entry.later is not None:
                    self._screened_later.append(entry)
                try:
                    prepared = self._deduplicate(entry)
                except RecordError as error:
                    self._error(error.as_dict())
                else:
                    if prepared is not None and outcome.ok:
                        self._batch.append(prepared)
                        if len(self._batch) >= BATCH_SIZE:
                            self._flush()
            if outcome.progress.read % BATCH_SIZE == 0 and self.on_progress:
                self.on_progress(outcome.progress)
            if len(outcome.errors) >= cap:
                outcome.errors.append({"record": 0, "field": "", "message": f"stopped after {cap} errors; "
                                                                             f"fix these and import again"})
                break
        if outcome.ok:
            self._flush()
        if outcome.ok:
            self._index_written()
            assert self._writer is not None and self._index is not None
            self._writer.submit(batch_services.bands_write, self.project, *self._index.take_unwritten())

    def _error(self, error: dict[str, Any]) -> None:
        if "\x00" in error["field"] or "\x00" in error["message"]:  # quoted from the record; unstorable
            error = {**error, "field": error["field"].replace("\x00", "\\x00"),
                     "message": error["message"].replace("\x00", "\\x00")}
        self.outcome.errors.append(error)
        self._batch.clear()  # nothing more will be written; the caller rolls back

    def _records(self) -> Iterator[tuple[int, dict[str, Any]] | Failed]:
        """The file's records in order, its problems as :class:`Failed` (their messages' PII taken out)."""
        try:
            for entry in self._read():
                if isinstance(entry, RecordError):
                    yield Failed({**entry.as_dict(), "message": redact_message(entry.message)}, read=False)
                else:
                    yield entry
        except FatalReadError as error:
            yield Failed({**error.as_dict(), "message": redact_message(error.message)}, read=False, fatal=True)
        except _klue_format_error() as error:
            yield Failed({"record": error.record_no, "field": error.field,
                          "message": redact_message(error.message)}, read=False, fatal=True)

    def _read(self) -> Iterator[tuple[int, dict[str, Any]] | RecordError]:
        return read_records(self.path, self.fmt, self.task, self.encoding, approved_only=self.approved_only)

    # -- deduplicate ------------------------------------------------------------------------------

    def _tally(self, prepared: Prepared) -> None:
        # Most records have no finding and no hit: Counter.update of an empty list cost 1.5 µs each.
        if prepared.pii:
            self._pii.update(prepared.pii)
        if prepared.hits:
            self._hits.update(prepared.hits)
        if prepared.later is None:  # else once its screening is finished
            self._flagged += bool(prepared.flags)

    def _deduplicate(self, prepared: Prepared) -> Prepared | None:
        record_no, key, external_id = prepared.record_no, prepared.key, prepared.external_id
        earlier = self._batch_hashes.get(key)
        if earlier is not None:
            return self._duplicate(record_no, f"record {earlier}")
        if external_id and external_id in self._batch_ids:
            raise RecordError(record_no, "guid", f"external id {external_id!r} appears twice in the file")
        self._batch_hashes[key] = record_no
        if external_id:
            self._batch_ids.add(external_id)
        return prepared

    def _duplicate(self, record_no: int, of: str) -> None:
        if self.duplicates == "refuse":
            raise RecordError(record_no, "", f"exact duplicate of {of} (same text after NFKC and whitespace "
                                             f"normalisation)")
        self._duplicate_count += 1
        if len(self._duplicates) < 50:
            self._duplicates.append({"record": record_no, "duplicate_of": of})
        return None

    # -- write ------------------------------------------------------------------------------------

    def _flush(self) -> None:
        batch, self._batch = self._batch, []
        self._batch_hashes = {}
        ids, self._batch_ids = self._batch_ids, set()
        hashes = self._maybe_written(list({p.content_hash for p in batch}))
        existing_hashes = {dedup_key(self.task, other.payload, other.content_hash): other.external_id
                           for other in batch_selectors.items_with_hashes(self.project, hashes)}
        existing_ids = batch_selectors.external_ids_taken(self.project, self._maybe_written([i for i in ids if i]))
        kept = []
        for prepared in batch:
            if prepared.key in existing_hashes:
                other = existing_hashes[prepared.key]
                try:
                    self._duplicate(prepared.record_no, f"item {other!r} already in the project" if other
                                    else "an item already in the project")
                except RecordError as error:
                    self._error(error.as_dict())
                    return
                continue
            external_id = prepared.external_id
            if external_id in existing_ids:
                self._error(RecordError(prepared.record_no, "guid", f"an item with external id {external_id!r} "
                                                                    f"already exists in the project").as_dict())
                return
            kept.append(prepared)
        assert self._writer is not None
        if not kept:  # duplicates only, or nothing (the last batch): the screening of what was read is finished
            if self._screened_later:
                self._writer.submit(self._finish_screening, self._take_screened_later())
            return
        if self._seen is not None:  # before the next batch's lookups, which may be checked before it is written
            self._seen.add(dedup.text_key(value) for p in kept for value in (p.content_hash, p.external_id) if value)
        ids = self._reserved_ids(len(kept))
        written = self._writer.submit(self._write, kept, ids, self._take_screened_later())
        # The batch before is indexed here while the writer writes (in the writer's thread, its indexing and the
        # database's work on the batch waited for one another: docs/performance.md).
        self._index_written()
        self._unindexed = (written if ids is None else ids, kept)

    def _index_written(self) -> None:
        """Index the batch given to the writer last for near duplicates (once the writer has its ids), and give
        the writer the rows that records."""
        if self._unindexed is None:
            return
        written, kept = self._unindexed
        self._unindexed = None
        ids = written if isinstance(written, list) else written.result()
        self._runs_extend(ids, kept)
        band_keys = np.array([p.band_keys for p in kept], dtype=np.int64).reshape(len(kept), dedup.BANDS)
        assert self._writer is not None and self._index is not None
        self._writer.submit(self._write_groups, *self._index.index(ids, kept, band_keys))

    def _runs_extend(self, ids: list[int], kept: list[Prepared]) -> None:
        runs = self._record_runs
        for item, prepared in zip(ids, kept, strict=True):
            last = runs[-1] if runs else None
            if last is not None and item == last[0] + last[2] and prepared.record_no == last[1] + last[2]:
                last[2] += 1
            elif len(runs) < RECORD_RUNS_KEPT:
                runs.append([item, prepared.record_no, 1])

    def _reserved_ids(self, n: int) -> list[int] | None:
        try:
            return self._ids.take(n)
        except DatabaseError:
            assert self._writer is not None
            self._writer.wait()  # a write that failed (the transaction aborted since) is the error to report
            raise

    def _take_screened_later(self) -> list[Prepared]:
        taken, self._screened_later = self._screened_later, []
        return taken

    def _finish_screening(self, records: list[Prepared]) -> None:
        """Finish the screening the model screeners did after these records were prepared (in the writer's
        thread: waiting for them holds the writes up, not the import), and count what they found."""
        for prepared in records:
            self._later_hits.update(prepared.finish_screening())
            self._later_flagged += bool(prepared.flags)

    def _write(self, kept: list[Prepared], ids: list[int] | None, screened_later: list[Prepared]) -> list[int]:
        """Write a checked batch: items (with ``ids``, else numbered by the database), their annotations and
        flags (in the :class:`~.writer.BatchWriter`'s thread), once the screening of the records read since the
        last write is finished; returns the items' ids. Nothing here can be a record's error; a database error
        goes to the caller, who rolls the import back."""
        self._finish_screening(screened_later)
        ids, labels = batch_services.batch_write(kept, ids, self._annotators)
        self.outcome.items += len(ids)
        self.outcome.annotations += labels
        self.outcome.progress.written = self.outcome.items
        # With DEBUG on (the embedded default) Django keeps the last 9,000 queries, bulk inserts included;
        # an import must not hold megabytes of SQL text.
        reset_queries()
        return ids

    def _write_groups(self, merged: list[tuple[int, int, int]], rows: list[dict[str, Any]], band_keys: np.ndarray,
                      band_items: np.ndarray) -> None:
        """Write what indexing a batch found (in the writer's thread): groups merged into another (new group,
        project, old group), the batch's items' group rows, and a run of bands when one was due."""
        batch_services.near_duplicate_groups_write(self.project, merged, rows)
        batch_services.bands_write(self.project, band_keys, band_items)
        reset_queries()

    def _maybe_written(self, values: list[str]) -> list[str]:
        """Those of ``values`` (content hashes, external ids) the project may hold already: the ones this import
        may have written when it started on a project without items, else all of them."""
        if self._seen is None or not values:
            return values
        return list(compress(values, self._seen.may_contain(map(dedup.text_key, values)).tolist()))

    def _summary(self) -> dict[str, Any]:
        assert self._index is not None
        pii: dict[str, dict[str, int]] = {}
        for (pii_type, action), n in sorted(self._pii.items()):
            pii.setdefault(pii_type, {})[action] = n
        screening: dict[str, dict[str, int]] = {}
        for (kind, category), n in sorted((self._hits + self._later_hits).items()):
            screening.setdefault(kind, {})[category] = n
        return {
            "pii": pii,
            "screening": screening,
            "needs_review": self._flagged + self._later_flagged,
            "duplicates_skipped": self._duplicate_count,
            "duplicates": sorted(self._duplicates, key=lambda d: d["record"]),  # found per batch: in-file ones first
            "near_duplicates": self._index.found,
            "pii_policy": self.policy.actions,
            "record_runs": self._record_runs,
        }


def read_records(path: Path, fmt: str, task: TaskType, encoding: str = "auto", *, approved_only: bool = False
                 ) -> Iterator[tuple[int, dict[str, Any]] | RecordError]:
    """A file's records in order (``(record number, record)``) in one of the import's formats, its problems as
    :class:`RecordError`; the import and the contamination check's reference files read through it.
    ``approved_only`` is doccano's "approved documents only" export (its empty label lists are labels)."""
    if fmt == "jsonl":
        yield from iter_jsonl(path, encoding)
    elif fmt == "csv":
        yield from iter_csv(path, encoding, task.declared("csv_columns", "CSV columns"))
    elif fmt in INTEROP_READERS:
        if encoding not in ("auto", "utf-8"):
            raise FatalReadError(0, "encoding", f"{fmt} exports are UTF-8; import them with encoding auto")
        options = {"approved_only": approved_only} if fmt == "doccano" else {}
        yield from INTEROP_READERS[fmt](path, task.slug, **options)
    else:
        from .klue_formats import iter_klue_records

        if encoding not in ("auto", "utf-8"):
            raise FatalReadError(0, "encoding", "KLUE files are UTF-8; convert the file before importing it")
        yield from iter_klue_records(path, task.slug, max_record_chars())


def _klue_format_error() -> type[Exception]:
    from .klue_formats import FormatError

    return FormatError
