"""JSON Lines: one flat row per line, UTF-8 without ``\\u`` escapes, keys in schema order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from .base import WrittenFile, target


class JsonlWriter:
    kind = "jsonl"

    def __init__(self, folder: Path, split: str, columns: list[str]) -> None:
        path, self.relative = target(folder, self.kind, split, "jsonl")
        self.columns = columns
        self.split = split
        self.count = 0
        self.out = open(path, "wb")  # noqa: SIM115 - closed by close()

    def write(self, row: tuple[Any, ...]) -> None:
        self.out.write(orjson.dumps(dict(zip(self.columns, row, strict=True))) + b"\n")
        self.count += 1

    def close(self) -> WrittenFile:
        self.out.close()
        return WrittenFile(self.relative, self.kind, self.split, self.count)
