"""What every writer shares: where a file goes and what it holds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class WrittenFile:
    """A file a writer produced, relative to the release folder."""

    path: str
    kind: str
    split: str = ""
    records: int | None = None


class RowWriter(Protocol):
    """A streaming writer of flat rows (``FlatSchema.row``: values in the order of ``FlatSchema.names``):
    ``write`` one row at a time, ``close`` once."""

    kind: str

    def write(self, row: tuple[Any, ...]) -> None: ...

    def close(self) -> WrittenFile: ...


def target(folder: Path, kind: str, split: str, extension: str) -> tuple[Path, str]:
    """``<folder>/<kind>/<split>.<extension>`` (created) and its path relative to the folder."""
    relative = f"{kind}/{split}.{extension}"
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    return path, relative
