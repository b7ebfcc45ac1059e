"""Bulk inserts for the import: PostgreSQL ``COPY`` instead of ``bulk_create`` where the rows are many.

Django's ``bulk_create`` on psycopg quotes every value into the SQL text on the client, which cost more
than the rest of the import (docs/performance.md). ``COPY`` streams the same values, converted by the
fields exactly as ``save`` converts them (``pre_save`` fills ``auto_now_add``). Primary keys come from
the table's sequence beforehand, so the caller gets the ids ``bulk_create`` would have set.

Converting every value through its field (``get_db_prep_save``) then cost as much as the rest of the write,
so the common cases take a shorter path with the same result: a ``str``/``int``/``bool``/``float`` for a
field of that type is what the field would pass on, and JSON is encoded by orjson (PostgreSQL parses it
into the same ``jsonb`` as Django's ``json.dumps`` text). Anything else goes through the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
from django.db import DEFAULT_DB_ALIAS, connections, models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

if TYPE_CHECKING:
    from psycopg import Copy

M = TypeVar("M", bound=models.Model)

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
    if b"null" in text:
        # orjson writes NaN and infinities as null, json.dumps as NaN (which PostgreSQL refuses, as it
        # refuses Django's); a real null costs the slower encoder, not a different result.
        return json.dumps(value)
    return text.decode()


def _converter(field: models.Field, connection: BaseDatabaseWrapper) -> Callable[[Any], Any]:
    """A function object → the value ``COPY`` writes for ``field``; the same as the field's own
    ``get_db_prep_save(pre_save(obj, True))``, only faster for the common cases."""
    attname = field.attname
    if isinstance(field, models.ForeignKey):
        target = field.target_field
        if isinstance(target, models.IntegerField):
            return lambda obj: _plain_or(getattr(obj, attname), int, field, connection)
    if isinstance(field, models.JSONField) and field.encoder is None:
        def json_value(obj: models.Model) -> Any:
            value = getattr(obj, attname)
            if type(value) in (dict, list):
                return _json_text(value)
            return field.get_db_prep_save(value, connection)  # None (SQL NULL), scalars, expressions
        return json_value
    if isinstance(field, models.DateTimeField) and (field.auto_now or field.auto_now_add):
        def now(obj: models.Model) -> Any:
            # DateTimeField.pre_save for a new row; an aware or naive datetime passes on unchanged.
            value = timezone.now()
            setattr(obj, attname, value)
            return value
        return now
    for field_class, python_type in _PLAIN_TYPES:
        if isinstance(field, field_class):
            return lambda obj, t=python_type: _plain_or(getattr(obj, attname), t, field, connection)
    return lambda obj: field.get_db_prep_save(field.pre_save(obj, True), connection)


def _plain_or(value: Any, python_type: type, field: models.Field, connection: BaseDatabaseWrapper) -> Any:
    if value is None or type(value) is python_type:
        return value
    return field.get_db_prep_save(value, connection)


def insert(model: type[M], objs: Sequence[M]) -> list[M]:
    """Insert ``objs`` (all new) and set their primary keys; ``COPY`` on PostgreSQL, ``bulk_create`` elsewhere."""
    # The connection itself, not the ``django.db.connection`` proxy: fields look it up once per value.
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor != "postgresql":
        return model.objects.bulk_create(objs)
    if not objs:
        return list(objs)
    _copy(model, objs, connection)
    for obj in objs:
        obj._state.adding = False
        obj._state.db = connection.alias
    return list(objs)


def insert_values(model: type[models.Model], rows: Sequence[dict[str, Any]]) -> int:
    """Insert new rows given as ``{attname: value}`` without building model instances (the model's constructor
    cost more than writing the row); a field not given takes its default, as the constructor would give it.
    Returns the number of rows."""
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor != "postgresql":
        return len(model.objects.bulk_create([model(**row) for row in rows]))
    if rows:
        # One default per field for the whole batch: the values are only written, never changed.
        defaults = {field.attname: field.get_default() for field in model._meta.concrete_fields}
        _copy(model, [SimpleNamespace(**{**defaults, **row}) for row in rows], connection)
    return len(rows)


def _copy(model: type[models.Model], objs: Sequence[Any], connection: BaseDatabaseWrapper) -> None:
    """``COPY`` the objects' field values (model instances, or namespaces with the same attributes), primary
    keys drawn from the table's sequence first and set on the objects."""
    meta = model._meta
    table = connection.ops.quote_name(meta.db_table)
    fields = meta.concrete_fields
    converters = [_converter(f, connection) for f in fields]
    pk_attname = meta.pk.attname
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                       [meta.db_table, meta.pk.column, len(objs)])
        for obj, (pk,) in zip(objs, cursor.fetchall(), strict=True):
            setattr(obj, pk_attname, pk)
        columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
        with copy_from_stdin(cursor, f"COPY {table} ({columns}) FROM STDIN") as copy:
            for obj in objs:
                copy.write_row([convert(obj) for convert in converters])


@contextmanager
def copy_from_stdin(cursor: CursorWrapper, statement: str) -> Iterator[Copy]:
    """``COPY … FROM STDIN`` through the driver's cursor, whose errors Django does not translate: raise them
    as Django's, so that a connection lost mid-``COPY`` is the ``OperationalError`` the jobs retry on (and
    Django knows the connection is broken) rather than an unknown error that fails the job for good."""
    with cursor.db.wrap_database_errors, cursor.cursor.copy(statement) as copy:
        yield copy
