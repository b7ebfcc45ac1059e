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
        self.buffer: list[dict[str, Any]] = []
        self.writer = pq.ParquetWriter(path, schema, compression="zstd")

    def write(self, row: dict[str, Any]) -> None:
        self.buffer.append(row)
        self.count += 1
        if len(self.buffer) >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if self.buffer:
            self.writer.write_table(pa.Table.from_pylist(self.buffer, schema=self.schema))
            self.buffer = []

    def close(self) -> WrittenFile:
        self._flush()
        self.writer.close()
        return WrittenFile(self.relative, self.kind, self.split, self.count)
