"""KLUE native files through the import layer's writer (``datasets_build.klue_formats``).

File names keep KLUE's own layout version (``klue-nli-v1.1_dev.json``): the files are the KLUE v1.1
format, whatever the release's version, so tools written for KLUE find them by their usual names.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from datasets_build.klue_formats import klue_file_name, write_klue_file

from .base import WrittenFile
from .flat import FlatSchema

KLUE_FORMAT_VERSION = "1.1"


def write_klue_split(folder: Path, task_slug: str, split: str, records: Iterable[dict[str, Any]]) -> WrittenFile:
    name = klue_file_name(task_slug, KLUE_FORMAT_VERSION, split)
    count = write_klue_file(folder / name, task_slug, records, version=KLUE_FORMAT_VERSION)
    return WrittenFile(name, "klue", split, count)


def write_klue_extras(folder: Path, task_slug: str, schema: FlatSchema,
                      label_schema: dict[str, Any]) -> list[WrittenFile]:
    """RE's relation list and WoS's ontology, from the project's label schema."""
    written = []
    for extra in schema.extras:
        name = klue_file_name(task_slug, KLUE_FORMAT_VERSION, extra.suffix)
        (folder / name).write_text(extra.render(label_schema), encoding="utf-8")
        written.append(WrittenFile(name, "klue"))
    return written
