"""Writes of an import, batch by batch: a checked batch's items with their imported labels and flags, the users
a corpus's own annotators become, the near-duplicate groups a batch joins and its MinHash bands.

Many rows without model instances (``annotation/bulk.py``: ``COPY`` on PostgreSQL, the driver's executemany on
SQLite), inside the import's transaction; the pipeline (:mod:`.pipeline`) runs them in its writer's thread
(:mod:`.writer`). Nothing here can be a record's error: a database error goes to the caller, who rolls the
import back. The reads are :mod:`.batch_selectors`.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import repeat
from typing import Any

import numpy as np
from django.db import connection, transaction

from annotation import bulk
from annotation.display import CORPUS_ANNOTATOR
from annotation.models import Flag, Project, Source, User

from .models import MinHashBand, NearDuplicate
from .pii.pseudonymize import pii_salt
from .prepare import ANNOTATION_ROWS, ITEM_ROWS, Prepared


def imported_username(project: Project, annotator: str) -> str:
    """The user name of a corpus's own annotator in a project: ``<project>:<keyed hash>``. A corpus's rater ids
    may be e-mail addresses or phone numbers, so the raw id is never stored; the hash (keyed with the PII salt,
    over the project and the id) is stable, so the same rater is the same user in every upload of the project,
    and unrelated across projects."""
    digest = hmac.digest(pii_salt(), f"imported-annotator:{project.pk}:{annotator}".encode(), "sha256")
    return f"{project.slug}:{digest[:10].hex()}"


class ImportedAnnotators:
    """The users an import's corpus annotators are, found or created once each per import: a named rater is
    :func:`imported_username`'s user, a label without a rater the source's (else the project's) corpus user."""

    def __init__(self, project: Project, source: Source | None) -> None:
        self.project = project
        self.source = source
        self._users: dict[str, User] = {}

    def user(self, annotator: str) -> User:
        user = self._users.get(annotator)
        if user is None:
            if annotator:
                username = imported_username(self.project, annotator)
            else:
                prefix = self.source.name if self.source else self.project.slug
                username = f"{prefix}:{CORPUS_ANNOTATOR}"[:150]
            user = User.objects.filter(username=username).first()
            if user is None:
                user = User(username=username, is_imported=True)
                user.save()
            self._users[annotator] = user
        return user


def batch_write(kept: list[Prepared], ids: list[int] | None, annotators: ImportedAnnotators) -> tuple[list[int], int]:
    """Write a checked batch: items (with ``ids``, else numbered by the database), their annotations and flags;
    returns the items' ids and the number of annotations written."""
    with transaction.atomic():
        ids = ITEM_ROWS.insert([((p.screening_status,), p.item) for p in kept], ids=ids or True)
        # The batch's annotators looked up once each, not once per label.
        users = {who: annotators.user(who).pk for who in dict.fromkeys(who for p in kept for who, _ in p.annotations)}
        labels = [((pk, users[who]), row) for pk, p in zip(ids, kept, strict=True) for who, row in p.annotations]
        ANNOTATION_ROWS.insert(labels)
        bulk.insert_values(Flag, [{"item_id": pk, "user_id": None, "kind": kind, "note": note}
                                  for pk, p in zip(ids, kept, strict=True) for kind, note in p.flags])
    return ids, len(labels)


def near_duplicate_groups_write(project: Project, merged: list[tuple[int, int, int]],
                                rows: list[dict[str, Any]]) -> None:
    """Groups merged into another (new group, project, old group), then the group rows of the items that joined
    one."""
    if merged:
        bulk.execute_many(f'UPDATE {connection.ops.quote_name(NearDuplicate._meta.db_table)} SET "group" = %s '
                          f'WHERE project_id = %s AND "group" = %s', merged)
    bulk.insert_values(NearDuplicate, rows)


def bands_write(project: Project, keys: np.ndarray, item_ids: np.ndarray) -> None:
    """Write bands, a row per item and band, given in key order (an index takes sorted keys faster than
    random ones: docs/performance.md), without model instances: a binary COPY built by numpy on PostgreSQL
    (one Python object per row cost more than the database's work), executemany elsewhere."""
    if not len(keys):
        return
    table = MinHashBand._meta.db_table
    if connection.vendor == "postgresql":
        bulk.copy_bigints(table, ("project_id", "item_id", "key"), (
            np.full(len(keys), project.pk, dtype=np.int64), item_ids, keys))
        return
    bulk.execute_many(f"INSERT INTO {connection.ops.quote_name(table)} (project_id, item_id, key) VALUES "
                      f"(%s, %s, %s)", list(zip(repeat(project.pk), item_ids.tolist(), keys.tolist())))


@contextmanager
def foreign_keys_checked_as_written() -> Iterator[None]:
    """On PostgreSQL, the foreign keys of the rows written in the block checked as each statement ends instead of
    when the transaction commits (Django declares them deferred). The check is the same, one lookup per
    reference; deferred, the 200,000 of a 100,000-item import ran after its last write, a second with the server
    alone on one core, where checked per batch they overlap the preparation of the next records
    (docs/performance.md). A row referring to nothing fails the statement that writes it, which rolls the import
    back as the failed commit did. Deferred again when the block ends (a failed block has aborted the
    transaction, or the savepoint that restores the mode on its rollback)."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    yield
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
