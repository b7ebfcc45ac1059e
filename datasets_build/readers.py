"""Readers: a file → ``(record number, dict)`` pairs, streamed, never loading the whole file.

JSONL and CSV are read here (text decoded as UTF-8, UTF-8 with BOM, or CP949/EUC-KR); KLUE's native
files are read by :mod:`datasets_build.klue_formats`. Problems become :class:`RecordError`s naming the
record (line number for JSONL, data row line for CSV), the field and the reason.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
from django.conf import settings

#: How much of the file the encoding sniffer looks at.
SNIFF_BYTES = 256 * 1024
ENCODINGS = ("auto", "utf-8", "cp949")
#: charset-normalizer names for the Korean legacy encodings; CP949 is a superset of EUC-KR.
_KOREAN_LEGACY = {"cp949", "euc_kr", "euc-kr", "ms949", "uhc", "johab", "iso2022_kr"}
#: Leaf fields that hold numbers in KLUE records (CSV cells are text; these are converted).
NUMERIC_FIELDS = frozenset({
    "start_idx", "end_idx", "answer_start", "question_type", "label", "real-label", "binary-label", "score",
})
BOOLEAN_FIELDS = frozenset({"is_impossible"})
#: How deeply a record's values may nest (KLUE's deepest, a WoS dialogue's states, nest 4 levels).
MAX_DEPTH = 32


@dataclass(frozen=True)
class RecordError(Exception):
    """One problem in one record; ``record`` is the line / row number (1-based), 0 for the whole file."""

    record: int
    field: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"record": self.record, "field": self.field, "message": self.message}


class FatalReadError(RecordError):
    """A problem after which the rest of the file cannot be read (bad encoding, broken CSV header)."""


def detect_encoding(path: Path, declared: str = "auto") -> str:
    """The Python codec to read the file with, or :class:`FatalReadError` naming the problem."""
    if declared not in ENCODINGS:
        raise FatalReadError(0, "encoding", f"unknown encoding {declared!r}; expected one of {', '.join(ENCODINGS)}")
    with path.open("rb") as handle:
        sample = handle.read(SNIFF_BYTES)
    if sample.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if declared == "cp949":
        return "cp949"
    try:
        # final=False: a multi-byte character cut by the sample's end is not an error.
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError as error:
        guess = _guess_legacy(sample)
        if declared == "utf-8":
            raise _not_utf8(sample, error, guess) from None
        if guess is None:
            raise FatalReadError(0, "encoding", f"the file is not UTF-8 (invalid byte 0x{sample[error.start]:02x} "
                                                f"at offset {error.start}) and not CP949/EUC-KR either; "
                                                f"re-save it as UTF-8") from None
        return "cp949"
    return "utf-8"


def _guess_legacy(sample: bytes) -> str | None:
    from charset_normalizer import from_bytes

    best = from_bytes(sample).best()
    if best is not None and best.encoding.lower() in _KOREAN_LEGACY:
        return best.encoding
    try:
        sample.decode("cp949")
    except UnicodeDecodeError:
        return None
    return "cp949"


def _not_utf8(sample: bytes, error: UnicodeDecodeError, guess: str | None) -> FatalReadError:
    line = sample.count(b"\n", 0, error.start) + 1
    hint = (f"it looks like {guess.upper().replace('_', '-')} (common for Korean spreadsheets): re-save it as UTF-8 "
            f"or import it with encoding cp949") if guess else "re-save it as UTF-8"
    return FatalReadError(line, "encoding", f"the file is labelled UTF-8 but line {line} is not valid UTF-8 "
                                            f"(byte 0x{sample[error.start]:02x} at offset {error.start}); {hint}")


def max_record_chars() -> int:
    """The longest record an import reads (``GOLDSET_IMPORT_MAX_RECORD_KB`` × 1,024 characters of its text)."""
    return int(settings.GOLDSET_IMPORT_MAX_RECORD_KB) * 1024


def too_large(size: int, limit: int) -> str:
    return (f"the record is larger than the limit of {limit:,} characters (GOLDSET_IMPORT_MAX_RECORD_KB); "
            f"it has {size:,} or more")


def _text_lines(path: Path, encoding: str, limit: int) -> Iterator[tuple[int, str | int]]:
    """The file's lines, as :func:`bounded_lines` gives them."""
    with path.open("rb") as raw:
        stream = io.TextIOWrapper(raw, encoding=encoding, errors="strict", newline="")
        lines = bounded_lines(stream, limit)
        line_no = 0
        try:
            for line_no, line in lines:
                yield line_no, line
        except UnicodeDecodeError as error:
            raise FatalReadError(line_no + 1, "encoding",
                                 f"line {line_no + 1} is not valid {encoding.upper()} ({error.reason}); "
                                 f"re-save the file as UTF-8") from None


def bounded_lines(stream: IO[str], limit: int) -> Iterator[tuple[int, str | int]]:
    """``(line number, line)`` of a text stream; a line longer than ``limit`` characters is skipped unread, its
    length in its place — never held in memory whole, whatever its size."""
    readline = stream.readline
    line_no = 0
    while line := readline(limit):
        line_no += 1
        if len(line) == limit and not line.endswith(("\n", "\r")):
            size = len(line)
            while (rest := readline(limit)) and not rest.endswith(("\n", "\r")):
                size += len(rest)
            yield line_no, size + len(rest)
        else:
            yield line_no, line


def iter_jsonl(path: Path, encoding: str = "auto") -> Iterator[tuple[int, dict[str, Any]] | RecordError]:
    """One JSON object per line; blank lines are skipped. Bad lines come out as errors, and reading goes on."""
    codec = detect_encoding(path, encoding)
    limit = max_record_chars()
    for line_no, line in _text_lines(path, codec, limit):
        if isinstance(line, int):
            yield RecordError(line_no, "", too_large(line, limit))
            continue
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            yield RecordError(line_no, "", f"invalid JSON: {error}")
            continue
        if not isinstance(value, dict):
            yield RecordError(line_no, "", f"each line must be a JSON object, got {type(value).__name__}")
            continue
        yield line_no, value


def iter_csv(path: Path, encoding: str = "auto", required: tuple[str, ...] = ()) -> Iterator[
        tuple[int, dict[str, Any]] | RecordError]:
    """One record per row; nested fields are flattened with ``.`` in the header, lists are JSON strings."""
    codec = detect_encoding(path, encoding)
    limit = max_record_chars()
    lines = _text_lines(path, codec, limit)
    current = {"line": 0, "size": 0, "start": 1}

    def text() -> Iterator[str]:
        for line_no, line in lines:
            current["line"] = line_no
            # A row may span lines (a quoted cell with newlines): its size is counted from its first line on.
            if not current["size"]:
                current["start"] = line_no
            current["size"] += line if isinstance(line, int) else len(line)
            if current["size"] > limit:
                raise FatalReadError(current["start"], "", too_large(current["size"], limit))
            yield line  # type: ignore[misc]

    reader = csv.DictReader(text())
    try:
        header = reader.fieldnames or []
    except csv.Error as error:
        raise FatalReadError(1, "", f"the header row cannot be read: {error}") from None
    if not header:
        raise FatalReadError(1, "", "the CSV file is empty: expected a header row with the column names")
    missing = [c for c in required if c not in header and not any(h.startswith(c + ".") for h in header)]
    for column in missing:
        yield RecordError(1, column, f"missing required column {column!r} (header has: {', '.join(header)})")
    if missing:
        return
    rows = iter(reader)
    while True:
        current["size"] = 0
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as error:  # a cell over the csv module's field limit, a NUL byte, a broken quote
            raise FatalReadError(current["start"], "", f"the CSV row cannot be read: {error}") from None
        line_no = current["line"]
        if None in row:
            yield RecordError(line_no, "", f"the row has {len(header) + len(row[None])} cells but the header has "
                                           f"{len(header)}")
            continue
        try:
            yield line_no, unflatten(row)
        except RecordError as error:
            yield RecordError(line_no, error.field, error.message)


def _cell(key: str, value: str) -> Any:
    leaf = key.rsplit(".", 1)[-1]
    stripped = value.strip()
    if stripped.startswith(("[", "{")):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError as error:
            raise RecordError(0, key, f"looks like JSON but does not parse: {error.msg} at {error.pos}") from None
        except RecursionError:
            raise RecordError(0, key, f"the JSON nests more than {MAX_DEPTH} levels deep") from None
    if leaf in BOOLEAN_FIELDS:
        if stripped.lower() not in {"true", "false", "1", "0"}:
            raise RecordError(0, key, f"must be true or false, got {value!r}")
        return stripped.lower() in {"true", "1"}
    if leaf in NUMERIC_FIELDS:
        try:
            return int(stripped)
        except ValueError:
            try:
                return float(stripped)
            except ValueError:
                return value  # a text label (NLI/RE "label"); the task type checks it
    return value


def unflatten(row: dict[str, str]) -> dict[str, Any]:
    """``{"subject_entity.word": "비틀즈"}`` → ``{"subject_entity": {"word": "비틀즈"}}``; empty cells are absent."""
    record: dict[str, Any] = {}
    for key, value in row.items():
        if key is None or value is None or value == "":
            continue
        parts = key.strip().split(".")
        target = record
        for part in parts[:-1]:
            child = target.setdefault(part, {})
            if not isinstance(child, dict):
                raise RecordError(0, key, f"column {key!r} nests inside {part!r}, which is also a plain column")
            target = child
        target[parts[-1]] = _cell(key, value)
    return record
