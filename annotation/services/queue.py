"""The work queue: who gets which item next, leases, skips and the per-item counters (the SQL of the take
lives in annotation/queue_sql.py)."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Max, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from ..assist import initial_arm
from ..budget import budget_of, stage_k
from ..models import (
    SLOT_HOLDING,
    Annotation,
    Assignment,
    AssignmentStatus,
    Item,
    Project,
    QueueSlot,
    User,
)
from ..queue_sql import place_reserve as _place_reserve
from ..queue_sql import places_held, queue_candidate, queue_state
from ..selectors import (
    ProjectAccess,
    access_to,
    annotator_queue_key,
)
from .errors import ServiceError

# -- the work queue -----------------------------------------------------------------------------


def _lease_expiry(project: Project) -> timezone.datetime:
    minutes = int(project.options.get("lease_minutes", settings.GOLDSET_LEASE_MINUTES))
    return timezone.now() + timedelta(minutes=minutes)


def _slots_add(deltas: Counter[tuple[int, str]]) -> None:
    """Apply counter changes, in (item, stage) order so that concurrent writers never deadlock."""
    for (item_id, stage), delta in sorted(deltas.items()):
        if delta:
            QueueSlot.objects.filter(item_id=item_id, stage=stage).update(live=Greatest(F("live") + delta, Value(0)))


def assignments_close(assignments: QuerySet[Assignment], status: str) -> int:
    """Move assignments to a status that gives up their place (expired, flagged), keeping the counter."""
    with transaction.atomic():
        rows = list(assignments.select_for_update(of=("self",)).order_by("id")
                    .values_list("id", "item_id", "stage", "status"))
        if not rows:
            return 0
        Assignment.objects.filter(id__in=[row[0] for row in rows]).update(status=status, updated_at=timezone.now())
        _slots_add(_holding_losses(rows))
    return len(rows)


def _holding_losses(rows: list[tuple[int, int, str, str]]) -> Counter[tuple[int, str]]:
    losses: Counter[tuple[int, str]] = Counter()
    for _assignment_id, item_id, stage, old in rows:
        if old in SLOT_HOLDING:
            losses[(item_id, stage)] -= 1
    return losses


def _slot_rows(project: Project, items: QuerySet[Item], stage: str) -> list[QueueSlot]:
    """New slots for ``items``, counting the places already taken (:func:`queue_sql.places_held`): assignments
    that hold one and the annotations the corpus came with; each with its k under the project's budget."""
    held = Subquery(Assignment.objects.filter(item=OuterRef("pk"), stage=stage, status__in=SLOT_HOLDING)
                    .values("item").annotate(n=Count("id")).values("n"))
    imported = Subquery(Annotation.objects.filter(item=OuterRef("pk"), stage=stage, imported=True)
                        .values("item").annotate(n=Count("id")).values("n"))
    counted = items.annotate(taken=Coalesce(held, 0) + Coalesce(imported, 0),
                             needed=stage_k(project, budget_of(project), stage))
    return [QueueSlot(item_id=item_id, project_id=project_id, stage=stage, live=taken, needed=needed)
            for item_id, project_id, taken, needed in counted.values_list("id", "project_id", "taken", "needed")]


def queue_slots_ensure(project: Project, stage: str) -> int:
    """Give the project's items created since the newest slot (imports, the demo, the API) their slot.

    Item ids grow, so this is one index probe when nothing is new; an import committing after a newer
    item is caught by :func:`queue_slots_sync`. Returns how many slots were created.
    """
    newest = QueueSlot.objects.filter(project=project, stage=stage).aggregate(newest=Max("item_id"))["newest"]
    items = Item.objects.filter(project=project)
    if newest is not None:
        items = items.filter(id__gt=newest)
    return len(QueueSlot.objects.bulk_create(_slot_rows(project, items, stage), batch_size=2000, ignore_conflicts=True))


def queue_slots_sync() -> int:
    """Create every missing slot, whatever the item ids (run by ``annotation.expire_leases``)."""
    created = 0
    for project in Project.objects.all():
        for stage in project.stage_names:
            missing = Item.objects.filter(project=project).exclude(queue_slots__stage=stage)
            created += len(QueueSlot.objects.bulk_create(_slot_rows(project, missing, stage), batch_size=2000,
                                                         ignore_conflicts=True))
    return created


def queue_priority_set(project: Project, priorities: dict[int, float | None]) -> int:
    """Set the item-level priority the ``"uncertainty"`` queue order uses (highest first, ``None`` last).

    Applies to every stage of the item; returns how many slots were updated.
    """
    for stage in project.stage_names:
        queue_slots_ensure(project, stage)
    slots = list(QueueSlot.objects.filter(project=project, item_id__in=list(priorities)))
    for slot in slots:
        slot.priority = priorities[slot.item_id]
    QueueSlot.objects.bulk_update(slots, ["priority"], batch_size=1000)
    return len(slots)


def _lock_annotator_queue(project: Project, user: User) -> None:
    """Hold the annotator's queue in the project until the transaction ends.

    Their parallel requests (two tabs, a double click, a script's threads) then take turns: the second finds
    the lease the first took and resumes it, instead of taking a second item or inserting the same (item,
    annotator, stage) twice. A transaction-scoped advisory lock on PostgreSQL
    (:func:`selectors.annotator_queue_key`); SQLite runs one writer at a time anyway.
    """
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [annotator_queue_key(project, user)])


def assignment_next(*, project: Project, user: User, access: ProjectAccess | None = None) -> Assignment | None:
    """Hand the annotator their next item, or ``None`` when nothing is left for them.

    ``access`` is the caller's standing when the caller already read it (the API reads it with the
    project). Under the annotator's queue lock (:func:`_lock_annotator_queue`), a live lease of theirs is
    resumed, so parallel requests of one annotator get the same assignment. Otherwise leases of the project
    that ran out are marked expired first (only when one query says there are any), then the take reads the
    maintained counter (``QueueSlot``). On PostgreSQL the candidate slot is locked with ``FOR UPDATE SKIP
    LOCKED`` and its taken places recounted under the lock (correcting the counter if it drifted), so
    parallel requests never push an item past k. The returned assignment carries its item, whose
    ``project`` is ``project``.
    """
    if not (access or access_to(project, user)).acknowledged:
        raise ServiceError("acknowledge the current guideline first", code="guideline")
    return next_for(project, user)


def next_for(project: Project, user: User) -> Assignment | None:
    with transaction.atomic():
        _lock_annotator_queue(project, user)
        state = queue_state(project, user)
        if state.resumable is not None or not state.stale_leases:
            return resume_or_take(project, user, state.resumable)
    _expire_stale_leases(project)
    with transaction.atomic():
        _lock_annotator_queue(project, user)
        return resume_or_take(project, user, queue_state(project, user).resumable)


def _expire_stale_leases(project: Project) -> None:
    """Mark the project's leases that ran out expired, in a transaction of its own: it locks other annotators'
    assignments and slots, which a transaction already holding a take's locks must not wait for."""
    assignments_close(Assignment.objects.filter(item__project=project, status=AssignmentStatus.LEASED,
                                                 lease_expires_at__lte=timezone.now()), AssignmentStatus.EXPIRED)


def resume_or_take(project: Project, user: User, resumable: Assignment | None) -> Assignment | None:
    """The caller's live lease ``resumable``, else a new one; inside a transaction holding their queue lock."""
    if resumable is not None:
        return resumable
    for stage in project.stage_names:
        assignment = _take(project, user, stage)
        # Slots are created lazily. Items without one are newer than every slot, and a new slot holds no
        # place, so it would sort after every existing candidate: creating them only when the take finds
        # nothing hands out the same item, without a slot query on every take. Take again even when this
        # call created none: another request may have created them since this take looked.
        if assignment is None:
            queue_slots_ensure(project, stage)
            assignment = _take(project, user, stage)
        if assignment is not None:
            return assignment
    return None


#: How often a take looks again after its candidate filled up under it (another take got the last place).
_TAKE_ATTEMPTS = 20


def _take(project: Project, user: User, stage: str) -> Assignment | None:
    """Lease the first candidate of one stage to the user (the candidate, then its recount, counter and
    assignment: one statement on PostgreSQL, two elsewhere), or ``None`` when no slot of the stage has a free
    place for them. Runs inside the caller's transaction.

    The take passes over slots other requests hold locked (``SKIP LOCKED``: parallel takes spread over the
    candidates instead of queueing on the first). When it finds none that way, a read without locks tells
    whether a locked slot still has a place (its holder may be a take leaving one free, or a skip giving one
    back); the take then waits for that slot alone. So "nothing left" never means "the free places were
    busy", which turned annotators away while items still needed them.
    """
    arm = initial_arm(project, stage)
    wait_for: int | None = None
    for _attempt in range(_TAKE_ATTEMPTS):
        candidate = queue_candidate(project, user, stage, lock=True, slot_id=wait_for)
        if candidate is None:
            if wait_for is None:
                busy = queue_candidate(project, user, stage)
                if busy is None:
                    return None
                wait_for = busy.slot_id
            else:  # it filled up while we waited; look for another
                wait_for = None
            continue
        wait_for = None
        item = candidate.item
        expires = _lease_expiry(project)
        # A new lease is written with its place (one statement on PostgreSQL); their own expired lease comes
        # back to them after it (its suggestion decision stands).
        lease = None if candidate.expired_own is not None else Assignment(
            item=item, annotator=user, stage=stage, status=AssignmentStatus.LEASED, lease_expires_at=expires,
            suggestion_arm=arm)
        if not _place_reserve(candidate.slot_id, item.pk, stage, lease):
            # The counter drifted (it never should); correct it, try the next one.
            QueueSlot.objects.filter(pk=candidate.slot_id).update(live=places_held(item.pk, stage))
            continue
        if lease is not None:
            return lease
        assignment = Assignment.objects.get(pk=candidate.expired_own)
        assignment.item = item
        assignment.status = AssignmentStatus.LEASED
        assignment.lease_expires_at = expires
        assignment.save(update_fields=["status", "lease_expires_at", "updated_at"])
        return assignment
    raise ServiceError("the queue is busy; ask again", code="conflict")


@transaction.atomic
def assignment_skip(*, assignment: Assignment, reason: str = "") -> Assignment:
    locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if locked.status == AssignmentStatus.SUBMITTED:
        raise ServiceError("this item is already submitted", code="conflict")
    if locked.status in SLOT_HOLDING:
        _slots_add(Counter({(locked.item_id, locked.stage): -1}))
    assignment.status = AssignmentStatus.SKIPPED
    assignment.skip_reason = reason[:300]
    assignment.save(update_fields=["status", "skip_reason", "updated_at"])
    return assignment

def assignments_expire() -> int:
    """Mark leases that ran out as expired, returning their items to the pool; returns how many."""
    return assignments_close(Assignment.objects.filter(
        status=AssignmentStatus.LEASED, lease_expires_at__lte=timezone.now()
    ), AssignmentStatus.EXPIRED)
