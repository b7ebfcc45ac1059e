"""Bulk inserts: PostgreSQL ``COPY`` instead of ``bulk_create`` where the rows are many (the import's items,
labels, flags and near-duplicate bands; a project's gold). It lives in the lowest app that writes them, so the
gold computation uses it without importing the importer.

Django's ``bulk_create`` on psycopg quotes every value into the SQL text on the client, which cost more
than the rest of the import (docs/performance.md). ``COPY`` streams the same values, converted by the
fields exactly as ``save`` converts them (``pre_save`` fills ``auto_now_add``). Where the caller needs the
primary keys, they come from the table's sequence beforehand (or ahead of the write: :class:`ReservedIds`): the
ids ``bulk_create`` would have set.

Converting every value through its field (``get_db_prep_save``) then cost as much as the rest of the write,
so the common cases take a shorter path with the same result: a ``str``/``int``/``bool``/``float`` for a
field of that type is what the field would pass on, and JSON is encoded by orjson (PostgreSQL parses it
into the same ``jsonb`` as Django's ``json.dumps`` text). Anything else goes through the field.

On SQLite (the embedded default) the same converted values are inserted by the driver's ``executemany``
on its own cursor: ``bulk_create``'s model instances and SQL compiler, and the debug cursor's quoting of
every parameter, cost more than SQLite's own work.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
from django.db import DEFAULT_DB_ALIAS, connections, models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

if TYPE_CHECKING:
    from psycopg import Copy

#: Field classes whose value passes unchanged when it has exactly this Python type.
_PLAIN_TYPES: tuple[tuple[type[models.Field], type], ...] = (
    (models.CharField, str), (models.TextField, str), (models.BooleanField, bool), (models.FloatField, float),
    (models.IntegerField, int),  # the auto fields too
)


def _json_text(value: Any) -> Any:
    try:
        text = orjson.dumps(value)
    except TypeError:  # integers beyond 64 bits, non-string keys: json.dumps as Django would
        return json.dumps(value)
    if b"null" in text and _non_finite(value):
        # orjson writes NaN and infinities as null, json.dumps as NaN (which PostgreSQL refuses, as it
        # refuses Django's): such a value takes the slower encoder, not a different result.
        return json.dumps(value)
    return text.decode()


def _non_finite(value: Any) -> bool:
    """Whether a JSON value holds a NaN or an infinity anywhere."""
    if type(value) is float:
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(map(_non_finite, value.values()))
    if isinstance(value, list | tuple):
        return any(map(_non_finite, value))
    return False


def _converter(field: models.Field, connection: BaseDatabaseWrapper) -> Callable[[dict[str, Any]], Any]:
    """A function row → the value ``COPY`` writes for ``field`` (not an ``auto_now`` one: :class:`EncodedRows`
    writes the batch's time); the same as the field's own ``get_db_prep_save`` of a new instance built from
    the row, only faster for the common cases. A field the row does not give takes its default, as the
    constructor would give it."""
    attname = field.attname
    # One default for the whole batch: the values are only written, never changed.
    default = field.get_default()
    if isinstance(field, models.ForeignKey) and isinstance(field.target_field, models.IntegerField):
        return lambda row: _plain_or(row.get(attname, default), int, field, connection)
    if isinstance(field, models.JSONField) and field.encoder is None:
        def json_value(row: dict[str, Any]) -> Any:
            value = row.get(attname, default)
            if type(value) in (dict, list):
                return _json_text(value)
            return field.get_db_prep_save(value, connection)  # None (SQL NULL), scalars, expressions
        return json_value
    for field_class, python_type in _PLAIN_TYPES:
        if isinstance(field, field_class):
            return lambda row, t=python_type: _plain_or(row.get(attname, default), t, field, connection)
    return lambda row: field.get_db_prep_save(row.get(attname, default), connection)


def _plain_or(value: Any, python_type: type, field: models.Field, connection: BaseDatabaseWrapper) -> Any:
    if value is None or type(value) is python_type:
        return value
    return field.get_db_prep_save(value, connection)


_MISSING = object()


def _column(field: models.Field, connection: BaseDatabaseWrapper) -> Callable[[dict[str, Any]], str]:
    """A function row → ``field``'s text in ``COPY``: :func:`_copy_text` of the :func:`_converter`'s value,
    with the hot cases inlined (every import row goes through one per column): a field the row does not give
    (its default's text, the same for every row) and a value of the type the column writes as it is."""
    convert = _converter(field, connection)
    missing = _copy_text(convert({}))
    attname = field.attname
    if isinstance(field, models.JSONField) and field.encoder is None:
        def json_column(row: dict[str, Any]) -> str:
            value = row.get(attname, _MISSING)
            if value is _MISSING:
                return missing
            if type(value) in (dict, list):
                return _copy_text(_json_text(value))
            return _copy_text(convert(row))
        return json_column
    if isinstance(field, models.CharField | models.TextField):
        def text_column(row: dict[str, Any]) -> str:
            value = row.get(attname, _MISSING)
            if value is _MISSING:
                return missing
            if isinstance(value, str):  # choices' enum members too: their value
                return _escaped(str.__str__(value))
            return _copy_text(convert(row))
        return text_column

    def column(row: dict[str, Any]) -> str:
        return missing if attname not in row else _copy_text(convert(row))
    return column


def insert_values(model: type[models.Model], rows: Sequence[dict[str, Any]]) -> int:
    """Insert new rows given as ``{attname: value}`` without building model instances (the model's constructor
    cost more than writing the row); primary keys come from the table's default. Returns the number of rows."""
    encoded = EncodedRows(model)
    encoded.insert([((), encoded.encode(row)) for row in rows])
    return len(rows)


class EncodedRows:
    """New rows of a model encoded in two steps, so that most of the work can happen elsewhere (the import's
    worker processes) before the writer knows the rest: :meth:`encode` turns a row's own values into the
    text of their ``COPY`` columns (PostgreSQL; elsewhere the row stays as it is); :meth:`insert` adds the
    columns only the writer knows (``writer_fields``: the foreign keys it resolves, a status it decides), the
    primary key and the batch's time (``auto_now`` fields), and writes them."""

    def __init__(self, model: type[models.Model], writer_fields: Sequence[str] = ()) -> None:
        meta = model._meta
        self.model = model
        self.writer_fields = [meta.get_field(name) for name in writer_fields]
        self.time_fields = [f for f in meta.concrete_fields if isinstance(f, models.DateTimeField) and (
            f.auto_now or f.auto_now_add)]
        self.fields = [f for f in meta.concrete_fields
                       if f is not meta.pk and f not in self.writer_fields and f not in self.time_fields]
        #: Decided on the first row (the database is known by then, and does not change): per field, row →
        #: its COPY text on PostgreSQL; None elsewhere.
        self._columns: list[Callable[[dict[str, Any]], str]] | None = None
        #: On SQLite, per field, row → the value the driver binds; None elsewhere (rows stay as they are).
        self._values: list[Callable[[dict[str, Any]], Any]] | None = None
        self._decided = False

    def encode(self, row: dict[str, Any]) -> dict[str, Any] | str | tuple[Any, ...]:
        if not self._decided:
            connection = connections[DEFAULT_DB_ALIAS]
            if connection.vendor == "postgresql":
                self._columns = [_column(f, connection) for f in self.fields]
            elif connection.vendor == "sqlite":
                self._values = [_converter(f, connection) for f in self.fields]
            self._decided = True
        if self._columns is not None:
            return "\t".join([column(row) for column in self._columns])
        if self._values is not None:
            return tuple([value(row) for value in self._values])
        return row

    def insert(self, rows: Sequence[tuple[Sequence[Any], Any]], *, ids: bool | list[int] = False) -> list[int]:
        """Write ``(writer values, encoded row)`` pairs. ``ids``: the rows' primary keys (PostgreSQL; reserved
        by :class:`ReservedIds`), or true to take them from the table's sequence; returns them (else ``[]``)."""
        connection = connections[DEFAULT_DB_ALIAS]
        if connection.vendor == "sqlite":
            return self._insert_sqlite(connection, rows, ids=ids)
        if connection.vendor != "postgresql":
            objs = self.model.objects.bulk_create([self.model(**dict(zip(
                (f.attname for f in self.writer_fields), given, strict=True)), **row)  # type: ignore[arg-type]
                for given, row in rows])
            return [obj.pk for obj in objs] if ids else []
        if not rows:
            return []
        meta = self.model._meta
        pks: list[int] = ids if isinstance(ids, list) else []
        with connection.cursor() as cursor:
            if ids is True:
                cursor.execute(_NEXT_IDS, [meta.db_table, meta.pk.column, len(rows)])
                pks = [pk for (pk,) in cursor.fetchall()]
            fields = ([meta.pk] if ids else []) + self.writer_fields + self.time_fields + self.fields
            columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
            # The writer's values are keys (integers or NULL) or choices; the batch's time is one text for every row.
            times = "".join(f"{_copy_text(timezone.now())}\t" for _ in self.time_fields)
            heads = [_key_text(pk) for pk in pks] if ids else [""] * len(rows)
            with copy_from_stdin(cursor, f"COPY {connection.ops.quote_name(meta.db_table)} ({columns}) "
                                         f"FROM STDIN") as copy:
                copy.write("".join([f"{head}{''.join(map(_key_text, given))}{times}{row}\n"
                                    for head, (given, row) in zip(heads, rows, strict=True)]))
        return pks


    def _insert_sqlite(self, connection: BaseDatabaseWrapper, rows: Sequence[tuple[Sequence[Any], Any]], *,
                       ids: bool) -> list[int]:
        if not rows:
            return []
        meta = self.model._meta
        fields = self.writer_fields + self.time_fields + self.fields
        now = timezone.now()
        times = tuple(f.get_db_prep_save(now, connection) for f in self.time_fields)
        statement = (f"INSERT INTO {connection.ops.quote_name(meta.db_table)} "
                     f"({', '.join(connection.ops.quote_name(f.column) for f in fields)}) "
                     f"VALUES ({', '.join(['?'] * len(fields))})")
        encoded = [row if isinstance(row, tuple) else self.encode(row) for _, row in rows]
        connection.ensure_connection()
        with connection.wrap_database_errors:
            cursor = connection.connection.cursor()
            try:
                cursor.executemany(statement, [(*given, *times, *row) for (given, _), row in
                                               zip(rows, encoded, strict=True)])
                if not ids:
                    return []
                # The rows took consecutive ids: the statement held the database's write lock throughout, and
                # SQLite numbers a new row one past the largest id (or the table's AUTOINCREMENT sequence).
                cursor.execute("SELECT last_insert_rowid()")
                last = cursor.fetchone()[0]
            finally:
                cursor.close()
        return list(range(last - len(rows) + 1, last + 1))


# The sequence is looked up once (OFFSET 0 keeps the subquery from being inlined): named in nextval's argument,
# its catalog lookup ran once per row and cost ten times the nextvals.
_NEXT_IDS = ("SELECT nextval(s.seq) FROM (SELECT pg_get_serial_sequence(%s, %s)::regclass AS seq OFFSET 0) AS s, "
             "generate_series(1, %s)")


class ReservedIds:
    """Primary keys of a model's rows to come, taken from its sequence ahead of their writing (PostgreSQL;
    elsewhere :meth:`take` gives None and the insert numbers the rows): the import indexes a batch by its ids
    while the writer is still writing earlier ones. Taken in blocks that double up to :data:`MAX_BLOCK`, so
    that a small import leaves few numbers unused; unused ones are gaps, as a rolled-back insert leaves.

    The block is asked for on the raw connection, past Django's wrappers: the import's other queries wait for
    the writer (they must see what it wrote), a number from the sequence need not."""

    MAX_BLOCK = 1 << 15

    def __init__(self, model: type[models.Model]) -> None:
        self._connection = connections[DEFAULT_DB_ALIAS]
        self._table, self._column = model._meta.db_table, model._meta.pk.column
        self._held: list[int] = []
        self._block = 0

    def take(self, n: int) -> list[int] | None:
        if self._connection.vendor != "postgresql":
            return None
        if len(self._held) < n:
            self._block = min(max(n, 2 * self._block), max(n, self.MAX_BLOCK))
            self._connection.ensure_connection()
            with self._connection.wrap_database_errors:
                rows = self._connection.connection.execute(_NEXT_IDS, [self._table, self._column, self._block])
                self._held += [pk for (pk,) in rows.fetchall()]
        taken, self._held = self._held[:n], self._held[n:]
        return taken


def execute_many(statement: str, rows: Sequence[Sequence[Any]]) -> None:
    """``executemany`` of a statement with ``%s`` placeholders; on SQLite by the driver's own cursor (see the
    module's doc), elsewhere through Django's."""
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor != "sqlite":
        with connection.cursor() as cursor:
            cursor.executemany(statement, rows)
        return
    connection.ensure_connection()
    with connection.wrap_database_errors:
        cursor = connection.connection.cursor()
        try:
            cursor.executemany(statement.replace("%s", "?"), rows)
        finally:
            cursor.close()


def _key_text(value: int | None) -> str:
    return "\\N\t" if value is None else f"{value}\t"


def _escaped(text: str) -> str:
    """``text`` in COPY's text format, where backslash, tab, newline and carriage return are escaped. Most
    texts hold none of them, and a search for each runs in C: ``str.translate`` looks every character of a
    Korean text up in its table, which made the escaping the costliest part of encoding a row."""
    if "\\" in text:
        text = text.replace("\\", "\\\\")
    if "\t" in text:
        text = text.replace("\t", "\\t")
    if "\n" in text:
        text = text.replace("\n", "\\n")
    if "\r" in text:
        text = text.replace("\r", "\\r")
    return text


def _copy_text(value: Any) -> str:
    """One value in ``COPY``'s text format (the converted values: text, JSON text, numbers, booleans, dates,
    NULL)."""
    if value is None:
        return "\\N"
    if isinstance(value, str):  # choices' enum members too: their value
        return _escaped(str.__str__(value))
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, date):  # datetimes too
        return value.isoformat()
    raise TypeError(f"no COPY text for a {type(value).__name__} value")


def copy_bigints(table: str, columns: Sequence[str], values: Sequence[np.ndarray]) -> None:
    """``COPY`` rows of ``bigint`` columns given as one int64 array per column, in PostgreSQL's binary format
    built by numpy: millions of rows (the near-duplicate bands) with no Python object per value."""
    connection = connections[DEFAULT_DB_ALIAS]
    rows = np.empty(len(values[0]), dtype=[("count", ">i2"), *[
        (name, dtype) for i in range(len(columns)) for name, dtype in ((f"size{i}", ">i4"), (f"value{i}", ">i8"))]])
    rows["count"] = len(columns)
    for i, column_values in enumerate(values):
        rows[f"size{i}"] = 8
        rows[f"value{i}"] = column_values
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    with connection.cursor() as cursor, copy_from_stdin(
            cursor, f"COPY {connection.ops.quote_name(table)} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
        # Signature, flags, header extension length; the rows; the trailer (-1 fields).
        copy.write(b"PGCOPY\n\xff\r\n\x00" + bytes(8) + rows.tobytes() + b"\xff\xff")


@contextmanager
def copy_from_stdin(cursor: CursorWrapper, statement: str) -> Iterator[Copy]:
    """``COPY … FROM STDIN`` through the driver's cursor, whose errors Django does not translate: raise them
    as Django's, so that a connection lost mid-``COPY`` is the ``OperationalError`` the jobs retry on (and
    Django knows the connection is broken) rather than an unknown error that fails the job for good."""
    with cursor.db.wrap_database_errors, cursor.cursor.copy(statement) as copy:
        yield copy
