"""The import pipeline: reader → preparer → deduplicator → writer.

* reader — :mod:`.readers` (JSONL, CSV) or :mod:`.klue_formats` (KLUE files) yield ``(record no, dict)``;
* preparer — :mod:`.prepare`, one record at a time and in worker processes for a large file: raw DP
  sentences get their eojeol columns from Kiwi (:mod:`.morph`), the task type's ``parse_record`` splits the
  record into item payload, meta and imported annotations, ``item_checked`` and ``validate_annotation``
  check the item and every label, PII is pseudonymized with offset remapping (:mod:`.pii`), toxicity/bias
  screened (:mod:`.screening`), the content hash and MinHash signature computed;
* deduplicator — exact duplicates within the file (here, in file order) and against the project (per batch);
* writer — ``COPY`` (PostgreSQL; ``bulk_create`` elsewhere, :mod:`.bulk`) in batches inside the caller's
  transaction, in a thread of its own (:mod:`.writer`); each batch given to it is indexed for near duplicates
  (groups, :mod:`.dedup`) here while the writer writes, and the writer then writes its groups. A batch whose
  texts the model screeners still screen (in a process of their own, :class:`.prepare.ModelScreening`) waits
  for them in the writer, not here.

All or nothing: after the first bad record nothing more is written, but reading and checking go on so
the report lists every problem (up to the cap); the caller then rolls the transaction back. Memory is
bounded by the batch size: records stream in, duplicates are checked against the database.
"""

from __future__ import annotations

import gc
import hmac
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from django.conf import settings
from django.db import DatabaseError, connection, reset_queries, transaction

from annotation import bulk
from annotation.models import Flag, Item, Project, Source, User
from annotation.task_types import TaskType

from . import dedup
from .interop import READERS as INTEROP_READERS
from .models import MinHashBand, NearDuplicate
from .pii import PiiPolicy
from .pii.pseudonymize import pii_salt
from .pii.redact import redact_message
from .prepare import (
    ANNOTATION_ROWS,
    ITEM_ROWS,
    Failed,
    Prepared,
    RecordPreparer,
    dedup_key,
    import_processes,
    prepared_records,
)
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
#: On PostgreSQL, an import's near-duplicate bands are written in sorted runs of this many keys while it goes
#: on: the server's work on them overlaps the preparation of the next records, where all of them written when
#: the import ended (1M rows for 100k items) left the server alone for its last seconds, a core idle
#: (docs/performance.md, "The writing side"). Not on SQLite, whose work is this process's own CPU: runs into
#: the project's part of the index cost it more than the one sorted write at the end.
BAND_RUN = 1 << 17
#: Writes that may wait their turn in the writer (two a batch: its items, then its groups): enough for the
#: batches prepared while the model screeners load their models (about a second) to be checked and indexed
#: meanwhile, few enough to bound the memory.
WRITES_AHEAD = 24
#: The annotator name of a corpus label without an annotator id (task types use ``""``).
CORPUS_ANNOTATOR = "corpus"


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
        encoding: str = "auto", duplicates: str = "skip",
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
        self.on_progress = on_progress
        self.outcome = PipelineOutcome()
        self._users: dict[str, User] = {}
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
        self._near = 0
        #: What this import has written, while the project held nothing else (see dedup.SeenKeys).
        self._seen: dedup.SeenKeys | None = None
        self._written = dedup.WrittenSignatures()
        #: Bands of the items written last, for their lookups (see dedup.PendingBands).
        self._pending = dedup.PendingBands(run=BAND_RUN if connection.vendor == "postgresql" else None)
        #: Whether held bands were let go (the memory full): their keys are looked up in the database since.
        self._bands_let_go = False
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
            assert self._writer is not None
            self._writer.submit(self._write_bands, *self._pending.take_unwritten())

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
        return read_records(self.path, self.fmt, self.task, self.encoding)

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
                           for other in self._items_with_hashes(hashes)}
        existing_ids = self._existing_external_ids(self._maybe_written([i for i in ids if i]))
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
        assert self._writer is not None
        self._writer.submit(self._write_groups, *self._index_near_duplicates(ids, kept, band_keys))

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
        with transaction.atomic():
            ids = ITEM_ROWS.insert([((p.screening_status,), p.item) for p in kept], ids=ids or True)
            # The batch's annotators looked up once each, not once per label.
            users = {who: self._user(who).pk for who in dict.fromkeys(who for p in kept for who, _ in p.annotations)}
            labels = [((pk, users[who]), row) for pk, p in zip(ids, kept, strict=True) for who, row in p.annotations]
            ANNOTATION_ROWS.insert(labels)
            bulk.insert_values(Flag, [{"item_id": pk, "user_id": None, "kind": kind, "note": note}
                                      for pk, p in zip(ids, kept, strict=True) for kind, note in p.flags])
        self.outcome.items += len(ids)
        self.outcome.annotations += len(labels)
        self.outcome.progress.written = self.outcome.items
        # With DEBUG on (the embedded default) Django keeps the last 9,000 queries, bulk inserts included;
        # an import must not hold megabytes of SQL text.
        reset_queries()
        return ids

    def _write_groups(self, merged: list[tuple[int, int, int]], rows: list[dict[str, Any]], band_keys: np.ndarray,
                      band_items: np.ndarray) -> None:
        """Write what indexing a batch found (in the writer's thread): groups merged into another (new group,
        project, old group), the batch's items' group rows, and a run of bands when one was due."""
        if merged:
            bulk.execute_many(f'UPDATE {connection.ops.quote_name(NearDuplicate._meta.db_table)} SET "group" = %s '
                              f'WHERE project_id = %s AND "group" = %s', merged)
        bulk.insert_values(NearDuplicate, rows)
        self._write_bands(band_keys, band_items)
        reset_queries()

    def _maybe_written(self, values: Any) -> Any:
        """Those of ``values`` (texts, or an array of band keys) the project may hold already: the ones this
        import may have written when it started on a project without items, else all of them."""
        if self._seen is None or not len(values):
            return values
        if isinstance(values, np.ndarray):
            return values[self._seen.may_contain(values)]
        return list(compress(values, self._seen.may_contain(map(dedup.text_key, values)).tolist()))

    # PostgreSQL plans the lookups below with the statistics of before the import: the rows this import
    # has written are not analysed yet, so a query filtering on the project and a list of values scans all
    # of the project's rows once per batch (quadratic in the file). Each value is therefore looked up by
    # itself through its index (a LATERAL subquery that ``OFFSET 0`` keeps from being flattened into a join).

    def _items_with_hashes(self, hashes: list[str]) -> list[Item]:
        """The project's items whose content hash is one of ``hashes`` (content hash, payload, external id)."""
        if not hashes:
            return []
        if connection.vendor != "postgresql":
            return [other for start in range(0, len(hashes), 900) for other in Item.objects.filter(
                project=self.project, content_hash__in=hashes[start:start + 900]).only(
                "content_hash", "payload", "external_id")]
        # The content hash index alone (the project is checked on the rows found): the same text in
        # other projects costs a few extra rows, a plan that may start from the project scans all of it.
        return list(Item.objects.raw(
            f"SELECT i.id, i.content_hash, i.payload, i.external_id FROM unnest(%s::text[]) AS h(hash) "
            f"CROSS JOIN LATERAL (SELECT id, project_id, content_hash, payload, external_id FROM {_item_table()} "
            f"WHERE content_hash = h.hash OFFSET 0) AS i WHERE i.project_id = %s", [hashes, self.project.pk]))

    def _existing_external_ids(self, external_ids: list[str]) -> set[str]:
        """Those of ``external_ids`` (none empty) that an item of the project already has."""
        if connection.vendor != "postgresql":
            return {found for start in range(0, len(external_ids), 900) for found in Item.objects.filter(
                project=self.project, external_id__in=external_ids[start:start + 900]).values_list(
                "external_id", flat=True)}
        if not external_ids:
            return set()
        with connection.cursor() as cursor:
            # ``external_id <> ''`` lets the plan use the unique (project, external id) index, which is partial.
            cursor.execute(f"SELECT i.external_id FROM unnest(%s::text[]) AS e(id) CROSS JOIN LATERAL "
                           f"(SELECT external_id FROM {_item_table()} WHERE project_id = %s AND external_id = e.id "
                           f"AND external_id <> '' OFFSET 0) AS i", [external_ids, self.project.pk])
            return {row[0] for row in cursor.fetchall()}

    def _user(self, annotator: str) -> User:
        user = self._users.get(annotator)
        if user is None:
            if annotator:
                username = imported_username(self.project, annotator)
            else:
                prefix = self.source.name if self.source else self.project.slug
                username = f"{prefix}:{CORPUS_ANNOTATOR}"[:150]
            user = User.objects.filter(username=username).first()
            if user is None:
                user = User(username=username, is_imported=True)
                user.save()
            self._users[annotator] = user
        return user

    def _index_near_duplicates(self, ids: list[int], kept: list[Prepared], band_keys: np.ndarray) -> tuple[
            list[tuple[int, int, int]], list[dict[str, Any]], np.ndarray, np.ndarray]:
        """Join the batch's items to the near-duplicate groups of the project's items (and of one another) and
        hold their bands; ``band_keys`` holds a row of keys per item. Returns what :meth:`_write_groups` writes.

        An item joins a group when it is nearly the same as any of its members that share a band with it, so
        of the members of one group it is compared with the one sharing most bands first, and with the others
        only when that one is not similar enough: a sentence with many near copies costs one comparison per
        group, not one per copy. The signatures of the items this import wrote last are kept in memory
        (:class:`~.dedup.WrittenSignatures`); the other earlier items' are computed again from their texts (a
        stored row of 64 values per item would cost every import)."""
        batch_keys, counts = np.unique(band_keys, return_counts=True)
        # The bands of this import's items not yet written are in memory; the database holds the rest (the
        # project's earlier items, and this import's written when the memory was full). Into a project without
        # items, until the memory is full, the database holds none that memory does not: no lookup, and no
        # filter to ask (a million keys asked cost more than the rest of the lookups).
        candidates = {} if self._seen is not None and not self._bands_let_go else self._band_candidates(
            self._maybe_written(batch_keys).tolist())
        lengths = np.fromiter(map(len, candidates.values()), dtype=np.int64, count=len(candidates))
        entry_keys, entry_items = self._pending.find(batch_keys)
        if candidates:
            entry_keys = np.concatenate([np.repeat(np.fromiter(candidates, dtype=np.int64, count=len(candidates)),
                                                   lengths), entry_keys])
            entry_items = np.concatenate([np.fromiter(chain.from_iterable(candidates.values()), dtype=np.int64,
                                                      count=int(lengths.sum())), entry_items])
            # A band written already and still held is found in both: once.
            entry_keys, entry_items = np.unique(np.stack([entry_keys, entry_items], axis=1), axis=0).T
        shared = _SharedBands(band_keys, entry_keys, entry_items)
        earlier = np.unique(shared.others).tolist()
        # An earlier item's group, if it is in one: this import's last items' from memory, the others' read.
        held, existing = self._written.groups(earlier)
        existing.update(_rows_by_id(connection.ops.quote_name(NearDuplicate._meta.db_table), 'item_id, "group"',
                                    [pk for pk in earlier if pk not in held], key="item_id"))
        nodes = _Nodes(ids, [p.group_key for p in kept],
                       np.array([p.signature for p in kept], dtype=np.uint32).reshape(-1, dedup.NUM_PERM))
        # Per new item: this batch's earlier items sharing a band (only keys that several of its items hold).
        in_batch: dict[int, set[int]] = {}
        batch_shared = set(batch_keys[counts > 1].tolist())
        batch_buckets: dict[int, list[int]] = {}
        for row, p in enumerate(kept):
            item_keys = [key for key in p.band_keys if key in batch_shared]
            if not item_keys:
                continue
            batch_rows = {other for k in item_keys for other in batch_buckets.get(k, ())}
            if batch_rows:
                in_batch[row] = batch_rows
            for key in item_keys:
                batch_buckets.setdefault(key, []).append(row)
        # The project's items: per new item and group (an item in no group is a group of its own) the member
        # sharing most bands first, then the rest of the groups whose first did not match.
        heads = shared.grouped(existing)
        self._add_earlier(nodes, sorted(set(heads[1].tolist())))
        first = self._compare(nodes, list(zip(*(side.tolist() for side in heads), strict=True)))
        rest = shared.rest(first)
        self._add_earlier(nodes, sorted(set(rest[1].tolist()) - nodes.fetched))
        found = {**first, **self._compare(nodes, list(zip(*(side.tolist() for side in rest), strict=True)))}
        found.update(self._compare(nodes, [(row, ids[other]) for row, rows in in_batch.items()
                                           for other in sorted(rows)]))
        merged, rows = self._join_groups(nodes.ids, [row for row, _ in found], [nodes.row_of[other] for _, other in
                                                                                found], list(found.values()), existing)
        self._pending.add(ids, band_keys)
        run = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        if self._pending.run_due():
            run = self._pending.take_unwritten()
        if len(self._pending) >= self._pending.capacity:
            # Let go of the held bands: the filter sends the lookups of their keys to the database from now on
            # (written before: the writer writes this run before any later lookup).
            keys, _ = self._pending.take()
            self._bands_let_go = True
            if self._seen is not None:
                self._seen.add(keys)
        self._written.add(ids, nodes.signatures[:len(ids)], nodes.group_keys[:len(ids)])
        self._written.regroup([(old, group) for group, _, old in merged],
                              [(row["item_id"], row["group"]) for row in rows])
        return merged, rows, *run

    def _add_earlier(self, nodes: _Nodes, earlier: list[int]) -> None:
        """Earlier items to compare with: this import's last ones as it wrote them, the others from the
        database (their signatures computed again from their texts)."""
        known, group_keys, signatures = self._written.find(earlier)
        nodes.add_known(known, group_keys, signatures)
        known_ids = set(known)
        nodes.add(_rows_by_id(_item_table(), "id, payload, group_key",
                              [pk for pk in earlier if pk not in known_ids]), self.task)

    def _compare(self, nodes: _Nodes, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], float]:
        """Of (new item's row, earlier item's id) pairs, those similar enough, with their similarity. A pair
        whose earlier item is gone (a band left by an item deleted with raw SQL: the rows have no foreign key)
        or of the new item's own group (one passage, several questions: one split anyway) is not compared."""
        pairs = [(row, other) for row, other in pairs if other in nodes.row_of and not (
            nodes.group_keys[row] and nodes.group_keys[row] == nodes.group_keys[nodes.row_of[other]])]
        if not pairs:
            return {}
        left = [row for row, _ in pairs]
        right = [nodes.row_of[other] for _, other in pairs]
        signatures = nodes.signatures
        scores = (np.count_nonzero(signatures[left] == signatures[right], axis=1) / dedup.NUM_PERM).tolist()
        limit = dedup.threshold()
        return {pair: score for pair, score in zip(pairs, scores, strict=True) if score >= limit}

    def _join_groups(self, node_ids: list[int], left: list[int], right: list[int], scores: list[float],
                     existing: dict[int, int]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Union-find over the links found (``left[i]``, a new item's row in ``node_ids``, is nearly the same as
        ``right[i]``, an earlier item's): the new items join the groups their earlier near duplicates are in
        (``existing``: item → group), groups a new item links are merged (into the smallest group id, the
        earliest item's), and earlier items that were in no group yet get one. Returns the groups merged
        (new group, project, old group) and the group rows of the items that joined one."""
        if not left:
            return [], []
        # Union-find over group ids: an item in no group yet is a group of its own, named by its id; a merged
        # group takes the smaller id, so a group is always named by its earliest item.
        parent: dict[int, int] = {}

        def find(group: int) -> int:
            parent.setdefault(group, group)
            while parent[group] != group:
                parent[group] = parent[parent[group]]
                group = parent[group]
            return group

        best: dict[int, tuple[float, int]] = {}
        for a, b, score in zip(left, right, scores, strict=True):
            other = node_ids[b]
            root_a, root_b = find(node_ids[a]), find(existing.get(other, other))
            parent[max(root_a, root_b)] = min(root_a, root_b)
            if a not in best or (-score, other) < (-best[a][0], best[a][1]):
                best[a] = (score, other)
        # Groups merged into another (never into one that is merged itself: find gives the final group), one
        # statement for all of them.
        merged = [(group, self.project.pk, old) for old in sorted(set(existing.values()))
                  if (group := find(old)) != old]
        rows = []
        for r in sorted({*left, *right}, key=node_ids.__getitem__):
            item_id = node_ids[r]
            if item_id not in existing:
                score, other = best.get(r, (None, None))
                rows.append({"project_id": self.project.pk, "item_id": item_id, "group": find(item_id),
                             "duplicate_of_id": other, "similarity": score})
        self._near += len(best)
        return merged, rows

    def _band_candidates(self, all_keys: list[int]) -> dict[int, list[int]]:
        """Band key → ids of the project's items already indexed under it."""
        if not all_keys:
            return {}
        table = connection.ops.quote_name(MinHashBand._meta.db_table)
        with connection.cursor() as cursor:
            # Raw SQL: thousands of integer parameters per batch cost more through the ORM than the query.
            if connection.vendor == "postgresql":
                # One array literal instead of thousands of bound parameters (psycopg adapts each one), each
                # key looked up through the (project, key) index (see _items_with_hashes), and one row per key
                # with its items as an array (a heavily duplicated corpus has many items per key: a row each
                # cost more to fetch than the lookups). The estimated cost of thousands of index probes would
                # make PostgreSQL JIT-compile the query on every call (jit is on by default), which costs more
                # than running it: off for this statement.
                cursor.execute("SELECT current_setting('jit'), set_config('jit', 'off', true)")
                jit = cursor.fetchone()[0]
                cursor.execute(f"SELECT k.key, ARRAY(SELECT item_id FROM {table} WHERE project_id = %s AND "
                               f"key = k.key) FROM unnest(%s::bigint[]) AS k(key)",
                               [self.project.pk, "{" + ",".join(map(str, all_keys)) + "}"])
                found = {key: items for key, items in cursor.fetchall() if items}
                cursor.execute("SELECT set_config('jit', %s, true)", [jit])
                return found
            candidates: dict[int, list[int]] = {}
            for start in range(0, len(all_keys), 900):
                chunk = all_keys[start:start + 900]
                cursor.execute(f"SELECT key, item_id FROM {table} WHERE project_id = %s AND key IN "
                               f"({', '.join(['%s'] * len(chunk))})", [self.project.pk, *chunk])
                for key, item_id in cursor.fetchall():
                    candidates.setdefault(key, []).append(item_id)
        return candidates

    def _write_bands(self, keys: np.ndarray, item_ids: np.ndarray) -> None:
        """Write bands, a row per item and band, given in key order (an index takes sorted keys faster than
        random ones: docs/performance.md), without model instances: a binary COPY built by numpy on PostgreSQL
        (one Python object per row cost more than the database's work), executemany elsewhere."""
        if not len(keys):
            return
        table = MinHashBand._meta.db_table
        if connection.vendor == "postgresql":
            bulk.copy_bigints(table, ("project_id", "item_id", "key"), (
                np.full(len(keys), self.project.pk, dtype=np.int64), item_ids, keys))
            return
        bulk.execute_many(f"INSERT INTO {connection.ops.quote_name(table)} (project_id, item_id, key) VALUES "
                          f"(%s, %s, %s)", list(zip(repeat(self.project.pk), item_ids.tolist(), keys.tolist())))

    def _summary(self) -> dict[str, Any]:
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
            "near_duplicates": self._near,
            "pii_policy": self.policy.actions,
            "record_runs": self._record_runs,
        }


def read_records(path: Path, fmt: str, task: TaskType, encoding: str = "auto"
                 ) -> Iterator[tuple[int, dict[str, Any]] | RecordError]:
    """A file's records in order (``(record number, record)``) in one of the import's formats, its problems as
    :class:`RecordError`; the import and the contamination check's reference files read through it."""
    if fmt == "jsonl":
        yield from iter_jsonl(path, encoding)
    elif fmt == "csv":
        yield from iter_csv(path, encoding, task.declared("csv_columns", "CSV columns"))
    elif fmt in INTEROP_READERS:
        if encoding not in ("auto", "utf-8"):
            raise FatalReadError(0, "encoding", f"{fmt} exports are UTF-8; import them with encoding auto")
        yield from INTEROP_READERS[fmt](path, task.slug)
    else:
        from .klue_formats import iter_klue_records

        if encoding not in ("auto", "utf-8"):
            raise FatalReadError(0, "encoding", "KLUE files are UTF-8; convert the file before importing it")
        yield from iter_klue_records(path, task.slug, max_record_chars())


def imported_username(project: Project, annotator: str) -> str:
    """The user name of a corpus's own annotator in a project: ``<project>:<keyed hash>``. A corpus's rater ids
    may be e-mail addresses or phone numbers, so the raw id is never stored; the hash (keyed with the PII salt,
    over the project and the id) is stable, so the same rater is the same user in every upload of the project,
    and unrelated across projects."""
    digest = hmac.digest(pii_salt(), f"imported-annotator:{project.pk}:{annotator}".encode(), "sha256")
    return f"{project.slug}:{digest[:10].hex()}"


@contextmanager
def long_lived_objects_frozen() -> Iterator[None]:
    """Keep the objects the process held before the import (Django, Celery, the task registry, lexicons:
    hundreds of thousands) out of the garbage collector's passes until it ends. The import promotes many
    short-lived records to the oldest generation, and every full collection then rescanned all of those
    objects too: it cost the importer a quarter of its CPU (docs/performance.md). The worker processes,
    forked inside, inherit the frozen objects. Unfrozen afterwards, so whatever of them became garbage is
    collected as usual — unless they were frozen before (by the process's own start-up), which stays."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextmanager
def foreign_keys_checked_as_written() -> Iterator[None]:
    """On PostgreSQL, the foreign keys of the rows written in the block checked as each statement ends instead of
    when the transaction commits (Django declares them deferred). The check is the same, one lookup per
    reference; deferred, the 200,000 of a 100,000-item import ran after its last write, a second with the server
    alone on one core, where checked per batch they overlap the preparation of the next records
    (docs/performance.md). A row referring to nothing fails the statement that writes it, which rolls the import
    back as the failed commit did. Deferred again when the block ends (a failed block has aborted the
    transaction, or the savepoint that restores the mode on its rollback)."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    yield
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


class _Nodes:
    """The items a batch's near-duplicate search compares: the batch's own (the first rows) and the earlier
    ones fetched for it, with their group keys and signatures."""

    def __init__(self, ids: list[int], group_keys: list[str], signatures: np.ndarray) -> None:
        self.ids = list(ids)
        self.row_of = {pk: row for row, pk in enumerate(ids)}
        self.group_keys = list(group_keys)
        self.signatures = signatures
        self.fetched: set[int] = set()

    def add(self, rows: list[tuple[Any, ...]], task: Any) -> None:
        """Earlier items as ``(id, payload JSON text, group key)``."""
        if rows:
            self.add_known([pk for pk, _, _ in rows], [group_key for _, _, group_key in rows],
                           dedup.signatures(task.item_text(orjson.loads(payload)) for _, payload, _ in rows))

    def add_known(self, ids: list[int], group_keys: list[str], signatures: np.ndarray) -> None:
        """Earlier items whose signatures are known."""
        if not ids:
            return
        for pk in ids:
            self.row_of[pk] = len(self.ids)
            self.ids.append(pk)
            self.fetched.add(pk)
        self.group_keys.extend(group_keys)
        self.signatures = np.concatenate([self.signatures, signatures])


class _SharedBands:
    """The earlier items sharing a band with each new item of a batch, and how many bands they share, as numpy
    arrays: a ``Counter`` and a sort per new item cost more than the rest of the search on a corpus whose
    sentences have many near copies."""

    def __init__(self, band_keys: np.ndarray, entry_keys: np.ndarray, entry_items: np.ndarray) -> None:
        """``entry_keys[i]`` is a band key an earlier item ``entry_items[i]`` is indexed under."""
        rows = others = np.empty(0, dtype=np.int64)
        if len(entry_keys):
            order = np.argsort(entry_keys, kind="stable")
            items = entry_items[order]
            keys, starts = np.unique(entry_keys[order], return_index=True)
            lengths = np.diff(np.append(starts, len(items)))
            flat = band_keys.ravel()
            at = np.minimum(np.searchsorted(keys, flat), len(keys) - 1)
            hit = keys[at] == flat
            at = at[hit]
            counts = lengths[at]
            rows = np.repeat(np.repeat(np.arange(band_keys.shape[0]), band_keys.shape[1])[hit], counts)
            offsets = np.cumsum(counts) - counts
            others = items[np.repeat(starts[at] - offsets, counts) + np.arange(int(counts.sum()))]
        # One entry per (new item's row, earlier item), with the number of bands they share.
        order = np.lexsort((others, rows))
        rows, others = rows[order], others[order]
        new = np.ones(len(rows), dtype=bool)
        new[1:] = (rows[1:] != rows[:-1]) | (others[1:] != others[:-1])
        starts = np.flatnonzero(new)
        self.rows, self.others = rows[starts], others[starts]
        self.shared = np.diff(np.append(starts, len(rows)))
        self._order = (self.rows, self.others, np.zeros(len(starts), dtype=bool), np.zeros(len(starts), dtype=np.int64))

    def grouped(self, existing: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """Per new item, its earlier items by group (``existing``: item → group; an item in none is a group of
        its own), groups in the order of their first member, members by most shared bands, then by id; returns
        the first member of every (new item, group) as (rows, earlier items). :meth:`rest` gives the others."""
        groups = self.others.copy()
        if existing and len(groups):
            members = np.fromiter(existing, dtype=np.int64, count=len(existing))
            named = np.fromiter(existing.values(), dtype=np.int64, count=len(existing))
            order = np.argsort(members)
            members, named = members[order], named[order]
            at = np.minimum(np.searchsorted(members, groups), len(members) - 1)
            hit = members[at] == groups
            groups[hit] = named[at[hit]]
        order = np.lexsort((self.others, -self.shared, self.rows))
        rows, others, groups = self.rows[order], self.others[order], groups[order]
        position = np.arange(len(rows))
        # The position (in that order) of each (new item, group)'s first member, for each of its members.
        by_group = np.lexsort((position, groups, rows))
        starts = np.ones(len(rows), dtype=bool)
        starts[1:] = (rows[by_group][1:] != rows[by_group][:-1]) | (groups[by_group][1:] != groups[by_group][:-1])
        first = np.empty(len(rows), dtype=np.int64)
        first[by_group] = by_group[np.maximum.accumulate(np.where(starts, position, 0))]
        final = np.lexsort((position, first))
        head = position[final] == first[final]
        self._order = (rows[final], others[final], head, np.cumsum(head) - 1)
        return rows[final][head], others[final][head]

    def rest(self, found: dict[tuple[int, int], float]) -> tuple[np.ndarray, np.ndarray]:
        """The members after the first of each (new item, group) of :meth:`grouped` whose first is not in
        ``found``, in the same order."""
        rows, others, head, group = self._order
        heads = zip(rows[head].tolist(), others[head].tolist(), strict=True)
        head_found = np.fromiter((pair in found for pair in heads), dtype=bool, count=int(head.sum()))
        keep = ~head & ~head_found[group] if len(rows) else head
        return rows[keep], others[keep]


def _rows_by_id(table: str, columns: str, ids: list[int], *, key: str = "id") -> list[tuple[Any, ...]]:
    """``columns`` (SQL) of the rows of ``table`` whose ``key`` is one of ``ids``, JSON as its text: thousands
    of ids a batch, which the ORM would adapt one parameter and one model instance at a time."""
    if not ids:
        return []
    rows: list[tuple[Any, ...]] = []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Each id probes the index by itself (see _items_with_hashes): the table's statistics may be older
            # than the rows this import wrote.
            cursor.execute(f"SELECT r.* FROM unnest(%s::bigint[]) AS k(id) CROSS JOIN LATERAL (SELECT "
                           f"{columns.replace('payload', 'payload::text')} FROM {table} WHERE {key} = k.id OFFSET 0) "
                           f"AS r", ["{" + ",".join(map(str, ids)) + "}"])
            return cursor.fetchall()
        for start in range(0, len(ids), 900):
            chunk = ids[start:start + 900]
            cursor.execute(f"SELECT {columns} FROM {table} WHERE {key} IN ({', '.join(['%s'] * len(chunk))})", chunk)
            rows.extend(cursor.fetchall())
    return rows


def _item_table() -> str:
    return connection.ops.quote_name(Item._meta.db_table)


def _klue_format_error() -> type[Exception]:
    from .klue_formats import FormatError

    return FormatError
