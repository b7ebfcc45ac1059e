"""Writes: every change to annotation work goes through a function here.

Each function checks, then acts inside a transaction, locking the rows whose invariants it relies on
(the check-then-do pattern), so that concurrent requests cannot hand out an item k+1 times or create
two annotations for one double-click.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, F, Max, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone
from django.utils.translation import gettext as _

from .assist import initial_arm, submission_fields
from .audit import audit_record
from .models import (
    SLOT_HOLDING,
    Annotation,
    Assignment,
    AssignmentStatus,
    AuditObject,
    Draft,
    Flag,
    FlagResolution,
    Guideline,
    GuidelineAcknowledgement,
    Item,
    Membership,
    Project,
    QueueSlot,
    Role,
    ScreeningStatus,
    Source,
    User,
    content_hash,
)
from .queue_sql import place_reserve as _place_reserve
from .queue_sql import places_held, queue_candidate, queue_state
from .rows import insert_instance, update_instance
from .selectors import (
    ProjectAccess,
    access_to,
    annotation_of,
    annotator_queue_key,
    assignment_to_submit,
    current_guideline,
)
from .task_types import PayloadError, TaskType, get_task_type, reject_nul_characters


class ServiceError(Exception):
    """A request that cannot be carried out; ``code`` lets the API choose the status."""

    def __init__(self, message: str, *, code: str = "invalid", field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.field = field


# -- projects, members, guidelines ---------------------------------------------------------------


@transaction.atomic
def project_create(
    *,
    name: str,
    slug: str,
    task_type: str,
    created_by: User | None,
    annotators_per_item: int = 3,
    label_schema: dict[str, Any] | None = None,
    description: str = "",
    options: dict[str, Any] | None = None,
) -> Project:
    """Create a project from its task type's template: default schema and guideline v1, published."""
    from .project_settings import label_schema_validate, options_validate  # it imports ServiceError from here

    task = get_task_type(task_type)
    project = Project.objects.create(
        name=name,
        slug=slug,
        task_type=task.slug,
        label_schema=label_schema_validate(label_schema, task_type=task.slug) if label_schema is not None
        else task.default_schema(),
        annotators_per_item=annotators_per_item,
        description=description,
        options=options_validate(options),
        created_by=created_by,
    )
    if created_by is not None and not created_by.is_superuser:
        Membership.objects.create(project=project, user=created_by, role=Role.MANAGER)
    template = task.guideline_template()
    guideline = guideline_create(
        project=project, instructions=template.instructions, ethics=template.ethics, pii=template.pii,
        change_note="Template guideline", created_by=created_by,
    )
    guideline_publish(guideline=guideline, by=created_by)
    return project


def project_delete(*, project: Project) -> None:
    """Delete a project that holds no annotation work yet; annotated projects are kept."""
    count = Annotation.objects.filter(item__project=project).count()
    if count:
        raise ServiceError(f"project {project.slug} holds {count} annotations and cannot be deleted",
                           code="conflict")
    project.delete()


def membership_set(*, project: Project, user: User, role: str) -> Membership:
    if role not in Role.values:
        raise ServiceError(f"unknown role {role!r}; expected one of {', '.join(Role.values)}", field="role")
    if user.is_imported:
        raise ServiceError(f"{user.username} is an imported annotator and cannot join a project", field="username")
    with transaction.atomic():
        Project.objects.select_for_update().get(pk=project.pk)  # serialise the last-manager check
        if role != Role.MANAGER and not Membership.objects.filter(project=project, role=Role.MANAGER).exclude(
            user=user
        ).exists() and Membership.objects.filter(project=project, user=user, role=Role.MANAGER).exists():
            raise ServiceError("a project needs at least one manager; make someone else manager first",
                               code="conflict", field="role")
        membership, _ = Membership.objects.update_or_create(project=project, user=user, defaults={"role": role})
    return membership


@transaction.atomic
def guideline_create(
    *, project: Project, instructions: str, ethics: str, pii: str, created_by: User | None, change_note: str = ""
) -> Guideline:
    """A new draft version (numbered after the latest); publishing is a separate step."""
    for field, text in (("instructions", instructions), ("ethics", ethics), ("pii", pii)):
        if not text or not text.strip():
            raise ServiceError(f"the {field} section must not be empty", field=field)
    Project.objects.select_for_update().get(pk=project.pk)  # serialise version numbering
    last = Guideline.objects.filter(project=project).order_by("-version").values_list("version", flat=True).first()
    guideline = Guideline.objects.create(
        project=project, version=(last or 0) + 1, instructions=instructions, ethics=ethics, pii=pii,
        change_note=change_note, created_by=created_by,
    )
    audit_record(project=project, actor=created_by, object_type=AuditObject.GUIDELINE, object_id=guideline.pk,
                 action="create", after={"version": guideline.version, "instructions": instructions,
                                         "ethics": ethics, "pii": pii, "change_note": change_note})
    return guideline


@transaction.atomic
def guideline_publish(*, guideline: Guideline, by: User | None = None) -> Guideline:
    """Make this version the current one; annotators must acknowledge it before their next item."""
    Project.objects.select_for_update().get(pk=guideline.project_id)
    if guideline.is_published:
        raise ServiceError(f"version {guideline.version} is already published", code="conflict")
    previous = Guideline.objects.filter(project_id=guideline.project_id, is_current=True).values_list(
        "version", flat=True).first()
    Guideline.objects.filter(project_id=guideline.project_id, is_current=True).update(is_current=False)
    guideline.published_at = timezone.now()
    guideline.is_current = True
    guideline.save(update_fields=["published_at", "is_current"])
    audit_record(project=guideline.project_id, actor=by, object_type=AuditObject.GUIDELINE, object_id=guideline.pk,
                 action="publish", before={"current_version": previous},
                 after={"current_version": guideline.version, "published_at": guideline.published_at.isoformat()})
    return guideline


def guideline_acknowledge(*, user: User, project: Project) -> GuidelineAcknowledgement:
    guideline = current_guideline(project)
    if guideline is None:
        raise ServiceError("this project has no published guideline yet", code="not_found")
    ack, _ = GuidelineAcknowledgement.objects.get_or_create(user=user, guideline=guideline)
    return ack


# -- items --------------------------------------------------------------------------------------


def item_build(
    *,
    project: Project,
    payload: dict[str, Any],
    external_id: str = "",
    source: Source | None = None,
    split: str = "",
    meta: dict[str, Any] | None = None,
    group_key: str = "",
    screening_status: str = ScreeningStatus.CLEAR,
) -> Item:
    """Validate an item payload and return an unsaved Item."""
    normalised, text_hash = item_checked(project.task, payload)
    return Item(
        project=project, payload=normalised, external_id=external_id, source=source, split=split,
        meta=meta or {}, group_key=group_key, content_hash=text_hash, screening_status=screening_status,
    )


def item_checked(task: TaskType, payload: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """An item payload validated (normalised) by its task type, and its content hash; the importer writes
    items from these without building instances."""
    normalised = task.validate_item(payload)
    return normalised, content_hash(task.item_text(normalised))


def item_create(**kwargs: Any) -> Item:
    reject_nul_characters(kwargs.get("payload"))  # importers check the whole raw record once, before item_build
    item = item_build(**kwargs)
    try:
        with transaction.atomic():
            item.save()
    except IntegrityError:
        raise ServiceError(f"an item with external id {item.external_id!r} already exists", code="conflict",
                           field="external_id") from None
    return item


# -- the work queue -----------------------------------------------------------------------------


def _lease_expiry(project: Project) -> timezone.datetime:
    minutes = int(project.options.get("lease_minutes", settings.GOLDSET_LEASE_MINUTES))
    return timezone.now() + timedelta(minutes=minutes)


def _slots_add(deltas: Counter[tuple[int, str]]) -> None:
    """Apply counter changes, in (item, stage) order so that concurrent writers never deadlock."""
    for (item_id, stage), delta in sorted(deltas.items()):
        if delta:
            QueueSlot.objects.filter(item_id=item_id, stage=stage).update(live=Greatest(F("live") + delta, Value(0)))


def _assignments_close(assignments: QuerySet[Assignment], status: str) -> int:
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


def _slot_rows(items: QuerySet[Item], stage: str) -> list[QueueSlot]:
    """New slots for ``items``, counting the places already taken (:func:`queue_sql.places_held`): assignments
    that hold one and the annotations the corpus came with."""
    held = Subquery(Assignment.objects.filter(item=OuterRef("pk"), stage=stage, status__in=SLOT_HOLDING)
                    .values("item").annotate(n=Count("id")).values("n"))
    imported = Subquery(Annotation.objects.filter(item=OuterRef("pk"), stage=stage, imported=True)
                        .values("item").annotate(n=Count("id")).values("n"))
    counted = items.annotate(taken=Coalesce(held, 0) + Coalesce(imported, 0))
    return [QueueSlot(item_id=item_id, project_id=project_id, stage=stage, live=taken)
            for item_id, project_id, taken in counted.values_list("id", "project_id", "taken")]


def queue_slots_ensure(project: Project, stage: str) -> int:
    """Give the project's items created since the newest slot (imports, the demo, the API) their slot.

    Item ids grow, so this is one index probe when nothing is new; an import committing after a newer
    item is caught by :func:`queue_slots_sync`. Returns how many slots were created.
    """
    newest = QueueSlot.objects.filter(project=project, stage=stage).aggregate(newest=Max("item_id"))["newest"]
    items = Item.objects.filter(project=project)
    if newest is not None:
        items = items.filter(id__gt=newest)
    return len(QueueSlot.objects.bulk_create(_slot_rows(items, stage), batch_size=2000, ignore_conflicts=True))


def queue_slots_sync() -> int:
    """Create every missing slot, whatever the item ids (run by ``annotation.expire_leases``)."""
    created = 0
    for project in Project.objects.all():
        for stage in project.stage_names:
            missing = Item.objects.filter(project=project).exclude(queue_slots__stage=stage)
            created += len(QueueSlot.objects.bulk_create(_slot_rows(missing, stage), batch_size=2000,
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
    return _next(project, user)


def _next(project: Project, user: User) -> Assignment | None:
    with transaction.atomic():
        _lock_annotator_queue(project, user)
        state = queue_state(project, user)
        if state.resumable is not None or not state.stale_leases:
            return _resume_or_take(project, user, state.resumable)
    _expire_stale_leases(project)
    with transaction.atomic():
        _lock_annotator_queue(project, user)
        return _resume_or_take(project, user, queue_state(project, user).resumable)


def _expire_stale_leases(project: Project) -> None:
    """Mark the project's leases that ran out expired, in a transaction of its own: it locks other annotators'
    assignments and slots, which a transaction already holding a take's locks must not wait for."""
    _assignments_close(Assignment.objects.filter(item__project=project, status=AssignmentStatus.LEASED,
                                                 lease_expires_at__lte=timezone.now()), AssignmentStatus.EXPIRED)


def _resume_or_take(project: Project, user: User, resumable: Assignment | None) -> Assignment | None:
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
    """Lease the first candidate of one stage to the user (three queries: the candidate, its recount and
    counter, the assignment), or ``None`` when no slot of the stage has a free place for them. Runs inside the
    caller's transaction.

    The take passes over slots other requests hold locked (``SKIP LOCKED``: parallel takes spread over the
    candidates instead of queueing on the first). When it finds none that way, a read without locks tells
    whether a locked slot still has a place (its holder may be a take leaving one free, or a skip giving one
    back); the take then waits for that slot alone. So "nothing left" never means "the free places were
    busy", which turned annotators away while items still needed them.
    """
    needed = project.annotations_needed(stage)
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
        if not _place_reserve(candidate.slot_id, item.pk, stage, needed):
            # The counter drifted (it never should); correct it, try the next one.
            QueueSlot.objects.filter(pk=candidate.slot_id).update(live=places_held(item.pk, stage))
            continue
        expires = _lease_expiry(project)
        if candidate.expired_own is None:
            assignment = insert_instance(Assignment(item=item, annotator=user, stage=stage,
                                                    status=AssignmentStatus.LEASED, lease_expires_at=expires,
                                                    suggestion_arm=arm))
        else:  # their own expired lease comes back to them (its suggestion decision stands)
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


# -- annotations --------------------------------------------------------------------------------


def annotation_submit(
    *,
    project: Project,
    user: User,
    item_id: int,
    payload: Any,
    stage: str | None = None,
    seconds_spent: float | None = None,
    access: ProjectAccess | None = None,
) -> tuple[Annotation, bool]:
    """Validate and store the caller's annotation; resubmitting updates it. Returns (annotation, created).

    The caller must hold an assignment for the item (blind, queue-driven work); the assignment row is
    locked so a double-click or a retry after a timeout yields one annotation, not two. A submission on an
    assignment that no longer holds a place (its lease ran out and was marked expired, or the caller flagged
    the item) takes a free place if the item has one and is refused (``code="conflict"``) when the item
    already has its k annotations and leases. The annotation records the current guideline (from ``access``
    when the caller already read it).
    """
    with transaction.atomic():
        annotation, created, _late = _annotation_store(project=project, user=user, item_id=item_id, payload=payload,
                                                      stage=stage, seconds_spent=seconds_spent, access=access)
    return annotation, created


@dataclass(frozen=True)
class Submission:
    """A stored submission and the caller's next assignment (``next_offered`` false: the client asks
    ``next/`` itself, e.g. when the guideline changed or the queue was busy)."""

    annotation: Annotation
    created: bool
    next: Assignment | None = None
    next_offered: bool = False


def annotation_submit_and_next(
    *,
    project: Project,
    user: User,
    item_id: int,
    payload: Any,
    stage: str | None = None,
    seconds_spent: float | None = None,
    access: ProjectAccess | None = None,
) -> Submission:
    """:func:`annotation_submit`, then the caller's next assignment as :func:`assignment_next` hands it out
    (one round trip per annotation). Both happen in one transaction unless the submission was late or leases
    of the project ran out (then the expiry and the take run after the submission committed, see
    :func:`_expire_stale_leases`). A next assignment that cannot be had leaves the submission stored."""
    access = access or access_to(project, user)
    with transaction.atomic():
        # The annotator's queue lock comes with the assignment's row lock, in its statement.
        annotation, created, late = _annotation_store(project=project, user=user, item_id=item_id,
                                                      payload=payload, stage=stage, seconds_spent=seconds_spent,
                                                      access=access, queue_lock=True)
        if not access.acknowledged:
            return Submission(annotation, created)
        if not late:
            state = queue_state(project, user)
            if state.resumable is not None or not state.stale_leases:
                try:
                    return Submission(annotation, created, _resume_or_take(project, user, state.resumable), True)
                except ServiceError:  # the queue was busy
                    return Submission(annotation, created)
    try:
        return Submission(annotation, created, _next(project, user), True)
    except ServiceError:
        return Submission(annotation, created)


def _annotation_store(
    *,
    project: Project,
    user: User,
    item_id: int,
    payload: Any,
    stage: str | None,
    seconds_spent: float | None,
    access: ProjectAccess | None,
    queue_lock: bool = False,
) -> tuple[Annotation, bool, bool]:
    """The body of :func:`annotation_submit`, inside the caller's transaction; the third value tells whether
    the submission was late (on an assignment that no longer held a place). ``queue_lock`` also takes the
    annotator's queue lock (:func:`_lock_annotator_queue`)."""
    assignment = assignment_to_submit(project, user, item_id, stage, lock=True, queue_lock=queue_lock)
    if assignment is None:
        raise ServiceError(f"item {item_id} is not assigned to you" + (f" in stage {stage!r}" if stage else ""),
                           code="not_assigned", field="item")
    item = assignment.item
    if project.task.stage(assignment.stage).produces:  # a writing stage copies its output into the item
        item = Item.objects.select_for_update().get(pk=item.pk)
    try:
        reject_nul_characters(payload)
        normalised = project.task.validate_annotation(
            payload, item=item.payload, schema=project.label_schema, stage=assignment.stage
        )
    except PayloadError as error:
        raise ServiceError(error.message, field=f"payload.{error.field}" if error.field else "payload") from None
    late = assignment.status not in SLOT_HOLDING  # its lease was marked expired, or the caller flagged the item
    if late:
        _place_claim(project, assignment)
    # The guideline with its version loaded: the response names the version without fetching it.
    fields = {"payload": normalised, "guideline": (access or access_to(project, user)).guideline(),
              "seconds_spent": seconds_spent, **submission_fields(assignment, normalised, project)}
    # The assignment lock serialises this user's submissions of the item, so read-then-write is safe here.
    annotation = annotation_of(item.pk, user, assignment.stage)
    created = annotation is None
    before = None if annotation is None else annotation.payload
    if annotation is None:
        annotation = insert_instance(Annotation(item=item, annotator=user, stage=assignment.stage, **fields))
    else:
        annotation.annotator = user  # the caller's own: the response names them without a query
        for name, value in fields.items():
            setattr(annotation, name, value)
        annotation.save()
    if created or before != normalised:
        audit_record(project=project, actor=user, object_type=AuditObject.ANNOTATION, object_id=annotation.pk,
                     action="create" if created else "update", before=before,
                     after={"item": item.pk, "stage": assignment.stage, "payload": normalised})
    if assignment.status != AssignmentStatus.SUBMITTED:
        assignment.status = AssignmentStatus.SUBMITTED
        update_instance(assignment, ("status", "updated_at"))
    updated_item = project.task.apply_stage_output(item.payload, assignment.stage, normalised)
    if updated_item is not None:
        item.payload = updated_item
        item.save(update_fields=["payload"])
    return annotation, created, late


def _place_claim(project: Project, assignment: Assignment) -> None:
    """Give a late submission a place of its item: a free one, under the slot's lock (which the take holds
    too), else refuse it, so that an item never ends with more than k annotations in a stage."""
    slot = QueueSlot.objects.select_for_update().filter(item_id=assignment.item_id, stage=assignment.stage).first()
    held = places_held(assignment.item_id, assignment.stage)
    if held >= project.annotations_needed(assignment.stage):
        raise ServiceError(
            _("Your lease on item %(item)s ran out and other annotators completed it meanwhile; "
              "your annotation was not stored.") % {"item": assignment.item_id},
            code="conflict", field="item")
    if slot is not None:
        QueueSlot.objects.filter(pk=slot.pk).update(live=held + 1)


# -- flags --------------------------------------------------------------------------------------


@transaction.atomic
def flag_create(*, item: Item, user: User | None, kind: str, note: str = "") -> Flag:
    """Raise a flag; the item leaves every queue until a manager resolves it."""
    flag = Flag.objects.create(item=item, user=user, kind=kind, note=note)
    if user is not None:
        _assignments_close(Assignment.objects.filter(item=item, annotator=user)
                           .exclude(status=AssignmentStatus.SUBMITTED), AssignmentStatus.FLAGGED)
    return flag


@transaction.atomic
def flag_resolve(*, flag: Flag, resolution: str, by: User, note: str = "") -> Flag:
    flag = Flag.objects.select_for_update().get(pk=flag.pk)
    if flag.resolution != FlagResolution.OPEN:
        raise ServiceError(f"this flag was already resolved ({flag.resolution})", code="conflict")
    if resolution not in FlagResolution.values or resolution == FlagResolution.OPEN:
        raise ServiceError(f"unknown resolution {resolution!r}", field="resolution")
    flag.resolution = resolution
    flag.resolution_note = note
    flag.resolved_by = by
    flag.resolved_at = timezone.now()
    flag.save()
    if resolution == FlagResolution.DROPPED:
        Item.objects.filter(pk=flag.item_id).update(screening_status=ScreeningStatus.DROPPED)
    elif not Flag.objects.filter(item_id=flag.item_id, resolution=FlagResolution.OPEN).exists():
        # The last open flag resolved in the item's favour: a screened item goes back to the queue.
        Item.objects.filter(pk=flag.item_id, screening_status=ScreeningStatus.NEEDS_REVIEW).update(
            screening_status=ScreeningStatus.KEPT)
    return flag


def assignments_expire() -> int:
    """Mark leases that ran out as expired, returning their items to the pool; returns how many."""
    return _assignments_close(Assignment.objects.filter(
        status=AssignmentStatus.LEASED, lease_expires_at__lte=timezone.now()
    ), AssignmentStatus.EXPIRED)


@transaction.atomic
def membership_remove(*, membership: Membership) -> None:
    """Take a user off a project; their open leases return to the queue, their annotations stay.

    A project keeps at least one manager, or nobody but a superuser could manage it again.
    """
    Project.objects.select_for_update().get(pk=membership.project_id)  # serialise the last-manager check
    if membership.role == Role.MANAGER and not Membership.objects.filter(
        project_id=membership.project_id, role=Role.MANAGER
    ).exclude(pk=membership.pk).exists():
        raise ServiceError("a project needs at least one manager; add another before removing this one",
                           code="conflict", field="membership")
    _assignments_close(Assignment.objects.filter(
        item__project_id=membership.project_id, annotator_id=membership.user_id,
        status=AssignmentStatus.LEASED,
    ), AssignmentStatus.EXPIRED)
    membership.delete()


# -- workspace drafts ---------------------------------------------------------------------------

#: A draft is the widget's state, a few kilobytes; the bound keeps a buggy or hostile client from
#: filling the database.
DRAFT_MAX_BYTES = 200_000
#: Assignments whose work is over: a late autosave (a timer firing after the submit) must not revive them.
_CLOSED = (AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED, AssignmentStatus.FLAGGED)


def draft_save(*, assignment: Assignment, payload: Any, seconds_spent: float = 0.0) -> Draft:
    """Store the annotator's unfinished work on an open assignment (last write wins)."""
    if assignment.status in _CLOSED:
        raise ServiceError(f"this item is already {assignment.get_status_display().lower()}", code="conflict")
    if len(json.dumps(payload, ensure_ascii=False).encode()) > DRAFT_MAX_BYTES:
        raise ServiceError(f"the draft is larger than {DRAFT_MAX_BYTES} bytes", field="payload")
    draft, _ = Draft.objects.update_or_create(
        assignment=assignment, defaults={"payload": payload, "seconds_spent": max(0.0, float(seconds_spent))}
    )
    return draft


def user_shortcuts_set(*, user: User, single_keys: bool) -> User:
    """Turn the workspace's single-key shortcuts on or off for one person (a stored preference)."""
    user.single_key_shortcuts = single_keys
    user.save(update_fields=["single_key_shortcuts"])
    return user
