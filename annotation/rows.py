"""Writes of single rows on the annotation hot path, with SQL built once per model.

A submission writes an annotation, an audit event and two assignment rows. Through ``Model.save`` each write
compiles its statement again (a queryset, the insert or update compiler, the field list), a large share of
a submission's CPU (docs/performance.md, "Annotate beside doccano"); the statement itself is the same every
time. These functions convert every value as ``save`` does (``pre_save`` fills the ``auto_now``
fields, ``get_db_prep_save`` adapts JSON and dates) and execute one cached statement. They send no
``pre_save``/``post_save`` signals: use them only for models without receivers (none of the three has one).
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.db import connection
from django.db.models import Field, Model

M = TypeVar("M", bound=Model)

_INSERTS: dict[tuple[type[Model], bool, str | None, str], tuple[str, list[Field]]] = {}
_UPDATES: dict[tuple[type[Model], tuple[str, ...], str], tuple[str, list[Field]]] = {}

#: One statement and its parameters.
Statement = tuple[str, list[Any]]


def _insert_sql(model: type[Model], with_pk: bool, source: str | None) -> tuple[str, list[Field]]:
    """``INSERT … VALUES (…)`` of the model's columns (its primary key among them when ``with_pk``: one
    reserved beforehand), or ``INSERT … SELECT … FROM source`` (one row per row of ``source``), returning the key
    where the database can."""
    key = (model, with_pk, source, connection.vendor)
    if key not in _INSERTS:
        quote = connection.ops.quote_name
        fields = [field for field in model._meta.concrete_fields if with_pk or not field.primary_key]
        pk = model._meta.pk
        # RETURNING: PostgreSQL, and SQLite from 3.35 (Django requires it from 3.31, so it is checked).
        returning = f" RETURNING {quote(pk.column)}" if connection.features.can_return_columns_from_insert else ""
        values = ", ".join(["%s"] * len(fields))
        rows = f"VALUES ({values})" if source is None else f"SELECT {values} FROM {source}"
        _INSERTS[key] = (f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)})"
                         f" {rows}{returning}", fields)
    return _INSERTS[key]


def insert_statement(instance: Model, source: str | None = None) -> Statement:
    """The INSERT of a new instance, its values converted as ``save`` converts them; with its primary key when
    it has one (reserved beforehand), else the database assigns it (and returns it where it can). With
    ``source`` (a table or ``WITH`` name of the same statement) the row is inserted once per row of it: not at
    all when it has none."""
    sql, fields = _insert_sql(type(instance), instance.pk is not None, source)
    return sql, [field.get_db_prep_save(field.pre_save(instance, True), connection) for field in fields]


def insert_instance(instance: M) -> M:
    """``instance.save()`` of a new instance (with an auto primary key): one INSERT, the key set on it."""
    sql, values = insert_statement(instance)
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        pk = cursor.fetchone()[0] if connection.features.can_return_columns_from_insert else cursor.lastrowid
    instance.pk = pk
    saved(instance)
    return instance


def saved(instance: Model) -> None:
    """Mark an instance written by one of these statements as ``save`` would."""
    instance._state.adding = False
    instance._state.db = connection.alias


def update_statement(instance: Model, names: tuple[str, ...]) -> Statement:
    """The UPDATE of ``instance.save(update_fields=names)`` (the ``auto_now`` fields among them set to now)."""
    model = type(instance)
    key = (model, names, connection.vendor)
    if key not in _UPDATES:
        quote = connection.ops.quote_name
        fields = [model._meta.get_field(name) for name in names]
        assignments = ", ".join(f"{quote(field.column)} = %s" for field in fields)
        _UPDATES[key] = (f"UPDATE {quote(model._meta.db_table)} SET {assignments}"
                         f" WHERE {quote(model._meta.pk.column)} = %s", fields)
    sql, fields = _UPDATES[key]
    return sql, [*(field.get_db_prep_save(field.pre_save(instance, False), connection) for field in fields),
                 instance.pk]


def with_writes(writes: list[Statement], query: Statement) -> Statement:
    """``query`` (a SELECT) preceded by ``writes`` in one statement where the database can (PostgreSQL's
    data-modifying ``WITH``: one round trip instead of one each). The writes run whatever the query reads, but
    the query sees the rows as they were before them (one snapshot): callers leave out of the query what the
    writes change. Elsewhere the writes run here, one after the other, and the query is returned alone."""
    if not writes:
        return query
    if connection.vendor != "postgresql":
        execute_all(writes)
        return query
    ctes = ", ".join(f"w{index} AS ({sql})" for index, (sql, _params) in enumerate(writes))
    return f"WITH {ctes} {query[0]}", [*(value for _sql, params in writes for value in params), *query[1]]


def execute_all(statements: list[Statement]) -> None:
    """Run the statements one after the other."""
    with connection.cursor() as cursor:
        for sql, params in statements:
            cursor.execute(sql, params)
