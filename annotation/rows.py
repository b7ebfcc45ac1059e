"""Writes of single rows on the annotation hot path, with SQL built once per model.

A submission writes an annotation, an audit event and two assignment rows. Through ``Model.save`` each write
compiles its statement again (a queryset, the insert or update compiler, the field list), a large share of
a submission's CPU (docs/performance.md, "Annotate beside doccano"); the statement itself is the same every
time. These functions convert every value as ``save`` does (``pre_save`` fills the ``auto_now``
fields, ``get_db_prep_save`` adapts JSON and dates) and execute one cached statement. They send no
``pre_save``/``post_save`` signals: use them only for models without receivers (none of the three has one).
"""

from __future__ import annotations

from typing import TypeVar

from django.db import connection
from django.db.models import Field, Model

M = TypeVar("M", bound=Model)

_INSERTS: dict[tuple[type[Model], str], tuple[str, list[Field]]] = {}
_UPDATES: dict[tuple[type[Model], tuple[str, ...], str], tuple[str, list[Field]]] = {}


def _insert_sql(model: type[Model]) -> tuple[str, list[Field]]:
    key = (model, connection.vendor)
    if key not in _INSERTS:
        quote = connection.ops.quote_name
        fields = [field for field in model._meta.concrete_fields if not field.primary_key]
        pk = model._meta.pk
        # RETURNING: PostgreSQL, and SQLite from 3.35 (Django requires it from 3.31, so it is checked).
        returning = f" RETURNING {quote(pk.column)}" if connection.features.can_return_columns_from_insert else ""
        _INSERTS[key] = (f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)})"
                         f" VALUES ({', '.join(['%s'] * len(fields))}){returning}", fields)
    return _INSERTS[key]


def insert_instance(instance: M) -> M:
    """``instance.save()`` of a new instance (with an auto primary key): one INSERT, the key set on it."""
    sql, fields = _insert_sql(type(instance))
    values = [field.get_db_prep_save(field.pre_save(instance, True), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        pk = cursor.fetchone()[0] if connection.features.can_return_columns_from_insert else cursor.lastrowid
    instance.pk = pk
    instance._state.adding = False
    instance._state.db = connection.alias
    return instance


def update_instance(instance: M, names: tuple[str, ...]) -> None:
    """``instance.save(update_fields=names)`` (the ``auto_now`` fields among them are set to now)."""
    model = type(instance)
    key = (model, names, connection.vendor)
    if key not in _UPDATES:
        quote = connection.ops.quote_name
        fields = [model._meta.get_field(name) for name in names]
        assignments = ", ".join(f"{quote(field.column)} = %s" for field in fields)
        _UPDATES[key] = (f"UPDATE {quote(model._meta.db_table)} SET {assignments}"
                         f" WHERE {quote(model._meta.pk.column)} = %s", fields)
    sql, fields = _UPDATES[key]
    values = [field.get_db_prep_save(field.pre_save(instance, False), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values, instance.pk])
