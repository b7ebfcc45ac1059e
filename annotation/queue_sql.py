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
    ItemAssignee,
    Project,
    QueueSlot,
    User,
)
from .rows import Statement, insert_instance, insert_statement, saved, with_writes
from .selectors import _item, columns, fetch_instance

_ITEM, _SLOT, _ASSIGNMENT, _ANNOTATION, _FLAG, _ASSIGNEE = (m._meta.db_table for m in (
    Item, QueueSlot, Assignment, Annotation, Flag, ItemAssignee))
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


# The caller's oldest live lease joined to a one-row table, so that the row exists without one. {other} leaves out
# the assignment a submission marks submitted in the same statement (which the query sees as before).
_QUEUE_STATE_SQL = """
SELECT {columns}, i.payload, i.is_gold_check, i.screening_status,
  EXISTS (SELECT 1 FROM {assignment} x JOIN {item} xi ON xi.id = x.item_id
          WHERE xi.project_id = %s AND x.status = %s AND x.lease_expires_at <= %s{x_other})
FROM (SELECT 1 AS one) q
LEFT JOIN {assignment} a ON a.id = (
  SELECT r.id FROM {assignment} r JOIN {item} ri ON ri.id = r.item_id
  WHERE ri.project_id = %s AND r.annotator_id = %s AND r.status = %s AND r.lease_expires_at > %s{r_other}
  ORDER BY r.created_at LIMIT 1)
LEFT JOIN {item} i ON i.id = a.item_id
"""
_QUEUE_STATE = {other: _QUEUE_STATE_SQL.format(columns=_ASSIGNMENT_COLUMNS, assignment=_ASSIGNMENT, item=_ITEM,
                                               x_other=" AND x.id <> %s" if other else "",
                                               r_other=" AND r.id <> %s" if other else "")
                for other in (False, True)}


def queue_state(project: Project, user: User, *, submitted: int | None = None,
                writes: list[Statement] | None = None) -> QueueState:
    """The caller's :class:`QueueState` in one query (both halves are index probes).

    ``writes`` (a submission's rows) run first, in the same statement where the database can
    (:func:`rows.with_writes`); ``submitted`` is the id of the assignment they mark submitted, which the state
    leaves out as the rows after the writes would."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    leased = AssignmentStatus.LEASED.value
    other = [] if submitted is None else [submitted]
    query = (_QUEUE_STATE[submitted is not None], [project.pk, leased, now, *other, project.pk, user.pk, leased, now,
                                                   *other])
    found = fetch_instance(Assignment, *with_writes(writes or [], query))
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
        "s.project_id = %s", "s.stage = %s", "s.live < s.needed", "i.screening_status IN (%s, %s)",
        f"NOT EXISTS (SELECT 1 FROM {_FLAG} f WHERE f.item_id = s.item_id AND f.resolution = %s)",
        f"NOT EXISTS (SELECT 1 FROM {_ASSIGNMENT} a WHERE a.item_id = s.item_id AND a.annotator_id = %s"
        " AND a.stage = %s AND a.status <> %s)",
        # Items a manager assigned to chosen annotators go to them alone.
        f"(NOT EXISTS (SELECT 1 FROM {_ASSIGNEE} r WHERE r.item_id = s.item_id)"
        f" OR EXISTS (SELECT 1 FROM {_ASSIGNEE} r WHERE r.item_id = s.item_id AND r.annotator_id = %s))",
    ]
    params: list[Any] = [user.pk, stage,  # the select list's subquery
                         project.pk, stage, *ANNOTATABLE_SCREENING,
                         FlagResolution.OPEN.value, user.pk, stage, AssignmentStatus.EXPIRED.value, user.pk]
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
                f" WHERE id = %s AND {PLACES_TAKEN_SQL} < needed")


def place_reserve(slot_id: int, item_id: int, stage: str, lease: Assignment | None = None) -> bool:
    """Recount the item's taken places under the slot's lock and, when one is free (fewer than the slot's k,
    ``needed``), count the lease about to be written (one statement); ``False`` when the item has none free.

    ``lease``, a new assignment, is then inserted (its id set on it); on PostgreSQL in the same statement, its
    INSERT reading the UPDATE's row, so that it is written exactly when the place was."""
    taken = places_taken_params(item_id, stage)
    reserve = [*taken, slot_id, *taken]
    if lease is None or connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_RESERVE_SQL, reserve)
            reserved = cursor.rowcount == 1
        if reserved and lease is not None:
            insert_instance(lease)
        return reserved
    insert, values = insert_statement(lease, source="reserved")  # a row only when the UPDATE found a place
    with connection.cursor() as cursor:
        cursor.execute(f"WITH reserved AS ({_RESERVE_SQL} RETURNING id) {insert}", [*reserve, *values])
        row = cursor.fetchone()
    if row is None:
        return False
    lease.pk = row[0]
    saved(lease)
    return True
