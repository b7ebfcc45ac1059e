"""Record preparation — parse, validate, screen, hash — in this process or in worker processes.

Everything an import does to one record before it is written depends on that record alone, so it can
run anywhere: :class:`RecordPreparer` turns a chunk of read records into :class:`Prepared` entries (the
item's row and its checked labels encoded for writing, flags, dedup key, MinHash signature and band keys)
or :class:`Failed` ones. The pipeline consumes them in file order and does what needs the whole file or
the database (duplicates, writing). A large file's chunks go to a pool of forked processes (:mod:`.processes`),
so that the preparation of later records overlaps the writing of earlier ones and the database's work (in one
process they wait for one another; docs/performance.md); a small file is prepared in place, with no
processes to start.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

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
from .screening import ScreenHit, screen_with_models, screen_without_models

if TYPE_CHECKING:
    from .processes import ModelScreening

#: How the importer's items and labels are written (the rows encoded here, in the workers). An item's screening
#: status is given when it is written: the model screeners may finish with it after its preparation.
ITEM_ROWS = bulk.EncodedRows(Item, writer_fields=("screening_status",))
ANNOTATION_ROWS = bulk.EncodedRows(Annotation, writer_fields=("item", "annotator"))


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
    #: The model screeners' look at the text, when it comes after the preparation
    #: (see :class:`.processes.ModelScreening`).
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
        ``models_later``, the texts the model screeners might hit are left to them
        (:class:`.processes.ModelScreening`)."""
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
