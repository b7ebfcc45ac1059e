"""The import pipeline: reader → parser → validator → screener → writer.

* reader — :mod:`.readers` (JSONL, CSV) or :mod:`.klue_formats` (KLUE files) yield ``(record no, dict)``;
* parser — raw DP sentences get their eojeol columns from Kiwi (:mod:`.morph`), then the task type's
  ``parse_record`` splits the record into item payload, meta and imported annotations;
* validator — ``item_build`` and ``validate_annotation`` check the item and every label;
* screener — PII pseudonymization with offset remapping (:mod:`.pii`), toxicity/bias screening
  (:mod:`.screening`), exact-duplicate check (content hash);
* writer — ``COPY`` (PostgreSQL; ``bulk_create`` elsewhere, :mod:`.bulk`) in batches inside the caller's
  transaction, then near-duplicate indexing. (A second thread writing one batch while the next was
  prepared gained nothing measurable: the two threads' Python shares one GIL, and the writer then waited
  for it after every round trip — docs/performance.md.)

All or nothing: after the first bad record nothing more is written, but reading and checking go on so
the report lists every problem (up to the cap); the caller then rolls the transaction back. Memory is
bounded by the batch size: records stream in, duplicates are checked against the database.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, reset_queries, transaction

from annotation.models import Annotation, Flag, FlagKind, Item, Project, ScreeningStatus, Source, User
from annotation.services import item_build
from annotation.task_types import ParsedRecord, PayloadError, reject_nul_characters

from . import bulk, dedup, morph
from .licenses import normalise_spdx
from .models import MinHashBand, NearDuplicate
from .pii import PiiPolicy, Scrubber
from .pii.apply import scrub_record
from .pii.redact import redact_message
from .readers import FatalReadError, RecordError, iter_csv, iter_jsonl
from .screening import screen_text

FORMATS = ("klue", "jsonl", "csv")
DUPLICATE_POLICIES = ("skip", "refuse")
#: Records per written batch: larger batches spread the per-batch queries thinner (1,000 cost ~5–8 % less CPU
#: than 500 at 25,000 records) but hold more in memory (peak RSS ~+20 MB); memory stays bounded by it.
BATCH_SIZE = 1000
#: The annotator name of a corpus label without an annotator id (task types use ``""``).
CORPUS_ANNOTATOR = "corpus"
#: Columns a CSV must have per task type (nested ones by their prefix); see docs/import.md.
CSV_REQUIRED: dict[str, tuple[str, ...]] = {
    "tc": ("title",),
    "sts": ("sentence1", "sentence2"),
    "nli": ("premise",),
    "ner": ("sentence",),
    "re": ("sentence", "subject_entity", "object_entity"),
    "dp": ("sentence",),
    "mrc": ("title", "context"),
    "dst": ("domains", "dialogue"),
}
#: DP records that carry these (KLUE TSV rows, or the Hugging Face layout) need no analyser.
_DP_COLUMNS = ("word_form", "tokens", "rows")


def max_errors() -> int:
    return int(getattr(settings, "GOLDSET_IMPORT_MAX_ERRORS", 100))


@dataclass
class Progress:
    read: int = 0
    screened: int = 0
    written: int = 0


@dataclass
class _Prepared:
    record_no: int
    item: Item
    annotations: list[tuple[str, str, dict[str, Any]]]
    flags: list[tuple[str, str]]
    #: :meth:`ImportPipeline._dedup_key` of the item.
    key: str = ""


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
        self._batch: list[_Prepared] = []
        self._batch_hashes: dict[str, int] = {}
        self._batch_ids: set[str] = set()
        self._pii = Counter[tuple[str, str]]()
        self._hits = Counter[tuple[str, str]]()
        self._flagged = 0
        self._duplicates: list[dict[str, Any]] = []
        self._duplicate_count = 0
        self._near = 0

    # -- driving ----------------------------------------------------------------------------------

    def run(self) -> PipelineOutcome:
        cap = max_errors()
        outcome = self.outcome
        try:
            for entry in self._records():
                if isinstance(entry, RecordError):
                    self._error(entry)
                else:
                    outcome.progress.read += 1
                    record_no, record = entry
                    try:
                        prepared = self._prepare(record_no, record)
                    except RecordError as error:
                        self._error(error, record)
                    else:
                        outcome.progress.screened += 1
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
        except FatalReadError as error:
            self._error(error)
        except _klue_format_error() as error:
            self._error(RecordError(error.record_no, error.field, error.message))
        if outcome.ok:
            self._flush()
        if self.on_progress:
            self.on_progress(outcome.progress)
        outcome.summary = self._summary()
        return outcome

    def _error(self, error: RecordError, record: dict[str, Any] | None = None) -> None:
        # Messages may quote the raw record; the errors are stored and shown, so its PII is taken out.
        self.outcome.errors.append({**error.as_dict(), "message": redact_message(error.message, record)})
        self._batch.clear()  # nothing more will be written; the caller rolls back

    def _records(self) -> Iterator[tuple[int, dict[str, Any]] | RecordError]:
        if self.fmt == "jsonl":
            yield from iter_jsonl(self.path, self.encoding)
        elif self.fmt == "csv":
            yield from iter_csv(self.path, self.encoding, CSV_REQUIRED.get(self.task.slug, ()))
        else:
            from .klue_formats import iter_klue_records

            if self.encoding not in ("auto", "utf-8"):
                raise FatalReadError(0, "encoding", "KLUE files are UTF-8; convert the file before importing it")
            yield from iter_klue_records(self.path, self.task.slug)

    # -- parse, validate, screen ------------------------------------------------------------------

    def _prepare(self, record_no: int, record: dict[str, Any]) -> _Prepared | None:
        if self.task.slug == "dp" and not any(k in record for k in _DP_COLUMNS) and isinstance(
                record.get("sentence"), str) and record["sentence"].strip():
            # A raw sentence: annotators start from the same columns KLUE-DP has.
            record = {**record, **morph.analyse_sentence(record["sentence"])}
        try:
            reject_nul_characters(record)
            parsed: ParsedRecord = self.task.parse_record(record)
        except PayloadError as error:
            raise RecordError(record_no, error.field, error.message) from None
        annotations = [(a.annotator, a.stage, a.payload) for a in parsed.annotations]
        item, annotations = self._validate(record_no, parsed.payload, annotations, prefix="")

        tokens = parsed.payload.get("tokens")
        scrubber = Scrubber(self.policy, single_words=isinstance(tokens, list))
        scrubbed = scrub_record(
            scrubber=scrubber, task_slug=self.task.slug, text_fields=self.task.text_fields,
            payload=parsed.payload, meta=parsed.meta, annotations=[p for _, _, p in annotations],
        )
        if scrubbed.leaks:
            raise RecordError(record_no, "pii", f"{len(scrubbed.leaks)} pseudonymized value(s) still appear in the "
                                                f"record after replacement; the record was not imported")
        annotations = [(who, stage, payload) for (who, stage, _), payload in zip(annotations, scrubbed.annotations,
                                                                                 strict=True)]
        if scrubber.replaced and isinstance(tokens, list):
            _refresh_tokens(tokens, scrubbed.payload.get("tokens") or [])
        if scrubber.replaced:  # otherwise the item checked above stands as it is
            item, annotations = self._validate(record_no, scrubbed.payload, annotations,
                                               prefix="after pseudonymizing: ")
        item.external_id = parsed.external_id
        item.meta = scrubbed.meta
        item.split = parsed.split
        item.group_key = parsed.group_key
        item.source = self.source
        item.pii_findings = scrubbed.findings

        flags: list[tuple[str, str]] = []
        if scrubbed.findings:
            detected = Counter(f["type"] for f in scrubbed.findings if f["action"] == "detected")
            for finding in scrubbed.findings:
                self._pii[(finding["type"], finding["action"])] += 1
            if detected:
                flags.append((FlagKind.PII, "PII detected and kept for review: "
                              + ", ".join(f"{t} ×{n}" for t, n in sorted(detected.items()))))
        hits = screen_text(self.task.item_text(item.payload))
        for kind in (FlagKind.TOXIC, FlagKind.BIAS) if hits else ():
            found = [h for h in hits if h.kind == kind]
            if found:
                for hit in found:
                    self._hits[(kind, hit.category)] += 1
                flags.append((kind, "; ".join(f"{h.category} at [{h.start}, {h.end}) by {h.rule}" for h in found)))
        if flags:
            item.screening_status = ScreeningStatus.NEEDS_REVIEW
            self._flagged += 1
        return self._deduplicate(record_no, _Prepared(record_no, item, annotations, flags))

    def _validate(self, record_no: int, payload: dict[str, Any], annotations: list[tuple[str, str, dict[str, Any]]],
                  *, prefix: str) -> tuple[Item, list[tuple[str, str, dict[str, Any]]]]:
        try:
            item = item_build(project=self.project, payload=payload)
        except PayloadError as error:
            raise RecordError(record_no, error.field, prefix + error.message) from None
        checked = []
        for i, (annotator, stage, label) in enumerate(annotations):
            try:
                normalised = self.task.validate_annotation(label, item=item.payload, schema=self.project.label_schema,
                                                           stage=stage)
            except PayloadError as error:
                where = f"annotations[{i}]" + (f".{error.field}" if error.field else "")
                who = f" (annotator {annotator or CORPUS_ANNOTATOR}, stage {stage})"
                raise RecordError(record_no, where, prefix + error.message + who) from None
            checked.append((annotator, stage, normalised))
        return item, checked

    def _dedup_key(self, item: Item) -> str:
        """The text hash, plus the structure the text alone does not show: an RE sentence with another
        entity pair is another item. Provenance (guid, url, source…) is not part of the key."""
        structure = {k: v for k, v in item.payload.items() if k not in self.task.text_fields and (
            isinstance(v, dict) or (isinstance(v, list) and any(isinstance(x, dict) for x in v)))}
        if not structure:
            return item.content_hash
        canonical = json.dumps(structure, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(f"{item.content_hash}\n{canonical}".encode()).hexdigest()

    def _deduplicate(self, record_no: int, prepared: _Prepared) -> _Prepared | None:
        item = prepared.item
        key = prepared.key = self._dedup_key(item)
        earlier = self._batch_hashes.get(key)
        if earlier is not None:
            return self._duplicate(record_no, f"record {earlier}")
        if item.external_id and item.external_id in self._batch_ids:
            raise RecordError(record_no, "guid", f"external id {item.external_id!r} appears twice in the file")
        self._batch_hashes[key] = record_no
        if item.external_id:
            self._batch_ids.add(item.external_id)
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
        if not batch:
            return
        existing_hashes = {self._dedup_key(other): other.external_id
                           for other in self._items_with_hashes(list({p.item.content_hash for p in batch}))}
        existing_ids = self._existing_external_ids([i for i in ids if i])
        kept = []
        for prepared in batch:
            item = prepared.item
            if prepared.key in existing_hashes:
                other = existing_hashes[prepared.key]
                try:
                    self._duplicate(prepared.record_no, f"item {other!r} already in the project" if other
                                    else "an item already in the project")
                except RecordError as error:
                    self._error(error)
                    return
                continue
            if item.external_id in existing_ids:
                self._error(RecordError(prepared.record_no, "guid", f"an item with external id {item.external_id!r} "
                                                                    f"already exists in the project"))
                return
            kept.append(prepared)
        if kept:
            self._write(kept)

    def _write(self, kept: list[_Prepared]) -> None:
        """Write a checked batch: items, their annotations and flags, near-duplicate pairs and bands. Nothing
        here can be a record's error; a database error goes to the caller, who rolls the import back."""
        with transaction.atomic():
            items = bulk.insert(Item, [p.item for p in kept])
            annotations = bulk.insert_values(Annotation, [
                {"item_id": item.pk, "annotator_id": self._user(who).pk, "stage": stage, "payload": payload,
                 "imported": True}
                for item, p in zip(items, kept, strict=True) for who, stage, payload in p.annotations
            ])
            bulk.insert_values(Flag, [{"item_id": item.pk, "user_id": None, "kind": kind, "note": note}
                                      for item, p in zip(items, kept, strict=True) for kind, note in p.flags])
            self._index_near_duplicates(items)
        self.outcome.items += len(items)
        self.outcome.annotations += annotations
        self.outcome.progress.written = self.outcome.items
        # With DEBUG on (the embedded default) Django keeps the last 9,000 queries, bulk inserts included;
        # an import must not hold megabytes of SQL text.
        reset_queries()

    # PostgreSQL plans the lookups below with the statistics of before the import: the rows this import
    # has written are not analysed yet, so a query filtering on the project and a list of values scans all
    # of the project's rows once per batch (quadratic in the file). Each value is therefore looked up by
    # itself through its index (a LATERAL subquery that ``OFFSET 0`` keeps from being flattened into a join).

    def _items_with_hashes(self, hashes: list[str]) -> list[Item]:
        """The project's items whose content hash is one of ``hashes`` (content hash, payload, external id)."""
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
        name = annotator or CORPUS_ANNOTATOR
        user = self._users.get(name)
        if user is None:
            prefix = self.source.name if self.source else self.project.slug
            username = f"{prefix}:{name}"[:150]
            user = User.objects.filter(username=username).first()
            if user is None:
                user = User(username=username, is_imported=True)
                user.save()
            self._users[name] = user
        return user

    def _index_near_duplicates(self, items: list[Item]) -> None:
        signatures = dedup.signatures(self.task.item_text(item.payload) for item in items)
        keys = dedup.batch_band_keys(signatures)
        ids = [item.pk for item in items]
        candidates = self._band_candidates(sorted({k for ks in keys for k in ks}))
        by_id = {pk: (item, signature) for pk, item, signature in zip(ids, items, signatures, strict=True)}
        # Earlier items that share a band, in one query rather than one per candidate.
        earlier = Item.objects.filter(pk__in={i for ids in candidates.values() for i in ids}).only(
            "payload", "group_key")
        others = list(earlier)
        by_id.update(zip((o.pk for o in others), zip(
            others, dedup.signatures(self.task.item_text(o.payload) for o in others), strict=True), strict=True))
        pairs: dict[tuple[int, int], float] = {}
        # Keys that an earlier item holds too (one of the project's, or another of this batch): an item with
        # none of them has no candidate and none of its keys can be another's, so it is skipped.
        batch_keys, counts = np.unique(np.array(keys, dtype=np.int64), return_counts=True)
        shared_keys = set(batch_keys[counts > 1].tolist()).union(candidates)
        for pk, item, signature, item_keys in zip(ids, items, signatures, keys, strict=True):
            if shared_keys.isdisjoint(item_keys):
                continue
            shared = [candidates[k] for k in item_keys if k in candidates]
            for other_id in set().union(*shared):
                if other_id == pk or (pk, other_id) in pairs:
                    continue
                other = by_id.get(other_id)
                if other is None:
                    continue  # a band left by an item deleted with raw SQL (the rows have no foreign key)
                if item.group_key and item.group_key == other[0].group_key:
                    continue  # one passage, several questions: the same group stays in one split anyway
                score = dedup.similarity(signature, other[1])
                if score >= dedup.threshold():
                    pairs[(pk, other_id)] = score
            for key in item_keys:
                if (bucket := candidates.get(key)) is None:
                    candidates[key] = {pk}
                else:
                    bucket.add(pk)
        NearDuplicate.objects.bulk_create(
            [NearDuplicate(project=self.project, item_id=a, duplicate_of_id=b, similarity=s)
             for (a, b), s in pairs.items()], ignore_conflicts=True)
        self._write_bands(ids, keys)
        self._near += len(pairs)

    def _band_candidates(self, all_keys: list[int]) -> dict[int, set[int]]:
        """Band key → ids of the project's items already indexed under it."""
        candidates: dict[int, set[int]] = {}
        table = connection.ops.quote_name(MinHashBand._meta.db_table)
        with connection.cursor() as cursor:
            # Raw SQL: thousands of integer parameters per batch cost more through the ORM than the query.
            if connection.vendor == "postgresql":
                # One array literal instead of thousands of bound parameters (psycopg adapts each one), each
                # key looked up through the (project, key) index (see _items_with_hashes). The estimated cost
                # of thousands of index probes would make PostgreSQL JIT-compile the query on every call
                # (jit is on by default), which costs more than running it: off for this statement.
                cursor.execute("SELECT current_setting('jit'), set_config('jit', 'off', true)")
                jit = cursor.fetchone()[0]
                cursor.execute(f"SELECT k.key, b.item_id FROM unnest(%s::bigint[]) AS k(key) CROSS JOIN LATERAL "
                               f"(SELECT item_id FROM {table} WHERE project_id = %s AND key = k.key OFFSET 0) AS b",
                               ["{" + ",".join(map(str, all_keys)) + "}", self.project.pk])
                rows = cursor.fetchall()
                cursor.execute("SELECT set_config('jit', %s, true)", [jit])
            else:
                rows = []
                for start in range(0, len(all_keys), 900):
                    chunk = all_keys[start:start + 900]
                    cursor.execute(f"SELECT key, item_id FROM {table} WHERE project_id = %s AND key IN "
                                   f"({', '.join(['%s'] * len(chunk))})", [self.project.pk, *chunk])
                    rows.extend(cursor.fetchall())
        for key, item_id in rows:
            candidates.setdefault(key, set()).add(item_id)
        return candidates

    def _write_bands(self, ids: list[int], keys: list[list[int]]) -> None:
        """Ten rows per item, without model instances: COPY on PostgreSQL (one block of text: a call per
        row cost more than the database's work), executemany elsewhere."""
        table = connection.ops.quote_name(MinHashBand._meta.db_table)
        project = self.project.pk
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                with bulk.copy_from_stdin(cursor, f"COPY {table} (project_id, item_id, key) FROM STDIN") as copy:
                    copy.write("".join(f"{project}\t{pk}\t{key}\n" for pk, item_keys in zip(ids, keys, strict=True)
                                       for key in item_keys))
            else:
                cursor.executemany(f"INSERT INTO {table} (project_id, item_id, key) VALUES (%s, %s, %s)",
                                   [(project, pk, key) for pk, item_keys in zip(ids, keys, strict=True)
                                    for key in item_keys])

    def _summary(self) -> dict[str, Any]:
        pii: dict[str, dict[str, int]] = {}
        for (pii_type, action), n in sorted(self._pii.items()):
            pii.setdefault(pii_type, {})[action] = n
        screening: dict[str, dict[str, int]] = {}
        for (kind, category), n in sorted(self._hits.items()):
            screening.setdefault(kind, {})[category] = n
        return {
            "pii": pii,
            "screening": screening,
            "needs_review": self._flagged,
            "duplicates_skipped": self._duplicate_count,
            "duplicates": self._duplicates,
            "near_duplicates": self._near,
            "pii_policy": self.policy.actions,
        }



def _item_table() -> str:
    return connection.ops.quote_name(Item._meta.db_table)


def _refresh_tokens(before: list[Any], after: list[Any]) -> None:
    """Eojeol whose form a pseudonym changed get their morphemes and tags from the analyser again."""
    for old, new in zip(before, after, strict=False):
        if isinstance(old, dict) and isinstance(new, dict) and old.get("form") != new.get("form") and new.get("form"):
            columns = morph.analyse_sentence(str(new["form"]))
            new["lemma"] = " ".join(columns["lemma"])
            new["pos"] = "+".join(columns["pos"])


def _klue_format_error() -> type[Exception]:
    from .klue_formats import FormatError

    return FormatError


def source_for(*, name: str, license: str, project: Project, fmt: str, file_name: str) -> Source:
    """The import's Source: the named one (created with its licence on first use), or a default."""
    spdx = normalise_spdx(license) if license else ""
    if not name:
        name = "KLUE" if fmt == "klue" else f"{project.slug}:{file_name}"
        spdx = spdx or ("CC-BY-SA-4.0" if fmt == "klue" else "NOASSERTION")
    source = Source.objects.filter(name=name).first()
    if source is None:
        return Source.objects.create(name=name, license=spdx or "NOASSERTION",
                                     provenance=f"imported from {file_name}")
    if spdx and source.license != spdx:
        raise RecordError(0, "license", f"source {name!r} is already registered under {source.license}, not {spdx}; "
                                        f"use that licence or another source name")
    return source
