"""Reads: every query that pages, the API and jobs need, in one place."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from django.db import connection
from django.db.models import Count, F, IntegerField, Model, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.expressions import Col
from django.db.models.fields.json import compile_json_path
from django.db.models.functions import Coalesce
from django.utils import timezone

from .gold.selectors import releasable_items
from .models import (
    ANNOTATABLE_SCREENING,
    SLOT_HOLDING,
    UNSET_PRIORITY_LAST,
    Annotation,
    Assignment,
    AssignmentStatus,
    AuditEvent,
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
    User,
)

M = TypeVar("M", bound=Model)


def projects_for_user(user: User) -> QuerySet[Project]:
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user).distinct()


def role_in_project(user: User, project: Project) -> str | None:
    """The caller's role in the project, ``"superuser"`` for superusers, ``None`` for outsiders."""
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return "superuser"
    return Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()


@dataclass(frozen=True)
class ProjectAccess:
    """The caller's standing in a project, read together with the project (one query per API request).

    ``role`` is a membership role, ``"superuser"``, or ``None`` for outsiders; ``acknowledged`` is true
    when the caller acknowledged the current guideline or the project has none.
    """

    role: str | None
    guideline_id: int | None
    guideline_version: int | None
    acknowledged: bool

    def guideline(self) -> Guideline | None:
        """The current guideline with its id and version loaded (the other fields deferred), so that an
        annotation recording it can name its version without another query."""
        if self.guideline_id is None:
            return None
        return Guideline.from_db(connection.alias, ["id", "version"], [self.guideline_id, self.guideline_version])


# The queries below run on every API request or every take. They are written in SQL because building the
# same queries with the ORM (subqueries, OuterRef) costs more CPU than running them (docs/performance.md,
# "The annotate workload"); the SQL is plain enough for SQLite and PostgreSQL alike.
_PROJECT, _MEMBERSHIP, _GUIDELINE, _ACK = (m._meta.db_table for m in (Project, Membership, Guideline,
                                                                     GuidelineAcknowledgement))
_ITEM, _SLOT, _ASSIGNMENT, _ANNOTATION, _FLAG = (m._meta.db_table for m in (Item, QueueSlot, Assignment,
                                                                            Annotation, Flag))

def _is_row_id(value: int) -> bool:
    """Whether an id from a URL or a request body fits the id columns (the ORM's lookups check this themselves;
    SQL parameters out of range fail in the driver)."""
    return -(2**63) <= value < 2**63


def columns(model: type[Model], alias: str) -> str:
    """The model's concrete columns in field order, for SQL whose rows :func:`fetch_instance` turns into
    instances."""
    return ", ".join(f'{alias}."{field.column}"' for field in model._meta.concrete_fields)


_ASSIGNMENT_COLUMNS = columns(Assignment, "a")
_CONVERTED: dict[tuple[type[Model], str], list[tuple[int, Col]]] = {}


def fetch_instance(model: type[M], sql: str, params: list[Any]) -> tuple[M, tuple[Any, ...]] | None:
    """The first row of ``sql`` (which selects :func:`columns` of ``model`` first) as an instance, converted as
    the ORM converts (JSON, SQLite's dates and booleans), with the row's further columns; ``None`` without a
    row. ``Model.objects.raw`` does the same but resolves the columns again on every call, which these
    queries, run on every request, would pay each time."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    fields = model._meta.concrete_fields
    values = list(row[:len(fields)])
    key = (model, connection.vendor)
    if key not in _CONVERTED:  # which fields have converters does not change (the converters are per connection)
        cols = [(index, field.get_col(model._meta.db_table)) for index, field in enumerate(fields)]
        _CONVERTED[key] = [(index, col) for index, col in cols
                           if connection.ops.get_db_converters(col) or col.get_db_converters(connection)]
    for index, col in _CONVERTED[key]:
        for converter in connection.ops.get_db_converters(col) + col.get_db_converters(connection):
            values[index] = converter(values[index], col, connection)
    return model.from_db(connection.alias, [field.attname for field in fields], values), tuple(row[len(fields):])


# At most one current guideline per project (a unique constraint), so the join yields at most one row.
_ACCESS_SQL = f"""
SELECT {columns(Project, "p")},
  (SELECT m.role FROM {_MEMBERSHIP} m WHERE m.project_id = p.id AND m.user_id = %s) AS access_role,
  g.id AS access_guideline, g.version AS access_guideline_version,
  EXISTS (SELECT 1 FROM {_ACK} a WHERE a.user_id = %s AND a.guideline_id = g.id) AS access_acknowledged
FROM {_PROJECT} p LEFT JOIN {_GUIDELINE} g ON g.project_id = p.id AND g.is_current WHERE p.id = %s
"""


def project_with_access(project_id: int, user: User) -> tuple[Project, ProjectAccess] | None:
    """The project and the caller's :class:`ProjectAccess` in one query; ``None`` when there is no such project."""
    if not _is_row_id(project_id):
        return None
    found = fetch_instance(Project, _ACCESS_SQL, [user.pk, user.pk, project_id])
    if found is None:
        return None
    project, (role, guideline, version, acknowledged) = found
    if not user.is_authenticated:
        role = None
    elif user.is_superuser:
        role = "superuser"
    return project, ProjectAccess(role=role, guideline_id=guideline, guideline_version=version,
                                  acknowledged=bool(acknowledged) or guideline is None)


def access_to(project: Project, user: User) -> ProjectAccess:
    """The caller's :class:`ProjectAccess` for a project already in hand (one query)."""
    found = project_with_access(project.pk, user)
    if found is None:
        raise Project.DoesNotExist(f"project {project.pk} no longer exists")
    return found[1]


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


def current_guideline(project: Project) -> Guideline | None:
    return Guideline.objects.filter(project=project, is_current=True).first()


def has_acknowledged_current(user: User, project: Project) -> bool:
    guideline = current_guideline(project)
    if guideline is None:
        return True
    return GuidelineAcknowledgement.objects.filter(user=user, guideline=guideline).exists()


_PAYLOAD = Item._meta.get_field("payload")
#: The constant of the "uncertainty" order's index expression (unset priorities last).
_UNSET_PRIORITY = UNSET_PRIORITY_LAST.get_source_expressions()[1].value


def live_assignments(*, now: datetime | None = None) -> QuerySet[Assignment]:
    """Assignments that hold a place for their item: submitted, or leased and not expired."""
    now = now or timezone.now()
    return Assignment.objects.filter(
        Q(status=AssignmentStatus.SUBMITTED) | Q(status=AssignmentStatus.LEASED, lease_expires_at__gt=now)
    )


def open_flagged_item_ids(project: Project) -> QuerySet:
    return Flag.objects.filter(item__project=project, resolution=FlagResolution.OPEN).values("item_id")


def annotatable_items(project: Project) -> QuerySet[Item]:
    """Items annotators may see: screened clear (or kept after review) and without open flags."""
    return Item.objects.filter(project=project, screening_status__in=ANNOTATABLE_SCREENING).exclude(
        id__in=open_flagged_item_ids(project)
    )


def annotations_visible_to(user: User, project: Project) -> QuerySet[Annotation]:
    """Blind annotation: annotators see only their own annotations; managers and maintainers all."""
    qs = Annotation.objects.filter(item__project=project).select_related("annotator", "item", "guideline")
    role = role_in_project(user, project)
    if role in {"superuser", Role.MANAGER, Role.MAINTAINER}:
        return qs
    return qs.filter(annotator=user)


def flags_visible_to(user: User, project: Project) -> QuerySet[Flag]:
    qs = Flag.objects.filter(item__project=project).select_related("item", "user", "resolved_by")
    role = role_in_project(user, project)
    if role in {"superuser", Role.MANAGER, Role.MAINTAINER}:
        return qs
    return qs.filter(user=user)


def stage_complete(project: Project, stage: str, annotations: Any) -> Any:
    """The one definition of "complete": an item's stage is complete when it has k annotations in that stage
    (k = ``project.annotations_needed(stage)``), imported corpus annotations included.

    ``annotations`` is an item's count of annotations in the stage, or an array of counts (numpy or pandas),
    answered element by element. Progress, agreement and the release card count with this rule, as the queue
    does when it hands out places.
    """
    return annotations >= project.annotations_needed(stage)


def project_progress(project: Project) -> dict[str, object]:
    """Items and annotations per stage, for managers (never shown to annotators)."""
    items = Item.objects.filter(project=project)
    total = items.count()
    by_screening = dict(items.values_list("screening_status").annotate(n=Count("id")).order_by())
    stages = []
    for stage in project.stage_names:
        needed = project.annotations_needed(stage)
        per_item = (
            Annotation.objects.filter(item__project=project, stage=stage)
            .values("item_id")
            .annotate(n=Count("id"))
            .values_list("n", flat=True)
        )
        counts = list(per_item)
        stages.append({
            "stage": stage,
            "needed_per_item": needed,
            "annotations": sum(counts),
            "items_started": len(counts),
            "items_complete": sum(1 for n in counts if stage_complete(project, stage, n)),
        })
    return {
        "items": total,
        "screening": by_screening,
        "open_flags": Flag.objects.filter(item__project=project, resolution=FlagResolution.OPEN).count(),
        # The release's own rule (screening, flags, gold): what a release built now could take.
        "releasable": releasable_items(project).count(),
        "stages": stages,
        "annotators": Membership.objects.filter(project=project, role=Role.ANNOTATOR).count(),
    }


def annotator_progress(project: Project, user: User) -> dict[str, int]:
    """The annotator's own counts: done, skipped, and how many items the queue could still give them."""
    mine = Assignment.objects.filter(item__project=project, annotator=user)
    done = mine.filter(status=AssignmentStatus.SUBMITTED).count()
    skipped = mine.filter(status__in=[AssignmentStatus.SKIPPED, AssignmentStatus.FLAGGED]).count()
    remaining = sum(eligible_items(project, user, stage).count() for stage in project.stage_names)
    return {"done": done, "skipped": skipped, "remaining": remaining}


def _count_of(queryset: QuerySet) -> Coalesce:
    """``count(*)`` of a queryset filtered on an outer item, as a subquery (0 when it has no rows)."""
    return Coalesce(Subquery(queryset.values("item").annotate(n=Count("id")).values("n"), output_field=IntegerField()),
                    Value(0))


def _live_count(item_ref: Any, stage: str, now: Any) -> Any:
    """The item's taken places in the stage: live assignments and imported annotations (see :func:`places_held`)."""
    return (_count_of(live_assignments(now=now).filter(item=item_ref, stage=stage))
            + _count_of(Annotation.objects.filter(item=item_ref, stage=stage, imported=True)))


def eligible_items(project: Project, user: User, stage: str) -> QuerySet[Item]:
    """Items this annotator may receive in this stage, closest to completion first.

    Never an item they already had in this stage (except their own expired lease), never one whose k places
    are taken (live assignments and imported annotations), never an item whose previous stage is unfinished, and never a
    hypothesis or question they wrote themselves.
    """
    now = timezone.now()
    needed = project.annotations_needed(stage)
    qs = (
        annotatable_items(project)
        .exclude(assignments__in=Assignment.objects.filter(annotator=user, stage=stage)
                 .exclude(status=AssignmentStatus.EXPIRED))
        .annotate(live=_live_count(OuterRef("pk"), stage, now))
        .filter(live__lt=needed)
    )
    stages = project.task.stages
    index = [s.name for s in stages].index(stage)
    if stages[index].done_marker:
        # A writing stage: items that already carry the written text (e.g. imported) skip it.
        qs = qs.exclude(payload__has_key=stages[index].done_marker)
    if index > 0 and stages[index - 1].done_marker:
        previous = stages[index - 1]
        qs = qs.filter(payload__has_key=previous.done_marker).exclude(
            annotations__annotator=user, annotations__stage=previous.name
        )
    return qs.order_by(F("live").desc(), "id")


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


def annotator_queue_key(project: Project, user: User) -> int:
    """The key of the annotator's queue lock in the project (a PostgreSQL advisory lock; one bigint, a key space
    apart from the two-int keys of the release builds' locks)."""
    return ((project.pk & 0x7FFFFFFF) << 32) | (user.pk & 0xFFFFFFFF)


def assignment_to_submit(project: Project, user: User, item_id: int, stage: str | None = None, *,
                         lock: bool = False, queue_lock: bool = False) -> Assignment | None:
    """The caller's latest assignment of the item that is not skipped (in ``stage`` when given), with its item
    (id, project, payload, gold flag and screening status loaded); ``lock`` locks the assignment row, and
    ``queue_lock`` on PostgreSQL takes the annotator's queue lock (:func:`annotator_queue_key`) in the same
    statement, when there is such an assignment."""
    if not _is_row_id(item_id):
        return None
    where = ["a.item_id = %s", "i.project_id = %s", "a.annotator_id = %s", "a.status <> %s"]
    params: list[Any] = [item_id, project.pk, user.pk, AssignmentStatus.SKIPPED.value]
    if stage:
        where.append("a.stage = %s")
        params.append(stage)
    extra = ""
    if queue_lock and connection.vendor == "postgresql":
        extra = ", pg_advisory_xact_lock(%s)"
        params.insert(0, annotator_queue_key(project, user))
    sql = (f"SELECT {_ASSIGNMENT_COLUMNS}, i.payload, i.is_gold_check, i.screening_status{extra}"
           f" FROM {_ASSIGNMENT} a JOIN {_ITEM} i ON i.id = a.item_id"
           f" WHERE {' AND '.join(where)} ORDER BY a.created_at DESC LIMIT 1")
    if lock and connection.features.has_select_for_update_of:
        sql += " FOR UPDATE OF a"
    found = fetch_instance(Assignment, sql, params)
    if found is None:
        return None
    assignment, (payload, is_gold_check, screening_status, *_locked) = found
    assignment.item = _item(assignment.item_id, project, payload, is_gold_check, screening_status)
    return assignment


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


_ANNOTATION_OF_SQL = (f"SELECT {columns(Annotation, 'n')} FROM {_ANNOTATION} n"
                      " WHERE n.item_id = %s AND n.annotator_id = %s AND n.stage = %s")


def annotation_of(item_id: int, user: User, stage: str) -> Annotation | None:
    """The caller's annotation of the item in the stage, if any (at most one: a unique constraint)."""
    found = fetch_instance(Annotation, _ANNOTATION_OF_SQL, [item_id, user.pk, stage])
    return None if found is None else found[0]


def _item(item_id: int, project: Project, payload: Any, is_gold_check: Any, screening_status: str) -> Item:
    """An item read by the SQL above: the fields the queue needs, the others deferred."""
    item = Item.from_db(connection.alias, ["id", "project_id", "payload", "is_gold_check", "screening_status"],
                        [item_id, project.pk, _PAYLOAD.from_db_value(payload, None, connection), bool(is_gold_check),
                         screening_status])
    item.project = project
    return item


def projects_with_roles(user: User) -> list[tuple[Project, str]]:
    """The user's projects with their role in each, in one query (the home page lists them all)."""
    if user.is_superuser:
        return [(project, "superuser") for project in Project.objects.all()]
    memberships = Membership.objects.filter(user=user).select_related("project").order_by("project__name")
    return [(m.project, m.role) for m in memberships]


def project_slug_taken(slug: str) -> bool:
    return Project.objects.filter(slug=slug).exists()


def user_by_username(username: str) -> User | None:
    return User.objects.filter(username=username).first()


def project_members(project: Project) -> QuerySet[Membership]:
    return (Membership.objects.filter(project=project).select_related("user")
            .order_by("role", "user__username"))


def guideline_versions(project: Project) -> QuerySet[Guideline]:
    return Guideline.objects.filter(project=project).select_related("created_by").order_by("-version")


def guideline_for_editing(project: Project) -> Guideline | None:
    """Where the editor starts: a draft newer than the current version, else the current version."""
    latest = Guideline.objects.filter(project=project).order_by("-version").first()
    if latest is None or latest.is_published:
        return current_guideline(project) or latest
    return latest


def project_items(project: Project, *, split: str | None = None,
                  screening_status: str | None = None) -> QuerySet[Item]:
    """Items with one annotation count per stage, as ``stage_<n>`` attributes (no per-row queries)."""
    qs = Item.objects.filter(project=project)
    if split is not None:
        qs = qs.filter(split=split)
    if screening_status:
        qs = qs.filter(screening_status=screening_status)
    counts = {
        f"stage_{index}": Count("annotations", filter=Q(annotations__stage=stage))
        for index, stage in enumerate(project.stage_names)
    }
    return qs.annotate(**counts).order_by("id")


# -- workspace ------------------------------------------------------------------------------------


def assignment_of(user: User, project: Project, assignment_id: int) -> Assignment | None:
    """One of the caller's own assignments in the project (never someone else's)."""
    return Assignment.objects.filter(pk=assignment_id, annotator=user, item__project=project).first()


def draft_for(assignment: Assignment) -> Draft | None:
    return Draft.objects.filter(assignment=assignment).first()


def acknowledgement_of_current(user: User, project: Project) -> GuidelineAcknowledgement | None:
    guideline = current_guideline(project)
    if guideline is None:
        return None
    return GuidelineAcknowledgement.objects.filter(user=user, guideline=guideline).select_related("guideline").first()


def audit_events(project: Project, *, object_type: str | None = None) -> QuerySet[AuditEvent]:
    """The project's audit trail, newest first; ``object_type`` (an ``AuditObject`` value) narrows it."""
    events = AuditEvent.objects.filter(project=project).select_related("actor")
    if object_type in AuditObject.values:
        events = events.filter(object_type=object_type)
    return events
