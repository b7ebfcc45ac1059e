"""Parquet (pyarrow) with the task's explicit Arrow schema, written in row groups as rows stream in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .base import WrittenFile, target

ROW_GROUP = 10_000


class ParquetWriter:
    kind = "parquet"

    def __init__(self, folder: Path, split: str, schema: pa.Schema) -> None:
        path, self.relative = target(folder, self.kind, split, "parquet")
        self.split = split
        self.count = 0
        self.schema = schema
        self.buffer: list[tuple[Any, ...]] = []
        self.writer = pq.ParquetWriter(path, schema, compression="zstd")

    def write(self, row: tuple[Any, ...]) -> None:
        self.buffer.append(row)
        self.count += 1
        if len(self.buffer) >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if self.buffer:
            # Column by column (the rows transposed in C): the same table as ``from_pylist`` of dicts, built faster.
            columns = zip(*self.buffer, strict=True)
            arrays = [pa.array(values, type=field.type) for values, field in zip(columns, self.schema, strict=True)]
            self.writer.write_table(pa.Table.from_arrays(arrays, schema=self.schema))
            self.buffer = []

    def close(self) -> WrittenFile:
        self._flush()
        self.writer.close()
        return WrittenFile(self.relative, self.kind, self.split, self.count)
