"""Readers of other annotation tools' exports: doccano (JSONL, or its per-annotator ZIP) and Label Studio
(JSON). Each source example becomes one or more KLUE-style records of the project's task type, and each
author's labels a separate imported annotation (``IMPORTED_ANNOTATIONS``), so agreement works on them;
the rest of the import (parse_record, validation, PII with offsets remapped, screening, all-or-nothing)
is the pipeline's, as for every format.

Mapping (docs/import.md, "doccano and Label Studio"):

| tool | its project | Goldset task type |
|---|---|---|
| doccano | text classification (``label: [names]``) | tc |
| doccano | sequence labelling (``label: [[start, end, type]]``) | ner |
| doccano | relation extraction (``entities`` + ``relations``) | re (one item per related entity pair) |
| Label Studio | ``choices`` | tc |
| Label Studio | ``labels`` (character offsets) | ner |
| Label Studio | ``labels`` + ``relation`` | re |

Other task types, and other kinds of label (Label Studio's ``textarea``, ``rating``…), are refused with
the record and field. An example's labels are grouped across the export before it is yielded (a doccano
ZIP has one file per annotator), so memory grows with the number of examples: these exports are small.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
from django.conf import settings

from annotation.task_types import LABEL_STAGE, get_task_type

from .klue_formats import FormatError, RecordTooLarge, _JsonStream, _open_text
from .readers import FatalReadError, RecordError, bounded_lines, max_record_chars, too_large

#: The record key that carries annotations already split per author (read by ``prepare.RecordPreparer``).
IMPORTED_ANNOTATIONS = "_annotations"
#: ZIP members up to this size are not held to the compression-ratio limit (a small file of repeated lines
#: compresses well, and cannot expand far).
_SMALL_MEMBER = 1024 * 1024
#: Files a ZIP may list: doccano's export has one per project member. ``zipfile`` builds an object per listed
#: file when it opens the archive, so a ZIP listing millions of empty files is refused before it is opened.
MAX_ZIP_MEMBERS = 1000
#: The end of a ZIP that holds its end record: 22 bytes and a comment of up to 65,535.
_END_RECORD_SPAN = 22 + 0xFFFF


@dataclass
class Labels:
    """One author's labels on one example."""

    categories: list[str] = field(default_factory=list)
    #: span id → (start, end exclusive, type)
    spans: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    #: (subject span, object span, relation type)
    relations: list[tuple[tuple[int, int, str], tuple[int, int, str], str]] = field(default_factory=list)

    def relate(self, source: str, target: str, kind: str, path: str, fail: Callable[[str, str], RecordError]) -> None:
        """Add a relation between two of these spans (``path`` names it in errors)."""
        ends = []
        for end_name, span_id in (("from_id", source), ("to_id", target)):
            if span_id not in self.spans:
                raise fail(f"{path}.{end_name}", f"names no entity of this annotation ({span_id!r})")
            ends.append(self.spans[span_id])
        if any(r[:2] == (ends[0], ends[1]) for r in self.relations):
            raise fail(path, "a second relation between the same two entities; a KLUE-RE item has one label per "
                             "entity pair")
        self.relations.append((ends[0], ends[1], kind))


@dataclass
class Example:
    """One example of the export and every author's labels on it."""

    record_no: int
    #: Prefix of field paths: the member file of a ZIP (``"admin.jsonl:"``), else ``""``.
    where: str
    guid: str
    text: str
    authors: dict[str, Labels] = field(default_factory=dict)


# -- examples → records, per task type ----------------------------------------------------------


def _annotation(author: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"annotator": author, "stage": LABEL_STAGE, "payload": payload}


def _tc_records(example: Example) -> list[dict[str, Any]]:
    annotations = []
    for author, labels in example.authors.items():
        if not labels.categories:
            continue
        if len(labels.categories) > 3:
            raise RecordError(example.record_no, example.where + "label",
                              f"{len(labels.categories)} categories by {author or 'the export'}; a tc label has at "
                              f"most three (first, second, third choice)")
        first, second, third = [*labels.categories, None, None][:3]
        annotations.append(_annotation(author, {"label": first, "second": second, "third": third}))
    return [{"guid": example.guid, "title": example.text, IMPORTED_ANNOTATIONS: annotations}]


def _ner_records(example: Example) -> list[dict[str, Any]]:
    annotations = [_annotation(author, {"entities": [{"start": s, "end": e, "type": t} for s, e, t in sorted(
        labels.spans.values())]}) for author, labels in example.authors.items()]
    return [{"guid": example.guid, "sentence": example.text, IMPORTED_ANNOTATIONS: annotations}]


def _re_records(example: Example) -> list[dict[str, Any]]:
    """One item per related entity pair (KLUE-RE's shape); each author who relates the pair labels it. Entities
    that nobody related would make no item at all, so they are refused rather than left out unnoticed (an
    example nobody labelled is not an entity pair and gives nothing)."""
    pairs: dict[tuple[tuple[int, int, str], tuple[int, int, str]], list[dict[str, Any]]] = {}
    for author, by_author in example.authors.items():
        for subject, obj, kind in by_author.relations:
            pairs.setdefault((subject, obj), []).append(_annotation(author, {"label": kind}))
    if not pairs and any(labels.spans for labels in example.authors.values()):
        raise RecordError(example.record_no, example.where + "relations",
                          "entities without a relation between them; a re item is one related entity pair, so "
                          "relate the pair (no_relation included) or remove the entities")
    records = []
    for n, ((subject, obj), labels) in enumerate(pairs.items(), start=1):
        guid = example.guid if len(pairs) == 1 or not example.guid else f"{example.guid}-{n}"
        records.append({"guid": guid, "sentence": example.text,
                        "subject_entity": _entity(example.text, subject), "object_entity": _entity(example.text, obj),
                        IMPORTED_ANNOTATIONS: labels})
    return records


def _entity(text: str, span: tuple[int, int, str]) -> dict[str, Any]:
    start, end, kind = span
    return {"word": text[start:end], "start_idx": start, "end_idx": end - 1, "type": kind}


#: How an example becomes records of a task type, by what the task type takes from these exports
#: (``TaskType.interop_labels``).
TO_RECORDS: dict[str, Callable[[Example], list[dict[str, Any]]]] = {
    "categories": _tc_records, "spans": _ner_records, "relations": _re_records,
}


def _labels_of(task_slug: str) -> str | None:
    return get_task_type(task_slug).interop_labels


def _check_task(task_slug: str, fmt: str) -> None:
    if _labels_of(task_slug) not in TO_RECORDS:
        raise FatalReadError(0, "format", f"{fmt} exports import into tc, ner and re projects (text classification, "
                                          f"sequence labelling, relations), not {task_slug}")


def _records(examples: dict[str, Example], task_slug: str) -> Iterator[tuple[int, dict[str, Any]] | RecordError]:
    convert = TO_RECORDS[_labels_of(task_slug) or ""]
    for example in examples.values():
        try:
            for record in convert(example):
                yield example.record_no, record
        except RecordError as error:
            yield error


# -- doccano ------------------------------------------------------------------------------------


def iter_doccano(path: Path, task_slug: str, *, approved_only: bool = False
                 ) -> Iterator[tuple[int, dict[str, Any]] | RecordError]:
    """doccano 1.x's JSONL export. doccano's ZIP holds one ``<username>.jsonl`` per project member (each
    file's labels are that member's), or ``all.jsonl`` for a project with collaborative annotation (labels
    merged: the corpus's, no annotator), as does a single JSONL file. A line longer than the record limit is
    an error naming it, skipped unread; a ZIP that would expand past its limits is refused unopened.

    doccano 1.8.4 records that an annotator finished an example by its state (*confirmed*), not in the labels:
    its export writes every example into every member's file, labelled or not, unless "Export only approved
    documents" is ticked, when a member's file holds only the examples that member confirmed
    (``data_export.models.ExportedExampleManager.confirmed``). So in a ZIP an empty ``label`` list is a
    sentence labelled with no entities only when the export was of approved examples (``approved_only``)."""
    _check_task(task_slug, "doccano")
    examples: dict[str, Example] = {}
    errors: list[RecordError] = []
    limit = max_record_chars()
    if zipfile.is_zipfile(path):
        if (count := _declared_members(path)) > MAX_ZIP_MEMBERS:
            raise FatalReadError(0, "", f"the ZIP file lists {count:,} files; a doccano export has one per project "
                                        f"member (at most {MAX_ZIP_MEMBERS:,} are read)")
        with zipfile.ZipFile(path) as archive:
            members = sorted((i for i in archive.infolist() if i.filename.endswith(".jsonl") and not i.is_dir()),
                             key=lambda i: i.filename)
            if not members:
                raise FatalReadError(0, "", "the ZIP file holds no .jsonl file (doccano exports one per annotator)")
            _check_expansion(members)
            names = [m.filename for m in members]
            for member in members:
                # A collaborative project's export merges everyone's labels into all.jsonl: no annotator.
                author = "" if names == ["all.jsonl"] else Path(member.filename).stem
                try:
                    with archive.open(member) as raw:
                        _doccano_lines(io.TextIOWrapper(raw, encoding="utf-8-sig", newline=""), limit,
                                       f"{member.filename}:", author, task_slug, examples, errors,
                                       empty_is_label=approved_only)
                except (zipfile.BadZipFile, EOFError, zlib.error) as error:
                    raise FatalReadError(0, member.filename, f"the ZIP file is damaged ({error})") from None
    else:
        with open(path, encoding="utf-8-sig", newline="") as stream:
            _doccano_lines(stream, limit, "", "", task_slug, examples, errors, empty_is_label=True)
    yield from errors
    yield from _records(examples, task_slug)


def _declared_members(path: Path) -> int:
    """How many files a ZIP's end record says its directory lists (0 when there is none to read), read before
    :class:`zipfile.ZipFile` builds an object for each of them."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        handle.seek(max(0, handle.tell() - _END_RECORD_SPAN))
        tail = handle.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(tail):
        return 0
    (count,) = struct.unpack_from("<H", tail, at + 10)
    locator = tail.rfind(b"PK\x06\x07", 0, at)
    if count == 0xFFFF and locator >= 0:  # ZIP64: the count is in the ZIP64 end record the locator points to
        (offset,) = struct.unpack_from("<Q", tail, locator + 8)
        with open(path, "rb") as handle:
            handle.seek(offset)
            record = handle.read(56)
        if record[:4] == b"PK\x06\x06" and len(record) == 56:
            (count,) = struct.unpack_from("<Q", record, 32)
    return count


def _check_expansion(members: list[zipfile.ZipInfo]) -> None:
    """Refuse a ZIP whose members would expand past ``GOLDSET_IMPORT_ZIP_MAX_MB`` together, or a member over
    1 MiB past ``GOLDSET_IMPORT_ZIP_MAX_RATIO`` times its compressed size, before any is decompressed. The
    sizes are the archive's own; :mod:`zipfile` never inflates a member past the size it declares."""
    total_limit = int(settings.GOLDSET_IMPORT_ZIP_MAX_MB) * 1024 * 1024
    ratio_limit = int(settings.GOLDSET_IMPORT_ZIP_MAX_RATIO)
    total = 0
    for member in members:
        total += member.file_size
        if total > total_limit:
            raise FatalReadError(0, member.filename, f"the ZIP file's .jsonl files expand to more than "
                                                     f"{total_limit:,} bytes (GOLDSET_IMPORT_ZIP_MAX_MB); it has "
                                                     f"{total:,} bytes or more")
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > _SMALL_MEMBER and ratio > ratio_limit:
            raise FatalReadError(0, member.filename, f"{member.file_size:,} bytes compressed into "
                                                     f"{member.compress_size:,} ({ratio:,.0f} times): more than "
                                                     f"{ratio_limit} times (GOLDSET_IMPORT_ZIP_MAX_RATIO); this "
                                                     f"is not a doccano export")


def _doccano_lines(stream: IO[str], limit: int, where: str, author: str, task_slug: str,
                   examples: dict[str, Example], errors: list[RecordError], *, empty_is_label: bool) -> None:
    try:
        for line_no, line in bounded_lines(stream, limit):
            if isinstance(line, int):
                errors.append(RecordError(line_no, where, too_large(line, limit)))
                continue
            if not line.strip():
                continue
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError as error:
                errors.append(RecordError(line_no, where, f"invalid JSON: {error}"))
                continue
            try:
                _doccano_example(value, line_no, where, author, task_slug, examples, empty_is_label)
            except RecordError as error:
                errors.append(error)
    except UnicodeDecodeError as error:
        raise FatalReadError(0, where.rstrip(":"), f"not UTF-8 ({error.reason}); doccano exports UTF-8") from None


def _doccano_example(value: Any, line_no: int, where: str, author: str, task_slug: str,
                     examples: dict[str, Example], empty_is_label: bool) -> None:
    """Add a line's example and its labels. doccano writes every example into every file of its ZIP, labelled
    or not, so there an empty ``label`` list is no label unless the export holds approved examples only; a JSONL
    file on its own (Goldset's doccano release, a file written for doccano's import) gives labels as they are.
    Where ``empty_is_label``, ``"label": []`` is a sentence labelled with no entities."""
    def fail(path: str, message: str) -> RecordError:
        return RecordError(line_no, where + path, message)

    if not isinstance(value, dict):
        raise fail("", f"each line must be a JSON object, got {type(value).__name__}")
    text = value.get("text")
    if not isinstance(text, str):
        raise fail("text", "missing or not a string: every doccano example has its text")
    # The guid a Goldset release wrote (kept by doccano as metadata) comes back; else doccano's id.
    guid = value.get("guid", value.get("id"))
    key = str(guid) if guid is not None else f"{where}{line_no}"
    example = examples.get(key)
    if example is None:
        example = examples[key] = Example(line_no, where, "" if guid is None else str(guid), text)
    elif example.text != text:
        raise fail("text", f"example {key} has another text in {example.where.rstrip(':') or 'an earlier line'} "
                           f"(line {example.record_no})")
    labels = Labels()
    takes = _labels_of(task_slug)
    if takes == "relations":
        for i, entity in enumerate(_list(value, "entities", fail)):
            where_e = f"entities[{i}]"
            if not isinstance(entity, dict):
                raise fail(where_e, "must be an object {id, label, start_offset, end_offset}")
            span = _span(text, entity.get("start_offset"), entity.get("end_offset"), entity.get("label"),
                         lambda p, m, w=where_e: fail(f"{w}.{p}", m))
            labels.spans[str(entity.get("id", i))] = span
        for i, relation in enumerate(_list(value, "relations", fail)):
            where_r = f"relations[{i}]"
            if not isinstance(relation, dict):
                raise fail(where_r, "must be an object {id, from_id, to_id, type}")
            kind = relation.get("type")
            if not isinstance(kind, str) or not kind:
                raise fail(f"{where_r}.type", "missing or not a string")
            labels.relate(str(relation.get("from_id")), str(relation.get("to_id")), kind, where_r, fail)
    else:
        for i, label in enumerate(_list(value, "label", fail)):
            if takes == "categories":
                if not isinstance(label, str) or not label:
                    raise fail(f"label[{i}]", f"must be a category name, got {label!r}")
                labels.categories.append(label)
            elif not isinstance(label, list) or len(label) != 3:
                raise fail(f"label[{i}]", f"must be [start, end, type], got {label!r}")
            else:
                labels.spans[str(i)] = _span(text, label[0], label[1], label[2],
                                             lambda p, m, i=i: fail(f"label[{i}].{p}", m))
    labelled_empty = empty_is_label and takes == "spans" and isinstance(value.get("label"), list)
    if labels.categories or labels.spans or labelled_empty:
        if author in example.authors:
            raise fail("", f"example {key} appears twice in {where.rstrip(':') or 'the file'}")
        example.authors[author] = labels


def _list(value: dict[str, Any], key: str, fail: Callable[[str, str], RecordError]) -> list[Any]:
    found = value.get(key, [])
    if not isinstance(found, list):
        raise fail(key, f"must be a list, got {type(found).__name__}")
    return found


def _span(text: str, start: Any, end: Any, kind: Any, fail: Callable[[str, str], RecordError]
          ) -> tuple[int, int, str]:
    for name, offset in (("start", start), ("end", end)):
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise fail(name, f"must be a character offset (an integer), got {offset!r}")
    if not 0 <= start < end <= len(text):
        raise fail("end", f"span [{start}, {end}) is not inside the text ({len(text)} characters)")
    if not isinstance(kind, str) or not kind:
        raise fail("type", f"must be an entity type name, got {kind!r}")
    return start, end, kind


# -- Label Studio -------------------------------------------------------------------------------


def iter_labelstudio(path: Path, task_slug: str) -> Iterator[tuple[int, dict[str, Any]] | RecordError]:
    """Label Studio's JSON export: an array of tasks ``{"id", "data": {"text"}, "annotations": [{"completed_by",
    "result": [...]}]}``; a record number is the task's position in the array. Each annotation that was not
    cancelled is its author's (``completed_by``: the user's
    e-mail when the export names it, else ``user<id>``); predictions are not labels and are left out."""
    _check_task(task_slug, "labelstudio")
    examples: dict[str, Example] = {}
    errors: list[RecordError] = []
    limit = max_record_chars()
    number = 0
    try:
        with _open_text(path) as stream:
            # Label Studio writes the array on one line: a task is named by its position in it. The tasks are
            # decoded one at a time, and one over the record limit is refused before it is read whole.
            for number, (_, task) in enumerate(_JsonStream(stream, limit).array_items(), start=1):
                try:
                    _labelstudio_task(task, number, task_slug, examples)
                except RecordError as error:
                    errors.append(error)
    except RecordTooLarge as error:
        raise FatalReadError(number + 1, "", f"task {number + 1} (line {error.record_no}): {error.message}"
                             ) from None
    except FormatError as error:
        raise FatalReadError(error.record_no, error.field, error.message) from None
    except UnicodeDecodeError as error:
        raise FatalReadError(0, "", f"not UTF-8 ({error.reason}); Label Studio exports UTF-8") from None
    yield from errors
    yield from _records(examples, task_slug)


#: The result types that give each kind of label.
_LABELSTUDIO_RESULTS = {"categories": {"choices"}, "spans": {"labels"}, "relations": {"labels", "relation"}}


def _labelstudio_task(task: Any, line: int, task_slug: str, examples: dict[str, Example]) -> None:
    def fail(path: str, message: str) -> RecordError:
        return RecordError(line, path, message)

    if not isinstance(task, dict):
        raise fail("", f"each task must be a JSON object, got {type(task).__name__}")
    data = task.get("data")
    if not isinstance(data, dict):
        raise fail("data", "missing or not an object: a Label Studio task holds its text in data")
    texts = [k for k, v in data.items() if isinstance(v, str)]
    key = "text" if isinstance(data.get("text"), str) else (texts[0] if len(texts) == 1 else None)
    if key is None:
        raise fail("data.text", f"no text to import: data has {', '.join(data) or 'no fields'}; name the text "
                                f"field 'text'")
    text = data[key]
    guid = data.get("guid", task.get("id"))
    example = Example(line, "", "" if guid is None else str(guid), text)
    if example.guid in examples and example.guid:
        raise fail("id", f"task {example.guid} appears twice")
    takes = _labels_of(task_slug) or ""
    allowed = _LABELSTUDIO_RESULTS[takes]
    annotations = task.get("annotations") or []
    if not isinstance(annotations, list):
        raise fail("annotations", "must be a list")
    for a, annotation in enumerate(annotations):
        at = f"annotations[{a}]"
        if not isinstance(annotation, dict):
            raise fail(at, "must be an object")
        if annotation.get("was_cancelled"):
            continue  # skipped by its annotator: no label
        author = _labelstudio_author(annotation.get("completed_by"))
        if author in example.authors:
            raise fail(f"{at}.completed_by", f"a second annotation by {author} of one task")
        labels = Labels()
        relations: list[tuple[str, str, str, str]] = []
        results = annotation.get("result") or []
        if not isinstance(results, list):
            raise fail(f"{at}.result", "must be a list")
        for r, result in enumerate(results):
            where = f"{at}.result[{r}]"
            if not isinstance(result, dict):
                raise fail(where, "must be an object")
            kind = result.get("type")
            if kind not in allowed:
                raise fail(f"{where}.type", f"{kind!r} results are not imported into a {task_slug} project (it takes "
                                            f"{', '.join(sorted(allowed))})")
            value = result.get("value") or {}
            if kind == "choices":
                choices = value.get("choices")
                if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
                    raise fail(f"{where}.value.choices", "must be a list of category names")
                labels.categories.extend(choices)
            elif kind == "labels":
                names = value.get("labels")
                if not isinstance(names, list) or len(names) != 1:
                    raise fail(f"{where}.value.labels", f"must name exactly one entity type, got {names!r}")
                labels.spans[str(result.get("id", r))] = _span(
                    text, value.get("start"), value.get("end"), names[0],
                    lambda p, m, w=where: fail(f"{w}.value.{'labels' if p == 'type' else p}", m))
            else:
                names = result.get("labels") or []
                if not isinstance(names, list) or len(names) != 1 or not isinstance(names[0], str):
                    raise fail(f"{where}.labels", f"a relation needs exactly one label (its relation type), "
                                                  f"got {names!r}")
                direction = result.get("direction", "right")
                if direction not in ("right", "left"):
                    raise fail(f"{where}.direction", f"{direction!r}: a KLUE-RE relation goes one way (right or "
                                                     f"left)")
                ends = (str(result.get("from_id")), str(result.get("to_id")))
                source, target = ends if direction == "right" else ends[::-1]
                relations.append((source, target, names[0], where))
        for source, target, kind, where in relations:  # after the spans: a relation may come before them
            labels.relate(source, target, kind, where, fail)
        if labels.categories or labels.spans or takes == "spans":
            example.authors[author] = labels
    examples[example.guid or f"line {line}"] = example


def _labelstudio_author(completed_by: Any) -> str:
    if isinstance(completed_by, dict):
        return str(completed_by.get("email") or f"user{completed_by.get('id')}")
    return f"user{completed_by}"


#: Readers of the ``--format`` names this module serves (``approved_only`` is doccano's alone).
READERS: dict[str, Callable[..., Iterator[tuple[int, dict[str, Any]] | RecordError]]] = {
    "doccano": iter_doccano, "labelstudio": iter_labelstudio,
}
