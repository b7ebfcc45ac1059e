"""The queue's SQL, in one place: what the take reads and writes on every request.

The queue's rules are written twice: here in SQL, read from the maintained counter (``QueueSlot``), for the
take, and with the ORM in :func:`annotation.selectors.eligible_items`, computed from the assignments, for
counts. ``tests/annotation/test_queue_sql.py`` holds the two equal on random projects, on SQLite and PostgreSQL. They
are SQL because building them with the ORM costs more CPU than running them (docs/performance.md); the SQL
is plain enough for both databases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models.fields.json import compile_json_path
from django.utils import timezone

from .models import (
    ANNOTATABLE_SCREENING,
    SLOT_HOLDING,
    UNSET_PRIORITY_LAST,
    Annotation,
    Assignment,
    AssignmentStatus,
    Flag,
    FlagResolution,
    Item,
    Project,
    QueueSlot,
    User,
)
from .selectors import _item, columns, fetch_instance

_ITEM, _SLOT, _ASSIGNMENT, _ANNOTATION, _FLAG = (m._meta.db_table for m in (Item, QueueSlot, Assignment,
                                                                            Annotation, Flag))
_ASSIGNMENT_COLUMNS = columns(Assignment, "a")
#: The constant of the "uncertainty" order's index expression (unset priorities last).
_UNSET_PRIORITY = UNSET_PRIORITY_LAST.get_source_expressions()[1].value


@dataclass(frozen=True)
class QueueState:
    """What the take must know before choosing: a live lease to resume (with its item, as
    :func:`assignment_to_submit` loads it), and whether any lease of the project ran out without being marked
    expired yet (only then does the take expire leases)."""

    resumable: Assignment | None
    stale_leases: bool


# The caller's oldest live lease joined to a one-row table, so that the row exists without one.
_QUEUE_STATE_SQL = f"""
SELECT {_ASSIGNMENT_COLUMNS}, i.payload, i.is_gold_check, i.screening_status,
  EXISTS (SELECT 1 FROM {_ASSIGNMENT} x JOIN {_ITEM} xi ON xi.id = x.item_id
          WHERE xi.project_id = %s AND x.status = %s AND x.lease_expires_at <= %s)
FROM (SELECT 1 AS one) q
LEFT JOIN {_ASSIGNMENT} a ON a.id = (
  SELECT r.id FROM {_ASSIGNMENT} r JOIN {_ITEM} ri ON ri.id = r.item_id
  WHERE ri.project_id = %s AND r.annotator_id = %s AND r.status = %s AND r.lease_expires_at > %s
  ORDER BY r.created_at LIMIT 1)
LEFT JOIN {_ITEM} i ON i.id = a.item_id
"""


def queue_state(project: Project, user: User) -> QueueState:
    """The caller's :class:`QueueState` in one query (both halves are index probes)."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    leased = AssignmentStatus.LEASED.value
    found = fetch_instance(Assignment, _QUEUE_STATE_SQL, [project.pk, leased, now, project.pk, user.pk, leased, now])
    assert found is not None  # the one-row table
    assignment, (payload, is_gold_check, screening_status, stale) = found
    if assignment.pk is None:
        return QueueState(resumable=None, stale_leases=bool(stale))
    assignment.item = _item(assignment.item_id, project, payload, is_gold_check, screening_status)
    return QueueState(resumable=assignment, stale_leases=bool(stale))


@dataclass(frozen=True)
class Candidate:
    """The take's choice: a queue slot and its item (id, project, payload, gold flag and screening status
    loaded, the other fields deferred), and the caller's expired assignment of the item in the stage, if any
    (the candidate rules exclude their live ones)."""

    slot_id: int
    item: Item
    expired_own: int | None


def _has_key(column: str, key: str) -> tuple[str, str]:
    if connection.vendor == "postgresql":
        return f"{column} ? %s", key
    return f"JSON_TYPE({column}, %s) IS NOT NULL", compile_json_path([key])


def queue_candidate(project: Project, user: User, stage: str, *, lock: bool = False,
                    slot_id: int | None = None) -> Candidate | None:
    """The take's next candidate: the same rules as :func:`eligible_items`, read from the maintained counter.

    ``QueueSlot.live`` counts leases not yet marked expired, so callers expire leases first. Ordered
    closest-to-completion first, or by ``priority`` (highest first, unset last) when the project's
    ``options["queue_order"]`` is ``"uncertainty"``; either order is an index range scan. ``lock`` (inside a
    transaction) locks the slot row ``FOR UPDATE SKIP LOCKED`` where the database can. ``slot_id`` reads only
    that slot, and a lock then waits for it instead of passing it over (one row: waiting for several, locked
    in orders that differ between snapshots, deadlocks).
    """
    stages = project.task.stages
    index = [s.name for s in stages].index(stage)
    where = [
        "s.project_id = %s", "s.stage = %s", "s.live < %s", "i.screening_status IN (%s, %s)",
        f"NOT EXISTS (SELECT 1 FROM {_FLAG} f WHERE f.item_id = s.item_id AND f.resolution = %s)",
        f"NOT EXISTS (SELECT 1 FROM {_ASSIGNMENT} a WHERE a.item_id = s.item_id AND a.annotator_id = %s"
        " AND a.stage = %s AND a.status <> %s)",
    ]
    params: list[Any] = [user.pk, stage,  # the select list's subquery
                         project.pk, stage, project.annotations_needed(stage), *ANNOTATABLE_SCREENING,
                         FlagResolution.OPEN.value, user.pk, stage, AssignmentStatus.EXPIRED.value]
    if slot_id is not None:
        where.append("s.id = %s")
        params.append(slot_id)
    if stages[index].done_marker:  # a writing stage: items that already carry the text (e.g. imported) skip it
        condition, key = _has_key("i.payload", stages[index].done_marker)
        where.append(f"NOT ({condition})")
        params.append(key)
    if index > 0 and stages[index - 1].done_marker:  # after a writing stage: written, and not by the caller
        previous = stages[index - 1]
        condition, key = _has_key("i.payload", previous.done_marker)
        where += [condition, f"NOT EXISTS (SELECT 1 FROM {_ANNOTATION} n WHERE n.item_id = s.item_id"
                             " AND n.annotator_id = %s AND n.stage = %s)"]
        params += [key, user.pk, previous.name]
    if project.options.get("queue_order") == "uncertainty":
        order = "COALESCE(s.priority, %s) DESC, s.item_id"  # the expression of the index queueslot_take_priority
        params.append(_UNSET_PRIORITY)
    else:
        order = "s.live DESC, s.item_id"
    sql = (f"SELECT s.id, i.id, i.payload, i.is_gold_check, i.screening_status,"
           f" (SELECT a.id FROM {_ASSIGNMENT} a WHERE a.item_id = s.item_id AND a.annotator_id = %s AND a.stage = %s)"
           f" FROM {_SLOT} s JOIN {_ITEM} i ON i.id = s.item_id WHERE {' AND '.join(where)}"
           f" ORDER BY {order} LIMIT 1")
    if lock and connection.features.has_select_for_update_skip_locked:
        sql += " FOR UPDATE OF s" if slot_id is not None else " FOR UPDATE OF s SKIP LOCKED"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    found, item_id, payload, is_gold_check, screening_status, expired_own = row
    return Candidate(slot_id=found, item=_item(item_id, project, payload, is_gold_check, screening_status),
                     expired_own=expired_own)


#: SQL for how many places of an item in a stage are taken (see :func:`places_held`); its parameters are
#: :func:`places_taken_params`.
PLACES_TAKEN_SQL = (f"(SELECT count(*) FROM {_ASSIGNMENT} WHERE item_id = %s AND stage = %s AND status IN (%s, %s))"
                    f" + (SELECT count(*) FROM {_ANNOTATION} WHERE item_id = %s AND stage = %s AND imported)")


def places_taken_params(item_id: int, stage: str) -> list[Any]:
    return [item_id, stage, *(status.value for status in SLOT_HOLDING), item_id, stage]


def places_held(item_id: int, stage: str) -> int:
    """How many places of the item in the stage are taken: assignments that hold one (leased or submitted) and
    the annotations its corpus came with (an item is complete with k annotations, imported ones included).
    What ``QueueSlot.live`` stands for."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {PLACES_TAKEN_SQL}", places_taken_params(item_id, stage))
        return int(cursor.fetchone()[0])


_RESERVE_SQL = (f"UPDATE {_SLOT} SET live = {PLACES_TAKEN_SQL} + 1"
                f" WHERE id = %s AND {PLACES_TAKEN_SQL} < %s")


def place_reserve(slot_id: int, item_id: int, stage: str, needed: int) -> bool:
    """Recount the item's taken places under the slot's lock and, when one is free, count the lease about to be
    written (one statement); ``False`` when the item has none free."""
    taken = places_taken_params(item_id, stage)
    with connection.cursor() as cursor:
        cursor.execute(_RESERVE_SQL, [*taken, slot_id, *taken, needed])
        return cursor.rowcount == 1
