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

    def write_head(self, head: bytes) -> None:
        """Write a line from its :func:`line_head`: the same bytes as :meth:`write` of the whole row."""
        self.out.write(head + (b"," if len(head) > 1 else b"") + self._tail)
        self.count += 1

    def write_heads(self, lines: bytes, count: int) -> None:
        """Write ``count`` lines from their :func:`line_head`, each followed by a line end: the same bytes as
        :meth:`write_head` of each (a head holds no line end of its own: JSON escapes it)."""
        self.out.write(lines.replace(b"\n", (b"," if len(self.columns) > 1 else b"") + self._tail))
        self.count += count

    @property
    def _tail(self) -> bytes:
        tail = self.__dict__.get("tail")
        if tail is None:
            tail = self.__dict__["tail"] = b'"split":' + orjson.dumps(self.split) + b"}\n"
        return tail

    def close(self) -> WrittenFile:
        self.out.close()
        return WrittenFile(self.relative, self.kind, self.split, self.count)


def line_head(fields: dict[str, Any]) -> bytes:
    """A JSONL line without its split: the object of a row's ``fields`` (``FlatSchema.fields``) up to its
    closing brace. A release whose only format is JSONL writes these while the items stream, before the splits
    are chosen, and :meth:`JsonlWriter.write_head` ends each with its split: decoding every record again to
    flatten it and encode it once more cost more than the rest of writing."""
    return orjson.dumps(fields)[:-1]
