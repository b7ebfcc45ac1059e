"""KLUE native files through the import layer's writer (``datasets_build.klue_formats``).

File names keep KLUE's own layout version (``klue-nli-v1.1_dev.json``): the files are the KLUE v1.1
format, whatever the release's version, so tools written for KLUE find them by their usual names.

The tasks whose file is one JSON array (YNAT, STS, NLI, RE, WoS) are written by a fast path that gives
the same bytes as ``write_klue_file``: KLUE's layout is ``json.dumps(records, ensure_ascii=False,
indent=4)``, whose pure-Python indenting encoder cost more than everything else the writers do. orjson
writes the same text with two-space indentation, so the fast path has orjson encode a batch of records,
doubles the indentation, and checks what orjson spells differently from ``json`` (floats outside
``json``'s fixed-notation range, NaN and infinities); a batch with any of those, or anything orjson
refuses (integer keys, integers over 64 bits), is written by ``json`` itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from annotation.task_types import JSON_ARRAY
from datasets_build.klue_formats import klue_file_name, klue_spec, write_klue_file

from .base import WrittenFile
from .flat import FlatSchema

KLUE_FORMAT_VERSION = "1.1"

#: Records per orjson call: enough to amortise the call, few enough to keep memory flat.
BATCH = 1000
#: What orjson writes for the only values it spells differently from ``json``: a float under 1e-4 (fixed
#: ``0.0000…`` or an exponent, always signed), one of 1e16 or more (an exponent), NaN and infinities (null).
#: Found anywhere in a batch (also inside a string, harmlessly), they send it to the float check.
_SUSPECT = (b"e+", b"e-", b"0.0000", b"null")
#: orjson escapes control characters, so this byte never occurs in its output: a placeholder while indenting.
_MARK = b"\x01"


def write_klue_split(folder: Path, task_slug: str, split: str, records: Iterable[dict[str, Any]]) -> WrittenFile:
    name = klue_file_name(task_slug, KLUE_FORMAT_VERSION, split)
    spec = klue_spec(task_slug)
    if spec.layout == JSON_ARRAY:
        count = write_json_array(folder / name, records, spec.newline)
    else:
        count = write_klue_file(folder / name, task_slug, records, version=KLUE_FORMAT_VERSION)
    return WrittenFile(name, "klue", split, count)


def write_json_array(path: Path, records: Iterable[dict[str, Any]], newline: str = "\n") -> int:
    """``records`` as KLUE's JSON files hold them (``write_klue_file``'s bytes for the JSON-array tasks)."""
    count = 0
    with open(path, "wb") as out:
        for batch in _batches(records):
            out.write(_newlines((b"[\n" if count == 0 else b",\n") + _indented_items(batch), newline))
            count += len(batch)
        out.write(_newlines(b"\n]", newline) if count else b"[]")
    return count


def _newlines(text: bytes, newline: str) -> bytes:
    """KLUE's line ending for the file (CRLF for STS): JSON text holds no other raw newline."""
    return text if newline == "\n" else text.replace(b"\n", newline.encode())


def _batches(records: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    iterator = iter(records)
    while batch := list(islice(iterator, BATCH)):
        yield batch


def _indented_items(batch: list[dict[str, Any]]) -> bytes:
    """The items of ``json.dumps(batch, ensure_ascii=False, indent=4)`` — without the brackets — as UTF-8."""
    try:
        data = orjson.dumps(batch, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:
        data = None
    if data is not None and any(token in data for token in _SUSPECT) and not all(map(_same_floats, batch)):
        data = None
    if data is None:
        return json.dumps(batch, ensure_ascii=False, indent=4)[2:-2].encode()
    # Double the indentation: every line starts with two spaces per level (JSON strings hold no raw newline).
    # Outside strings the only runs of spaces are those, so when no string holds two spaces in a row, one
    # replacement does it; else level by level, deepest first, through a placeholder so no line widens twice.
    if b"  " not in orjson.dumps(batch):
        return data[2:-2].replace(b"  ", b"    ")
    depth = 1
    while b"\n" + b"  " * (depth + 1) in data:
        depth += 1
    for level in range(depth, 0, -1):
        data = data.replace(b"\n" + b"  " * level, b"\n" + _MARK * level)
    return data[2:-2].replace(_MARK, b"    ")


def _same_floats(value: Any) -> bool:
    """Whether every float in ``value`` is one orjson prints as ``json`` does: finite, and zero or within
    the range ``json`` (``repr``) writes without an exponent."""
    if isinstance(value, float):
        return value == 0.0 or 1e-4 <= abs(value) < 1e16
    if isinstance(value, dict):
        return all(_same_floats(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_same_floats(v) for v in value)
    return True


def write_klue_extras(folder: Path, task_slug: str, schema: FlatSchema,
                      label_schema: dict[str, Any]) -> list[WrittenFile]:
    """RE's relation list and WoS's ontology, from the project's label schema."""
    written = []
    for extra in schema.extras:
        name = klue_file_name(task_slug, KLUE_FORMAT_VERSION, extra.suffix)
        (folder / name).write_text(extra.render(label_schema), encoding="utf-8")
        written.append(WrittenFile(name, "klue"))
    return written
