"""The flat schema of the JSONL, CSV and Parquet files: one row per KLUE record, one column per field.

Each task type has a list of columns; a column names a path into the record ``build_record`` returns
(``labels.real-label``; ``*`` walks a list: ``answers.*.text``). Nested objects become columns of their
own; lists stay lists (Parquet list columns, JSON arrays in JSONL, JSON text in CSV). Every row ends
with ``split``. Each task type declares its columns (``TaskType.flat_schema``, built from :func:`column`;
docs/releases.md documents them). ``stratify`` names the record field whose value the split stratifies by, and
``extras`` the side files KLUE ships with the task (RE's relation list, WoS's ontology).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pyarrow as pa

from annotation.task_types import MissingLayer, PayloadError, get_task_type

STRING = pa.string()
INT = pa.int64()
FLOAT = pa.float64()
BOOL = pa.bool_()
STRINGS = pa.list_(pa.string())
INTS = pa.list_(pa.int64())
FLOATS = pa.list_(pa.float64())
STRING_LISTS = pa.list_(STRINGS)


@dataclass(frozen=True)
class Column:
    name: str
    #: Alternative paths, the first one present wins (NLI's train file says ``genre`` for ``source``).
    paths: tuple[str, ...]
    type: pa.DataType

    def value(self, record: dict[str, Any]) -> Any:
        for path in self.paths:
            found, value = _lookup(record, path.split("."))
            if found:
                return value
        return None


@dataclass(frozen=True)
class Extra:
    """A side file of the KLUE release built from the project's label schema."""

    #: Takes the place of the split in the KLUE file name (``klue-re-v1.1_relation_list.json``).
    suffix: str
    build: Callable[[dict[str, Any]], Any]
    indent: int
    trailing_newline: bool

    def render(self, schema: dict[str, Any]) -> str:
        text = json.dumps(self.build(schema), ensure_ascii=False, indent=self.indent)
        return text + ("\n" if self.trailing_newline else "")


@dataclass(frozen=True)
class FlatSchema:
    columns: tuple[Column, ...]
    stratify: str | None = None
    extras: tuple[Extra, ...] = field(default_factory=tuple)
    #: Hugging Face card metadata (task_categories, task_ids).
    hf_categories: tuple[str, ...] = ()
    hf_task_ids: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return [*self._names, "split"]

    def arrow_schema(self) -> pa.Schema:
        return pa.schema([pa.field(c.name, c.type) for c in self.columns] + [pa.field("split", STRING)])

    def row(self, record: dict[str, Any], split: str) -> tuple[Any, ...]:
        """The record's values in the order of ``names`` (``split`` last)."""
        get = record.get
        return (*[get(key) if getter is None else getter(record) for key, getter in self._plan], split)

    def fields(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record's values by column name, in the order of ``names``, without ``split`` (a JSONL line's
        object before its split, :func:`~exports.writers.jsonl.line_head`)."""
        get = record.get
        return {name: get(key) if getter is None else getter(record) for name, (key, getter) in
                zip(self._names, self._plan, strict=True)}

    @cached_property
    def _names(self) -> list[str]:
        return [c.name for c in self.columns]

    @cached_property
    def _plan(self) -> list[tuple[str, Callable[[dict[str, Any]], Any] | None]]:
        """Per column, a top-level key read with the record's ``get`` (no getter), or a getter: a row is built
        per record, and a function call per plain column cost more than the lookup."""
        plan: list[tuple[str, Callable[[dict[str, Any]], Any] | None]] = []
        for column in self.columns:
            parts = column.paths[0].split(".")
            plain = column.type not in (FLOAT, FLOATS) and len(column.paths) == 1 and len(parts) == 1
            plan.append((parts[0], None) if plain else ("", _getter(column)))
        return plan

    def label(self, record: dict[str, Any]) -> str | None:
        """The stratification label of a record (``None`` when the task has none or the record lacks it)."""
        if self._stratify_parts is None:
            return None
        found, value = _lookup(record, self._stratify_parts)
        return None if not found or value is None else str(value)

    @cached_property
    def _stratify_parts(self) -> list[str] | None:
        """``stratify`` split once, not for every record."""
        return self.stratify.split(".") if self.stratify is not None else None


def _lookup(value: Any, parts: list[str]) -> tuple[bool, Any]:
    for i, part in enumerate(parts):
        if part == "*":
            if not isinstance(value, list):
                return False, None
            rest = parts[i + 1:]
            return True, [(_lookup(v, rest)[1]) for v in value]
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _getter(column: Column) -> Callable[[dict[str, Any]], Any]:
    """``column.value`` coerced to the column's type, with a nested path (one path, no ``*``) spelled out: a
    row is built per record, and the generic walk cost more than writing the row. (A top-level key needs no
    getter: ``FlatSchema._plan``.)"""
    parts = column.paths[0].split(".")
    if column.type in (FLOAT, FLOATS):
        return lambda record: _coerce(column.value(record), column.type)
    if len(column.paths) == 1 and "*" not in parts:
        first, *rest = parts

        def nested(record: dict[str, Any]) -> Any:
            value: Any = record.get(first)
            for part in rest:
                if not isinstance(value, dict):
                    return None
                value = value.get(part)
            return value

        return nested
    return column.value


def _coerce(value: Any, type_: pa.DataType) -> Any:
    """Numbers as the column's type (STS scores mix 4 and 4.5), so rows agree across the three files."""
    if value is None:
        return None
    if type_ == FLOAT:
        return float(value)
    if type_ == FLOATS:
        return [None if v is None else float(v) for v in value]
    return value


def column(name: str, type_: pa.DataType = STRING, *paths: str) -> Column:
    """A column named like the record field it reads, unless ``paths`` say where else to look."""
    return Column(name, paths or (name,), type_)


def flat_schema(task_slug: str) -> FlatSchema:
    """The schema the task type declares (``TaskType.flat_schema``)."""
    try:
        return get_task_type(task_slug).flat_schema()
    except (PayloadError, MissingLayer) as exc:
        raise ValueError(f"no flat export schema for task type {task_slug!r}") from exc
