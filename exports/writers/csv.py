"""CSV: the flat columns with a header row; lists and objects as compact JSON text, null as empty.

Text cells that a spreadsheet would run as a formula (OWASP "CSV injection": a cell starting with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return) get a leading ``'``, so opening a release in Excel or
LibreOffice shows the text instead of evaluating it. Only the CSV is escaped: JSONL and Parquet keep the
value as annotated, so they remain the round-trip-safe formats.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from .base import WrittenFile, target

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def neutralise_formula(text: str) -> str:
    """The text with a leading ``'`` when a spreadsheet would read it as a formula."""
    return "'" + text if text.startswith(FORMULA_TRIGGERS) else text


def cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return neutralise_formula(value)
    return value


class CsvWriter:
    kind = "csv"

    def __init__(self, folder: Path, split: str, columns: list[str]) -> None:
        path, self.relative = target(folder, self.kind, split, "csv")
        self.split = split
        self.count = 0
        self.out = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed by close()
        self.writer = csv.writer(self.out, lineterminator="\n")
        self.writer.writerow(columns)

    def write(self, row: tuple[Any, ...]) -> None:
        self.writer.writerow([cell(value) for value in row])
        self.count += 1

    def close(self) -> WrittenFile:
        self.out.close()
        return WrittenFile(self.relative, self.kind, self.split, self.count)
