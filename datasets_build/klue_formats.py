"""Streaming readers and writers for the KLUE v1.1 file layouts (see docs/formats.md).

Readers yield ``(line, record)``: the 1-based line where the record starts in the file, and one
KLUE-style record as a dict (the shape ``TaskType.parse_record`` takes). Writers take the dicts that
``TaskType.build_record`` returns and write the exact KLUE layout. Neither side holds a whole file in
memory: JSON arrays are decoded one record at a time, TSVs line by line, and the MRC writer buffers
one document.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from annotation.task_types import (
    CHAR_TSV,
    EOJEOL_TSV,
    SQUAD,
    KlueFile,
    MissingLayer,
    PayloadError,
    get_task_type,
    parse_markup,
    spans_from_tags,
    to_markup,
)

Source = str | os.PathLike[str] | IO[str] | IO[bytes]


class FormatError(ValueError):
    """A KLUE file that cannot be read: where (``record_no``: the 1-based line), which field, and why."""

    def __init__(self, record_no: int, field: str, message: str) -> None:
        where = f"line {record_no}" + (f", {field}" if field else "")
        super().__init__(f"{where}: {message}")
        self.record_no = record_no
        self.field = field
        self.message = message


#: The five ``##`` lines that open the NER and DP TSVs, byte for byte (``\t``, ``\n`` are literal
#: backslash sequences in the files; the column line holds real tabs, and DP spells 칼럼명, NER 컬럼명).
_TSV_COMMON_HEADER = ("## 토큰, 레이블 구분자 : \\t", "## 토큰 구분자 : \\n", "## 문장 구분자 : \\n\\n", "## 주석 : ##")
NER_HEADER = (*_TSV_COMMON_HEADER, "## 컬럼명 : CHAR\tNE_TAG")
DP_HEADER = (*_TSV_COMMON_HEADER, "## 칼럼명 : INDEX\tWORD_FORM\tLEMMA\tPOS\tHEAD\tDEPREL")

#: ``## klue-ner-v1_dev_00000-wikitree`` and ``## klue-dp-v1_dev_00000_wikitree``: the guid ends at the
#: split's number, the corpus name follows. A name without a KLUE-style guid is all guid.
_NER_NAME = re.compile(r"^(?P<guid>.+?_(?:train|dev|test)_\d+)(?:-(?P<source>.+))?$")
_DP_NAME = re.compile(r"^(?P<guid>.+?_(?:train|dev|test)_\d+)(?:_(?P<source>.+))?$")
_MRC_DOCUMENT = ("title", "news_category", "source")
_CHUNK = 1 << 20


def klue_file_name(task_slug: str, version: str, split: str) -> str:
    """``klue_file_name("nli", "1.1", "dev")`` -> ``klue-nli-v1.1_dev.json``."""
    spec = klue_spec(task_slug)
    return f"{spec.name}-v{version}_{split}.{spec.extension}"


def klue_spec(task_slug: str) -> KlueFile:
    """The KLUE file the task type declares (``TaskType.klue_file``)."""
    try:
        return get_task_type(task_slug).declared("klue_file", "KLUE file layout")
    except MissingLayer as exc:
        raise ValueError(str(exc)) from None


# -- reading --------------------------------------------------------------------------------------------

def iter_klue_records(path: Source, task_slug: str, max_record_chars: int = 1 << 30, *,
                      warn: Callable[[FormatError], None] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, record)`` for every record of a KLUE file; raise :class:`FormatError` on bad input.

    ``path`` is a file name or an open file (text, or bytes decoded as UTF-8 with an optional BOM).
    MRC yields one record per question (document, paragraph and question fields flattened) numbered by
    the line where its document starts. A record (a JSON record, an MRC document, a TSV sentence) longer
    than ``max_record_chars`` characters is an error, found before it is read whole. ``warn`` reads a
    prediction file: its NER tag column is the prediction and its ``##`` headers were copied from gold, so a
    header the tags disagree with (or a tag sequence that is not valid BIO) is passed to ``warn`` instead of
    raised.
    """
    layout = klue_spec(task_slug).layout
    with _open_text(path) as stream:
        lines = _Lines(stream, max_record_chars)
        if layout == CHAR_TSV:
            yield from _read_ner(lines, warn)
        elif layout == EOJEOL_TSV:
            yield from _read_dp(lines)
        elif layout == SQUAD:
            yield from _read_mrc(_JsonStream(stream, max_record_chars))
        else:
            for line, value in _JsonStream(stream, max_record_chars).array_items():
                yield line, _object(value, line)


class RecordTooLarge(FormatError):
    """A record over the size limit, found before it was read whole."""


def _too_large(line: int, limit: int) -> FormatError:
    return RecordTooLarge(line, "", f"the record is larger than the limit of {limit:,} characters "
                                 f"(GOLDSET_IMPORT_MAX_RECORD_KB)")


@contextmanager
def _open_text(source: Source) -> Iterator[IO[str]]:
    if isinstance(source, str | os.PathLike):
        with open(source, encoding="utf-8-sig", newline="") as stream:
            yield stream
        return
    if isinstance(source, io.TextIOBase):
        yield source
        return
    wrapper = io.TextIOWrapper(source, encoding="utf-8-sig", newline="")  # type: ignore[arg-type]
    try:
        yield wrapper
    finally:
        wrapper.detach()  # the caller owns the underlying file


def _object(value: Any, line: int) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FormatError(line, "", f"expected a JSON object (one record), got {type(value).__name__}")
    return value


class _JsonStream:
    """Incremental JSON over a text stream: decodes one value at a time and keeps track of line numbers."""

    def __init__(self, stream: IO[str], max_value_chars: int = 1 << 30) -> None:
        self.stream = stream
        self.max_value_chars = max_value_chars
        self.buf = ""
        self.pos = 0
        self.line = 1  # the line of ``self.pos``
        self.eof = False
        self.decoder = json.JSONDecoder()

    def _more(self) -> bool:
        if self.eof:
            return False
        try:
            chunk = self.stream.read(_CHUNK)
        except UnicodeDecodeError as exc:
            raise FormatError(self.line + self.buf.count("\n", self.pos), "",
                              f"the file is not UTF-8 ({exc.reason} at byte {exc.start} of a block)") from None
        if not chunk:
            self.eof = True
            return False
        self.buf = self.buf[self.pos:] + chunk
        self.pos = 0
        return True

    def _advance(self, to: int) -> None:
        self.line += self.buf.count("\n", self.pos, to)
        self.pos = to

    def peek(self) -> str:
        """The next non-whitespace character ("" at the end of the file)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in " \t\r\n":
                self._advance(self.pos + 1)
            if self.pos < len(self.buf) or not self._more():
                return self.buf[self.pos:self.pos + 1]

    def expect(self, char: str, what: str) -> None:
        found = self.peek()
        if found != char:
            shown = "the end of the file (truncated JSON)" if not found else repr(found)
            raise FormatError(self.line, "", f"expected {char!r} {what}, found {shown}")
        self._advance(self.pos + 1)

    def value(self) -> tuple[int, Any]:
        """The next JSON value and the line it starts on."""
        self.peek()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                # A value cut by the chunk boundary fails at the buffer's end (or in an unterminated string):
                # read on. Anything else is malformed right here, so do not read the rest of the file first.
                cut = exc.pos >= len(self.buf) - 6 or exc.msg.startswith("Unterminated")
                if cut and len(self.buf) - self.pos > self.max_value_chars:
                    raise _too_large(self.line, self.max_value_chars) from None
                if cut and self._more():
                    continue
                line = self.line + self.buf.count("\n", self.pos, exc.pos)
                if exc.pos >= len(self.buf.rstrip()) or "Unterminated" in exc.msg:
                    raise FormatError(line, "", f"truncated JSON: the file ends inside the value that starts "
                                                f"on line {self.line}") from None
                raise FormatError(line, "", f"invalid JSON: {exc.msg} (column {exc.colno})") from None
            except RecursionError:
                raise FormatError(self.line, "", "the record nests too deeply to be read") from None
            # raw_decode may stop at a number cut by the chunk boundary; a value that ends the buffer is
            # only complete once the next chunk confirms it (objects and arrays end with a bracket).
            if end == len(self.buf) and not self.buf.endswith(("}", "]", '"')) and self._more():
                continue
            if end - self.pos > self.max_value_chars:
                raise _too_large(self.line, self.max_value_chars)
            line = self.line
            self._advance(end)
            return line, value

    def array_items(self, what: str = "at the start of the file") -> Iterator[tuple[int, Any]]:
        self.expect("[", what)
        if self.peek() == "]":
            self._advance(self.pos + 1)
        else:
            while True:
                yield self.value()
                if self.peek() == ",":
                    self._advance(self.pos + 1)
                    continue
                self.expect("]", "or ',' after a record")
                break
        if self.peek() and what == "at the start of the file":
            raise FormatError(self.line, "", "unexpected text after the closing ']'")

    def object_items(self) -> Iterator[tuple[str, int]]:
        """The keys of a top-level object; the caller reads each value (``value`` or ``array_items``)."""
        self.expect("{", "at the start of the file")
        if self.peek() == "}":
            self._advance(self.pos + 1)
            return
        while True:
            line, key = self.value()
            if not isinstance(key, str):
                raise FormatError(line, "", "expected an object key")
            self.expect(":", f"after the key {key!r}")
            yield key, line
            if self.peek() == ",":
                self._advance(self.pos + 1)
                continue
            self.expect("}", "or ',' after a value")
            return


def _read_mrc(json_stream: _JsonStream) -> Iterator[tuple[int, dict[str, Any]]]:
    seen_data = False
    for key, _ in json_stream.object_items():
        if key != "data":
            json_stream.value()
            continue
        seen_data = True
        for line, document in json_stream.array_items("after \"data\":"):
            document = _object(document, line)
            head = {k: v for k, v in document.items() if k != "paragraphs"}
            paragraphs = document.get("paragraphs")
            if not isinstance(paragraphs, list):
                raise FormatError(line, "paragraphs", "must be a list of {context, qas}")
            for p, paragraph in enumerate(paragraphs):
                if not isinstance(paragraph, dict) or not isinstance(paragraph.get("qas"), list):
                    raise FormatError(line, f"paragraphs[{p}].qas", "must be a list of questions")
                for q, qa in enumerate(paragraph["qas"]):
                    if not isinstance(qa, dict):
                        raise FormatError(line, f"paragraphs[{p}].qas[{q}]", "must be an object")
                    yield line, {**head, "context": paragraph.get("context"), **qa}
    if not seen_data:
        raise FormatError(json_stream.line, "data", "an MRC file is {\"version\", \"data\": [documents]}")


class _Lines:
    """A text stream's lines without their newline, numbered from 1."""

    def __init__(self, stream: IO[str], max_line_chars: int = 1 << 30) -> None:
        self.stream = stream
        self.number = 0
        self.max_line_chars = max_line_chars

    def __iter__(self) -> Iterator[tuple[int, str]]:
        limit = self.max_line_chars
        while True:
            try:
                raw = self.stream.readline(limit + 1)
            except UnicodeDecodeError as exc:
                raise FormatError(self.number + 1, "", f"the file is not UTF-8 ({exc.reason})") from None
            if not raw:
                return
            self.number += 1
            if len(raw) > limit:
                raise _too_large(self.number, limit)
            yield self.number, raw.rstrip("\r\n") if raw.endswith("\n") else raw


#: One TSV sentence: (line of its ``##`` line, {guid, source, text}, [(line, row), …]).
_Block = tuple[int, dict[str, Any], list[tuple[int, str]]]


def _tsv_blocks(lines: _Lines, name_pattern: re.Pattern[str]) -> Iterator[_Block]:
    """Split a KLUE TSV into sentences, skipping the ``##`` header lines."""
    block: _Block | None = None
    in_header = True
    size = 0
    for number, text in lines:
        name, tab, rest_of_line = text[3:].partition("\t") if text.startswith("## ") else ("", "", "")
        is_sentence = bool(tab) and bool(name) and " " not in name
        if in_header and text.startswith("##") and not is_sentence:
            continue  # the ## header lines
        in_header = False
        if is_sentence:
            if block:
                yield block
            match = name_pattern.match(name)
            head = {"guid": match.group("guid") if match else name}
            if match and match.group("source"):
                head["source"] = match.group("source")
            block = (number, {**head, "text": rest_of_line}, [])
            size = len(text)
        elif text == "":
            if block:
                yield block
            block = None
        elif block is None:
            raise FormatError(number, "", f"a row outside a sentence: expected '## <guid>\\t<sentence>', "
                                          f"got {text[:40]!r}")
        else:
            block[2].append((number, text))
            size += len(text) + 1
            if size > lines.max_line_chars:
                raise _too_large(block[0], lines.max_line_chars)
    if block:
        yield block


def _read_ner(lines: _Lines, warn: Callable[[FormatError], None] | None = None
              ) -> Iterator[tuple[int, dict[str, Any]]]:
    for start, head, rows in _tsv_blocks(lines, _NER_NAME):
        chars, tags = [], []
        for number, row in rows:
            parts = row.split("\t")
            if len(parts) != 2:
                raise FormatError(number, "", f"expected 'character<TAB>tag', got {len(parts)} columns: {row!r}")
            if len(parts[0]) != 1:
                raise FormatError(number, "chars", f"expected one character, got {parts[0]!r}")
            chars.append(parts[0])
            tags.append(parts[1])
        markup = head["text"]
        sentence, _ = parse_markup(markup)
        joined = "".join(chars)
        if joined != sentence:
            raise FormatError(*_mismatch(start, rows, sentence, joined))
        problem = _tag_problem(start, rows, sentence, markup, chars, tags)
        if problem is not None:
            if warn is None:
                raise problem
            warn(problem)
        record = {k: v for k, v in head.items() if k != "text"}
        yield start, {**record, "sentence": sentence, "markup": markup, "chars": chars, "tags": tags}


def _tag_problem(start: int, rows: list[tuple[int, str]], sentence: str, markup: str, chars: list[str],
                 tags: list[str]) -> FormatError | None:
    """Why a sentence's tag column and its ``##`` header disagree, or ``None`` when they agree."""
    try:
        entities = spans_from_tags(chars, tags)
    except PayloadError as exc:
        index = int(exc.field[5:-1]) if exc.field.startswith("tags[") else 0
        return FormatError(rows[index][0] if rows else start, "tags", exc.message)
    if to_markup(sentence, entities) != markup:
        return FormatError(start, "tags", f"the tags mark {_describe(sentence, entities)} but the sentence "
                                          f"marks {_describe(*parse_markup(markup))}")
    return None


def _mismatch(start: int, rows: list[tuple[int, str]], sentence: str, joined: str) -> tuple[int, str, str]:
    for i, (expected, found) in enumerate(zip(sentence, joined, strict=False)):
        if expected != found:
            return rows[i][0], "chars", (f"the tag sequence does not match its sentence (line {start}): "
                                         f"character {i} is {found!r} here but {expected!r} in the sentence")
    where = rows[len(sentence)][0] if len(joined) > len(sentence) else (rows[-1][0] + 1 if rows else start + 1)
    return where, "chars", (f"the tag sequence does not match its sentence (line {start}): the sentence has "
                            f"{len(sentence)} characters, the tag rows {len(joined)}")


def _describe(sentence: str, entities: list[dict[str, Any]]) -> str:
    return ", ".join(f"{sentence[e['start']:e['end']]!r}:{e['type']}" for e in entities) or "no entity"


def _read_dp(lines: _Lines) -> Iterator[tuple[int, dict[str, Any]]]:
    for start, head, rows in _tsv_blocks(lines, _DP_NAME):
        columns: dict[str, list[Any]] = {k: [] for k in ("index", "word_form", "lemma", "pos", "head", "deprel")}
        for i, (number, row) in enumerate(rows):
            parts = row.split("\t")
            if len(parts) != 6:
                raise FormatError(number, "", f"expected 6 columns (INDEX WORD_FORM LEMMA POS HEAD DEPREL), "
                                              f"got {len(parts)}: {row!r}")
            index, form, lemma, pos, head_value, deprel = parts
            if index != str(i + 1):
                raise FormatError(number, "index", f"is {index!r}; eojeol must be numbered 1, 2, … "
                                                   f"(expected {i + 1})")
            if not re.fullmatch(r"\d+", head_value):
                raise FormatError(number, "head", f"{head_value!r} is not an integer (0 = root)")
            if int(head_value) > len(rows):
                raise FormatError(number, "head", f"{head_value} points past the last eojeol ({len(rows)})")
            for key, value in (("index", i + 1), ("word_form", form), ("lemma", lemma), ("pos", pos),
                               ("head", int(head_value)), ("deprel", deprel)):
                columns[key].append(value)
        if not rows:
            raise FormatError(start, "", "a sentence without eojeol rows")
        record = {k: v for k, v in head.items() if k != "text"}
        yield start, {**record, "sentence": head["text"], **columns}


# -- writing --------------------------------------------------------------------------------------------

def write_klue_file(path: str | os.PathLike[str] | IO[str], task_slug: str, records: Iterable[dict[str, Any]],
                    *, version: str = "1.1", newline: str | None = None) -> int:
    """Write records (as ``build_record`` returns them) in the KLUE layout; return how many were written.

    ``version`` is the release version; MRC's inner ``"version"`` is ``klue-mrc-v<major>`` like KLUE's.
    ``newline`` defaults to the line ending of KLUE's own file (CRLF for STS, LF elsewhere).
    Records stream through; MRC buffers one document (consecutive questions sharing title and context
    form one document and paragraph, so pass them grouped by passage).
    """
    spec = klue_spec(task_slug)
    with _open_for_writing(path, spec.newline if newline is None else newline) as out:
        if spec.layout == CHAR_TSV:
            return _write_tsv(out, NER_HEADER, records, _ner_block)
        if spec.layout == EOJEOL_TSV:
            return _write_tsv(out, DP_HEADER, records, _dp_block)
        if spec.layout == SQUAD:
            return _write_mrc(out, records, f"{spec.name}-v{version.split('.')[0]}")
        return _write_json_array(out, records, 1)


class _Out:
    """A text sink that writes ``\n`` as the file's line ending (JSON strings never hold a raw newline)."""

    def __init__(self, stream: IO[str], newline: str) -> None:
        self.stream = stream
        self.newline = newline

    def write(self, text: str) -> None:
        self.stream.write(text if self.newline == "\n" else text.replace("\n", self.newline))


@contextmanager
def _open_for_writing(path: str | os.PathLike[str] | IO[str], newline: str) -> Iterator[_Out]:
    if isinstance(path, str | os.PathLike):
        with open(path, "w", encoding="utf-8", newline="") as out:
            yield _Out(out, newline)
    else:
        yield _Out(path, newline)


def _indented(value: Any, depth: int) -> str:
    """``value`` as KLUE writes it (``json.dump(indent=4, ensure_ascii=False)``), nested ``depth`` levels."""
    text = json.dumps(value, ensure_ascii=False, indent=4)
    return text.replace("\n", "\n" + "    " * depth)


def _write_json_array(out: _Out, values: Iterable[Any], depth: int) -> int:
    count = 0
    for value in values:
        out.write(("[\n" if count == 0 else ",\n") + "    " * depth + _indented(value, depth))
        count += 1
    out.write("[]" if count == 0 else "\n" + "    " * (depth - 1) + "]")
    return count


def _write_mrc(out: _Out, records: Iterable[dict[str, Any]], inner_version: str) -> int:
    out.write("{\n    \"version\": " + json.dumps(inner_version, ensure_ascii=False) + ",\n    \"data\": ")
    counter = {"questions": 0}

    def documents() -> Iterator[dict[str, Any]]:
        document: dict[str, Any] | None = None
        key: tuple[Any, ...] | None = None
        for record in records:
            counter["questions"] += 1
            head = {k: v for k, v in record.items() if k in _MRC_DOCUMENT}
            qa = {k: v for k, v in record.items() if k not in _MRC_DOCUMENT and k != "context"}
            this_key = (*head.values(), record.get("context"))
            if document is not None and this_key == key:
                document["paragraphs"][-1]["qas"].append(qa)
                continue
            if document is not None:
                yield document
            document = {**head, "paragraphs": [{"context": record.get("context"), "qas": [qa]}]}
            key = this_key
        if document is not None:
            yield document

    _write_json_array(out, documents(), 2)
    out.write("\n}")
    return counter["questions"]


def _write_tsv(out: _Out, header: tuple[str, ...], records: Iterable[dict[str, Any]],
               block: Any) -> int:
    out.write("\n".join(header) + "\n")
    count = 0
    for count, record in enumerate(records, 1):
        try:
            out.write(block(record))
        except (KeyError, TypeError, ValueError) as exc:
            raise FormatError(count, "", f"record {record.get('guid', '')!r} cannot be written: {exc!r}") from None
    return count


def _tsv_name(record: dict[str, Any], separator: str) -> str:
    source = record.get("source")
    return record["guid"] + (f"{separator}{source}" if source else "")


def _ner_block(record: dict[str, Any]) -> str:
    chars, tags = record["chars"], record["tags"]
    if len(chars) != len(tags):
        raise ValueError(f"{len(chars)} characters but {len(tags)} tags")
    rows = "".join(f"{c}\t{t}\n" for c, t in zip(chars, tags, strict=True))
    return f"## {_tsv_name(record, '-')}\t{record['markup']}\n{rows}\n"


def _dp_block(record: dict[str, Any]) -> str:
    columns = [record[k] for k in ("index", "word_form", "lemma", "pos", "head", "deprel")]
    rows = "".join("\t".join(map(str, row)) + "\n" for row in zip(*columns, strict=True))
    return f"## {_tsv_name(record, '_')}\t{record['sentence']}\n{rows}\n"
