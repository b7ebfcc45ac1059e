"""The texts of a reference file (a public benchmark's split, another corpus) for the contamination check of a
release (``exports/contamination.py``): read in any of the import's formats, parsed and checked by the project's
task type as the import does, each record's text and content hash as an item of it would have. Nothing is
stored, pseudonymized or screened: the texts are only hashed and MinHashed, a batch at a time."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from annotation.models import content_hash
from annotation.task_types import PayloadError, TaskType

from .interop import IMPORTED_ANNOTATIONS
from .pipeline import FORMATS, read_records
from .readers import FatalReadError, RecordError

#: Records per batch: a batch's MinHash and candidate pairs take a few MB, whatever the file's size.
BATCH = 10_000
#: Problems kept for the report (every one is counted).
_PROBLEMS_KEPT = 20


@dataclass
class ReferenceBatch:
    """Records of a reference: their record numbers, ids (``guid``, or ``""``), content hashes and texts."""

    records: list[int] = field(default_factory=list)
    guids: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)


@dataclass
class ReadOutcome:
    """What reading a reference file came to: records read and skipped, and the first problems."""

    read: int = 0
    skipped: int = 0
    problems: list[dict[str, object]] = field(default_factory=list)

    def problem(self, record: int, field_name: str, message: str) -> None:
        self.skipped += 1
        if len(self.problems) < _PROBLEMS_KEPT:
            self.problems.append({"record": record, "field": field_name, "message": message})


def reference_batches(path: Path, fmt: str, task: TaskType, outcome: ReadOutcome, *, encoding: str = "auto",
                      batch: int = BATCH) -> Iterator[ReferenceBatch]:
    """The file's records as batches of texts. A record the task type refuses is skipped and counted in
    ``outcome`` (a benchmark's file may hold records an import would refuse: they still cannot be matched); a
    file that cannot be read at all raises :class:`RecordError`."""
    if fmt not in FORMATS:
        raise RecordError(0, "format", f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    current = ReferenceBatch()
    for entry in read_records(path, fmt, task, encoding):
        if isinstance(entry, RecordError):
            if isinstance(entry, FatalReadError):
                raise entry
            outcome.problem(entry.record, entry.field, entry.message)
            continue
        record_no, record = entry
        outcome.read += 1
        try:
            record = task.complete_record(record)
            if IMPORTED_ANNOTATIONS in record:
                parsed = task.parse_tool_record({k: v for k, v in record.items() if k != IMPORTED_ANNOTATIONS})
            else:
                parsed = task.parse_record(record)
            text = task.item_text(task.validate_item(parsed.payload))
        except PayloadError as error:
            outcome.problem(record_no, error.field, error.message)
            continue
        current.records.append(record_no)
        current.guids.append(parsed.external_id or "")
        current.hashes.append(content_hash(text))
        current.texts.append(text)
        if len(current.records) >= batch:
            yield current
            current = ReferenceBatch()
    if current.records:
        yield current
