"""Annotations: a submission stored on its assignment, and the submitter's next assignment in the same
transaction; an annotator's revision of their own earlier submission until its item's gold is decided."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from ..assist import submission_fields
from ..audit import audit_event, audit_record
from ..gold.selectors import DECIDED_GOLD
from ..models import (
    SLOT_HOLDING,
    Annotation,
    Assignment,
    AssignmentStatus,
    AuditObject,
    Draft,
    GoldLabel,
    GoldStatus,
    Item,
    Project,
    QueueSlot,
    User,
)
from ..queue_sql import QueueState, places_held, queue_state
from ..rows import Statement, execute_all, insert_instance, insert_statement, saved, update_statement
from ..selectors import (
    ProjectAccess,
    access_to,
    annotation_to_write,
    assignment_to_submit,
    item_needed,
)
from ..task_types import PayloadError, reject_nul_characters
from ..workspace_strings import stage_title
from .errors import ServiceError
from .items import item_written
from .queue import next_for, resume_or_take

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
        annotation, created, _state = _annotation_store(
            project=project, user=user, item_id=item_id, payload=payload, stage=stage, seconds_spent=seconds_spent,
            access=access)
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
        annotation, created, state = _annotation_store(
            project=project, user=user, item_id=item_id, payload=payload, stage=stage, seconds_spent=seconds_spent,
            access=access, queue_lock=True, with_state=access.acknowledged)
        if not access.acknowledged:
            return Submission(annotation, created)
        if state is not None and (state.resumable is not None or not state.stale_leases):
            try:
                return Submission(annotation, created, resume_or_take(project, user, state.resumable), True)
            except ServiceError:  # the queue was busy
                return Submission(annotation, created)
    try:
        return Submission(annotation, created, next_for(project, user), True)
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
    with_state: bool = False,
) -> tuple[Annotation, bool, QueueState | None]:
    """The body of :func:`annotation_submit`, inside the caller's transaction. ``queue_lock`` also takes the
    annotator's queue lock (:func:`_lock_annotator_queue`). ``with_state`` reads the caller's queue state after
    the writes (in their statement where the database can: ``rows.with_writes``), the third value; it is
    ``None`` without ``with_state`` and when the submission was late (on an assignment that no longer held a
    place: then the take runs after the commit, expiring leases first)."""
    assignment = assignment_to_submit(project, user, item_id, stage, lock=True, queue_lock=queue_lock)
    if assignment is None:
        raise ServiceError(f"item {item_id} is not assigned to you" + (f" in stage {stage!r}" if stage else ""),
                           code="not_assigned", field="item")
    item = assignment.item
    writing = bool(project.task.stage(assignment.stage).produces)  # a writing stage copies its output into the item
    if writing:
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
    if writing:
        # The written text is screened before anything stores it: the item, this annotation and its audit event
        # hold it pseudonymized, and the draft that held it as typed is gone.
        normalised = item_written(project=project, item=item, stage=assignment.stage, output=normalised)
        Draft.objects.filter(assignment=assignment).delete()
    # The guideline with its version loaded: the response names the version without fetching it.
    fields = {"payload": normalised, "guideline": (access or access_to(project, user)).guideline(),
              "seconds_spent": seconds_spent, **submission_fields(assignment, normalised, project)}
    # Read after the locks were granted (a statement of its own: one that waited for them would see the rows as
    # they were before), and the assignment lock serialises this user's submissions of the item, so
    # read-then-write is safe here.
    annotation = annotation_to_write(item.pk, user, assignment.stage)
    created = annotation._state.adding
    before = None if created else annotation.payload
    annotation.item = item
    annotation.annotator = user  # the caller's own: the response names them without a query
    for name, value in fields.items():
        setattr(annotation, name, value)
    writes: list[Statement] = []
    if not created:
        writes.append(update_statement(annotation, (*fields, "updated_at")))
    elif annotation.pk is None:  # no id reserved (SQLite): written now, so that its audit event can name it
        insert_instance(annotation)
    else:
        writes.append(insert_statement(annotation))
        saved(annotation)
    if created or before != normalised:
        writes.append(insert_statement(audit_event(
            project=project, actor=user, object_type=AuditObject.ANNOTATION, object_id=annotation.pk,
            action="create" if created else "update", before=before,
            after={"item": item.pk, "stage": assignment.stage, "payload": normalised})))
    if assignment.status != AssignmentStatus.SUBMITTED:
        assignment.status = AssignmentStatus.SUBMITTED
        writes.append(update_statement(assignment, ("status", "updated_at")))
    if with_state and not late:
        return annotation, created, queue_state(project, user, submitted=assignment.pk, writes=writes)
    execute_all(writes)
    return annotation, created, None


def _place_claim(project: Project, assignment: Assignment) -> None:
    """Give a late submission a place of its item: a free one, under the slot's lock (which the take holds
    too), else refuse it, so that an item never ends with more than k annotations in a stage."""
    slot = QueueSlot.objects.select_for_update().filter(item_id=assignment.item_id, stage=assignment.stage).first()
    held = places_held(assignment.item_id, assignment.stage)
    if held >= (slot.needed if slot is not None else item_needed(project, assignment.item_id, assignment.stage)):
        raise ServiceError(
            _("Your lease on item %(item)s ran out and other annotators completed it meanwhile; "
              "your annotation was not stored.") % {"item": assignment.item_id},
            code="conflict", field="item")
    if slot is not None:
        QueueSlot.objects.filter(pk=slot.pk).update(live=held + 1)


def annotation_revise(*, project: Project, user: User, annotation_id: int, payload: Any,
                      access: ProjectAccess | None = None) -> Annotation:
    """Replace the caller's own earlier answer on an item with ``payload``, until the item's gold is decided.

    The annotation row is the one agreement and gold read (one per annotator, item and stage), so they take the
    revised answer from then on; its ``updated_at`` changes the fingerprints their cached results are valid for.
    Refused: someone else's or a corpus's annotation (``not_found``, as if it did not exist), a decided gold
    (``gold_decided``), and a writing stage's text, which the item and its validators' labels were built on.
    Audited as ``revise``.
    """
    with transaction.atomic():
        # Every gold write holds the project row (gold.services): a revision waits for one under way and then
        # sees its decision, and no gold is computed from the answer being replaced.
        Project.objects.select_for_update().filter(pk=project.pk).first()
        annotation = (Annotation.objects.select_for_update().select_related("item")
                      .filter(pk=annotation_id, annotator=user, item__project=project, imported=False).first())
        if annotation is None:
            raise ServiceError(_("You have no annotation %(id)s in this project.") % {"id": annotation_id},
                               code="not_found")
        item = annotation.item
        gold = GoldLabel.objects.filter(item=item).first()
        if gold is not None and gold.status in DECIDED_GOLD:
            raise ServiceError(
                _("The gold answer of item %(item)s is decided (%(status)s), so your annotation can no longer be "
                  "revised. If it is wrong, tell the project manager.")
                % {"item": item.external_id or item.pk, "status": GoldStatus(gold.status).label},
                code="gold_decided")
        stage = project.task.stage(annotation.stage)
        if stage.produces:
            raise ServiceError(
                _("Text written in the “%(stage)s” stage became part of the item and was labelled by others; it "
                  "cannot be revised. Tell the project manager.") % {"stage": stage_title(stage.title)},
                code="invalid", field="payload")
        try:
            reject_nul_characters(payload)
            normalised = project.task.validate_annotation(
                payload, item=item.payload, schema=project.label_schema, stage=annotation.stage)
        except PayloadError as error:
            raise ServiceError(error.message, field=f"payload.{error.field}" if error.field else "payload") from None
        if normalised == annotation.payload:
            return annotation
        before = annotation.payload
        assignment = Assignment.objects.filter(item=item, annotator=user, stage=annotation.stage).first()
        fields: dict[str, Any] = {"payload": normalised,
                                  "guideline": (access or access_to(project, user)).guideline()}
        if assignment is not None:  # the suggestion it showed, compared with the new answer
            fields.update(submission_fields(assignment, normalised, project))
        for name, value in fields.items():
            setattr(annotation, name, value)
        annotation.save(update_fields=[*fields, "updated_at"])
        audit_record(project=project, actor=user, object_type=AuditObject.ANNOTATION, object_id=annotation.pk,
                     action="revise", before={"item": item.pk, "stage": annotation.stage, "payload": before},
                     after={"item": item.pk, "stage": annotation.stage, "payload": normalised})
    return annotation
