"""Release writers: KLUE native (via the import layer's format module), JSONL, CSV and Parquet.

``write_split`` streams one split's records once: each record goes to the KLUE writer as it is and,
flattened (``flat.py``), to the row writers, so no format holds the split in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .base import RowWriter, WrittenFile
from .csv import CsvWriter
from .flat import FlatSchema, flat_schema
from .jsonl import JsonlWriter
from .klue import KLUE_FORMAT_VERSION, write_klue_extras, write_klue_split
from .parquet import ParquetWriter

FORMATS = ("klue", "jsonl", "csv", "parquet")

__all__ = ["FORMATS", "KLUE_FORMAT_VERSION", "FlatSchema", "WrittenFile", "flat_schema", "write_klue_extras",
           "write_split"]


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
                formats: Iterable[str]) -> list[WrittenFile]:
    """Write one split in every requested format, streaming the records once."""
    formats = list(formats)
    schema = flat_schema(task_slug)
    writers = _row_writers(folder, split, schema, formats)

    def fanned() -> Iterator[dict[str, Any]]:
        for record in records:
            if writers:
                row = schema.row(record, split)
                for writer in writers:
                    writer.write(row)
            yield record

    written: list[WrittenFile] = []
    if "klue" in formats:
        written.append(write_klue_split(folder, task_slug, split, fanned()))
    else:
        for _ in fanned():
            pass
    written.extend(writer.close() for writer in writers)
    return written
