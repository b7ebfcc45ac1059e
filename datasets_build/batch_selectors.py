"""Reads of an import, batch by batch: the project's items a batch's records may duplicate (by content hash and
by external id), and the near-duplicate index's lookups (items under a band key, items' groups, items' texts).

Thousands of values a batch: raw SQL where the ORM would adapt one parameter and build one model instance at a
time. The writes are :mod:`.batch_services`; the pipeline (:mod:`.pipeline`) calls both.

PostgreSQL plans these lookups with the statistics of before the import: the rows this import has written are
not analysed yet, so a query filtering on the project and a list of values scans all of the project's rows
once per batch (quadratic in the file). Each value is therefore looked up by itself through its index (a
LATERAL subquery that ``OFFSET 0`` keeps from being flattened into a join).
"""

from __future__ import annotations

from typing import Any

from django.db import connection

from annotation.models import Item, Project

from .models import MinHashBand, NearDuplicate


def items_with_hashes(project: Project, hashes: list[str]) -> list[Item]:
    """The project's items whose content hash is one of ``hashes`` (content hash, payload, external id)."""
    if not hashes:
        return []
    if connection.vendor != "postgresql":
        return [other for start in range(0, len(hashes), 900) for other in Item.objects.filter(
            project=project, content_hash__in=hashes[start:start + 900]).only(
            "content_hash", "payload", "external_id")]
    # The content hash index alone (the project is checked on the rows found): the same text in
    # other projects costs a few extra rows, a plan that may start from the project scans all of it.
    return list(Item.objects.raw(
        f"SELECT i.id, i.content_hash, i.payload, i.external_id FROM unnest(%s::text[]) AS h(hash) "
        f"CROSS JOIN LATERAL (SELECT id, project_id, content_hash, payload, external_id FROM {_item_table()} "
        f"WHERE content_hash = h.hash OFFSET 0) AS i WHERE i.project_id = %s", [hashes, project.pk]))


def external_ids_taken(project: Project, external_ids: list[str]) -> set[str]:
    """Those of ``external_ids`` (none empty) that an item of the project already has."""
    if connection.vendor != "postgresql":
        return {found for start in range(0, len(external_ids), 900) for found in Item.objects.filter(
            project=project, external_id__in=external_ids[start:start + 900]).values_list(
            "external_id", flat=True)}
    if not external_ids:
        return set()
    with connection.cursor() as cursor:
        # ``external_id <> ''`` lets the plan use the unique (project, external id) index, which is partial.
        cursor.execute(f"SELECT i.external_id FROM unnest(%s::text[]) AS e(id) CROSS JOIN LATERAL "
                       f"(SELECT external_id FROM {_item_table()} WHERE project_id = %s AND external_id = e.id "
                       f"AND external_id <> '' OFFSET 0) AS i", [external_ids, project.pk])
        return {row[0] for row in cursor.fetchall()}


def band_candidates(project: Project, all_keys: list[int]) -> dict[int, list[int]]:
    """Band key → ids of the project's items already indexed under it."""
    if not all_keys:
        return {}
    table = connection.ops.quote_name(MinHashBand._meta.db_table)
    with connection.cursor() as cursor:
        # Raw SQL: thousands of integer parameters per batch cost more through the ORM than the query.
        if connection.vendor == "postgresql":
            # One array literal instead of thousands of bound parameters (psycopg adapts each one), each
            # key looked up through the (project, key) index (see items_with_hashes), and one row per key
            # with its items as an array (a heavily duplicated corpus has many items per key: a row each
            # cost more to fetch than the lookups). The estimated cost of thousands of index probes would
            # make PostgreSQL JIT-compile the query on every call (jit is on by default), which costs more
            # than running it: off for this statement.
            cursor.execute("SELECT current_setting('jit'), set_config('jit', 'off', true)")
            jit = cursor.fetchone()[0]
            cursor.execute(f"SELECT k.key, ARRAY(SELECT item_id FROM {table} WHERE project_id = %s AND "
                           f"key = k.key) FROM unnest(%s::bigint[]) AS k(key)",
                           [project.pk, "{" + ",".join(map(str, all_keys)) + "}"])
            found = {key: items for key, items in cursor.fetchall() if items}
            cursor.execute("SELECT set_config('jit', %s, true)", [jit])
            return found
        candidates: dict[int, list[int]] = {}
        for start in range(0, len(all_keys), 900):
            chunk = all_keys[start:start + 900]
            cursor.execute(f"SELECT key, item_id FROM {table} WHERE project_id = %s AND key IN "
                           f"({', '.join(['%s'] * len(chunk))})", [project.pk, *chunk])
            for key, item_id in cursor.fetchall():
                candidates.setdefault(key, []).append(item_id)
    return candidates


def near_duplicate_groups_of(item_ids: list[int]) -> list[tuple[int, int]]:
    """``(item id, group)`` of those of ``item_ids`` that are in a near-duplicate group."""
    return _rows_by_id(connection.ops.quote_name(NearDuplicate._meta.db_table), 'item_id, "group"', item_ids,
                       key="item_id")


def item_texts(item_ids: list[int]) -> list[tuple[Any, ...]]:
    """``(id, payload as JSON text, group key)`` of the items ``item_ids``."""
    return _rows_by_id(_item_table(), "id, payload, group_key", item_ids)


def _rows_by_id(table: str, columns: str, ids: list[int], *, key: str = "id") -> list[tuple[Any, ...]]:
    """``columns`` (SQL) of the rows of ``table`` whose ``key`` is one of ``ids``, JSON as its text: thousands
    of ids a batch, which the ORM would adapt one parameter and one model instance at a time."""
    if not ids:
        return []
    rows: list[tuple[Any, ...]] = []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Each id probes the index by itself (see the module's docstring): the table's statistics may be
            # older than the rows this import wrote.
            cursor.execute(f"SELECT r.* FROM unnest(%s::bigint[]) AS k(id) CROSS JOIN LATERAL (SELECT "
                           f"{columns.replace('payload', 'payload::text')} FROM {table} WHERE {key} = k.id OFFSET 0) "
                           f"AS r", ["{" + ",".join(map(str, ids)) + "}"])
            return cursor.fetchall()
        for start in range(0, len(ids), 900):
            chunk = ids[start:start + 900]
            cursor.execute(f"SELECT {columns} FROM {table} WHERE {key} IN ({', '.join(['%s'] * len(chunk))})", chunk)
            rows.extend(cursor.fetchall())
    return rows


def _item_table() -> str:
    return connection.ops.quote_name(Item._meta.db_table)
