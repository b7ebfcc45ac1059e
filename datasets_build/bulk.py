"""Bulk inserts for the import: PostgreSQL ``COPY`` instead of ``bulk_create`` where the rows are many.

Django's ``bulk_create`` on psycopg quotes every value into the SQL text on the client, which cost more
than the rest of the import (docs/performance.md). ``COPY`` streams the same values, converted by the
fields exactly as ``save`` converts them (``pre_save`` fills ``auto_now_add``). Primary keys come from
the table's sequence beforehand, so the caller gets the ids ``bulk_create`` would have set.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from django.db import DEFAULT_DB_ALIAS, connections, models

M = TypeVar("M", bound=models.Model)


def insert(model: type[M], objs: Sequence[M]) -> list[M]:
    """Insert ``objs`` (all new) and set their primary keys; ``COPY`` on PostgreSQL, ``bulk_create`` elsewhere."""
    # The connection itself, not the ``django.db.connection`` proxy: fields look it up once per value.
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor != "postgresql":
        return model.objects.bulk_create(objs)
    if not objs:
        return list(objs)
    meta = model._meta
    table = connection.ops.quote_name(meta.db_table)
    fields = meta.concrete_fields
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                       [meta.db_table, meta.pk.column, len(objs)])
        for obj, (pk,) in zip(objs, cursor.fetchall(), strict=True):
            obj.pk = pk
        columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
        with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for obj in objs:
                copy.write_row([f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields])
    for obj in objs:
        obj._state.adding = False
        obj._state.db = connection.alias
    return list(objs)
