"""Release writers: KLUE native (via the import layer's format module), JSONL, CSV and Parquet, and the
standard formats of ``standard.py`` (CoNLL-U, CoNLL-2003, SQuAD v2.0, doccano, Label Studio) for the task
types they fit.

``write_split`` streams one split's records once: each record goes to the KLUE writer and the standard
formats' writers as it is and, flattened (``flat.py``), to the row writers, so no format holds the split
in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .base import RowWriter, WrittenFile
from .csv import CsvWriter
from .flat import FlatSchema, flat_schema
from .jsonl import JsonlWriter, line_head
from .klue import KLUE_FORMAT_VERSION, write_klue_extras, write_klue_split
from .parquet import ParquetWriter
from .standard import STANDARD_FORMATS, fits, fitting_tasks, record_writers, unfit_formats, write_extras

#: What every task type can be released as (the default of a build).
DEFAULT_FORMATS = ("klue", "jsonl", "csv", "parquet")
#: Every release format: the default ones, then the standard ones (each for the task types it fits).
FORMATS = (*DEFAULT_FORMATS, *STANDARD_FORMATS)

#: A file kind's name and how to load it, for the dataset card.
_DEFAULT_LOADING = {
    "klue": ("KLUE v1.1", "KLUE's own readers (the layout of the KLUE benchmark's files)"),
    "jsonl": ("JSON Lines", "`datasets.load_dataset('json', data_files=path)` or `pandas.read_json(path, lines=True)`"),
    "csv": ("CSV", "`datasets.load_dataset('csv', data_files=path)` or `pandas.read_csv(path)`"),
    "parquet": ("Parquet", "`datasets.load_dataset('parquet', data_files=path)` or `pandas.read_parquet(path)`"),
    "changes": ("Changelog", "what changed since the previous version: `CHANGES.md` to read, `changes.jsonl` one "
                            "JSON line per changed item (ids and kinds)"),
    "budget": ("CSV", "each record's annotators per item (`guid,split,k`): `pandas.read_csv(path)`"),
}


def file_format(kind: str) -> tuple[str, str]:
    """``(format name, how to load it)`` of a written file's kind."""
    if kind in STANDARD_FORMATS:
        return STANDARD_FORMATS[kind].description, STANDARD_FORMATS[kind].load
    return _DEFAULT_LOADING.get(kind, (kind, "—"))


__all__ = ["DEFAULT_FORMATS", "FORMATS", "KLUE_FORMAT_VERSION", "STANDARD_FORMATS", "FlatSchema", "WrittenFile",
           "file_format", "fits", "fitting_tasks", "flat_schema", "jsonl_heads_fit", "line_head", "unfit_formats",
           "write_extras", "write_jsonl_heads", "write_klue_extras", "write_split"]


def _row_writers(folder: Path, split: str, schema: FlatSchema, formats: Iterable[str]) -> list[RowWriter]:
    writers: list[RowWriter] = []
    for fmt in formats:
        if fmt == "jsonl":
            writers.append(JsonlWriter(folder, split, schema.names))
        elif fmt == "csv":
            writers.append(CsvWriter(folder, split, schema.names))
        elif fmt == "parquet":
            writers.append(ParquetWriter(folder, split, schema.arrow_schema()))
    return writers


def write_split(folder: Path, task_slug: str, split: str, records: Iterable[dict[str, Any]],
                formats: Iterable[str], *, schema: FlatSchema | None = None) -> list[WrittenFile]:
    """Write one split in every requested format, streaming the records once. A ``schema`` other than the
    task's own adds columns (soft labels) to the flat rows only: the fields it adds beyond the task's columns
    are taken off each record before the KLUE and standard writers see it."""
    formats = list(formats)
    own = flat_schema(task_slug)
    added = [] if schema is None else [name for name in schema.names if name not in own.names]
    schema = schema or own
    writers = _row_writers(folder, split, schema, formats)
    standard = record_writers(folder, task_slug, split, formats)

    def fanned() -> Iterator[dict[str, Any]]:
        for record in records:
            if writers:
                row = schema.row(record, split)
                for writer in writers:
                    writer.write(row)
            if added:
                record = {key: value for key, value in record.items() if key not in added}
            for other in standard:
                other.write(record)
            yield record

    written: list[WrittenFile] = []
    if "klue" in formats:
        written.append(write_klue_split(folder, task_slug, split, fanned()))
    else:
        for _ in fanned():
            pass
    written.extend(writer.close() for writer in writers)
    written.extend(other.close() for other in standard)
    return written



def jsonl_heads_fit(schema: FlatSchema, formats: Iterable[str]) -> bool:
    """Whether a build may stream JSONL line heads (``jsonl.line_head``) instead of records: JSONL is its only
    format, and no column of the task is named like the split column."""
    return list(formats) == ["jsonl"] and "split" not in schema.names[:-1]


def write_jsonl_heads(folder: Path, schema: FlatSchema, names: list[str],
                      chunks: Iterable[tuple[list[bytes], Any]], counts: dict[str, int]) -> list[WrittenFile]:
    """Write the splits of a JSONL-only release from its records' line heads, read once: ``chunks`` of heads
    (each followed by a line end) with each one's split (a numpy array of indexes into ``names``). The same
    files as :func:`write_split` of the records, for the splits that ``counts`` gives records; a chunk's lines
    of one split are written in one piece."""
    writers = [JsonlWriter(folder, name, schema.names) if counts.get(name) else None for name in names]
    for lines, codes in chunks:
        for index, writer in enumerate(writers):
            chosen = (codes == index).nonzero()[0].tolist()
            if chosen and writer is not None:
                writer.write_heads(b"".join([lines[i] for i in chosen]), len(chosen))
    return [writer.close() for writer in writers if writer is not None]
