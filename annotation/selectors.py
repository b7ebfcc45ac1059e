"""Reads: every query that pages, the API and jobs need, in one place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from django.db import connection
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    F,
    IntegerField,
    Model,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.expressions import Col, RawSQL
from django.db.models.functions import Coalesce
from django.utils import timezone
from rest_framework.authtoken.models import Token

from .budget import budget_of, item_k, stage_k
from .gold.selectors import DECIDED_GOLD, releasable_items
from .models import (
    ANNOTATABLE_SCREENING,
    Annotation,
    Assignment,
    AssignmentStatus,
    AuditEvent,
    AuditObject,
    Draft,
    Flag,
    FlagResolution,
    GoldLabel,
    Guideline,
    GuidelineAcknowledgement,
    Item,
    ItemAssignee,
    Membership,
    Project,
    Role,
    User,
)

M = TypeVar("M", bound=Model)


def project_by_id(project_id: int) -> Project | None:
    """The project with this id, or ``None`` (the pages answer 404 to outsiders the same way)."""
    try:
        return Project.objects.get(pk=project_id)
    except Project.DoesNotExist:
        return None


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
# "Hot-path reads in SQL"); the SQL is plain enough for SQLite and PostgreSQL alike.
_PROJECT, _MEMBERSHIP, _GUIDELINE, _ACK = (m._meta.db_table for m in (Project, Membership, Guideline,
                                                                     GuidelineAcknowledgement))
_ITEM, _ASSIGNMENT, _ANNOTATION = (m._meta.db_table for m in (Item, Assignment, Annotation))


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
    count = len(model._meta.concrete_fields)
    return instance_from_row(model, row[:count]), tuple(row[count:])


def instance_from_row(model: type[M], row: Sequence[Any]) -> M:
    """An instance of ``model`` from the values of its :func:`columns` (a slice of a row), converted as
    :func:`fetch_instance` converts them."""
    fields = model._meta.concrete_fields
    values = list(row)
    key = (model, connection.vendor)
    if key not in _CONVERTED:  # which fields have converters does not change (the converters are per connection)
        cols = [(index, field.get_col(model._meta.db_table)) for index, field in enumerate(fields)]
        _CONVERTED[key] = [(index, col) for index, col in cols
                           if connection.ops.get_db_converters(col) or col.get_db_converters(connection)]
    for index, col in _CONVERTED[key]:
        for converter in connection.ops.get_db_converters(col) + col.get_db_converters(connection):
            values[index] = converter(values[index], col, connection)
    return model.from_db(connection.alias, [field.attname for field in fields], values)


def _access_columns(user: str) -> str:
    """The project ``p``'s columns and the access of the user ``user`` (an SQL expression) to it, read with
    ``_CURRENT_GUIDELINE``: its role, the current guideline and whether they acknowledged it."""
    return f"""{columns(Project, "p")},
  (SELECT m.role FROM {_MEMBERSHIP} m WHERE m.project_id = p.id AND m.user_id = {user}) AS access_role,
  g.id AS access_guideline, g.version AS access_guideline_version,
  EXISTS (SELECT 1 FROM {_ACK} a WHERE a.user_id = {user} AND a.guideline_id = g.id) AS access_acknowledged"""


# At most one current guideline per project (a unique constraint), so the join yields at most one row.
_CURRENT_GUIDELINE = f"LEFT JOIN {_GUIDELINE} g ON g.project_id = p.id AND g.is_current"
_ACCESS_SQL = f"SELECT {_access_columns('%s')} FROM {_PROJECT} p {_CURRENT_GUIDELINE} WHERE p.id = %s"


def project_with_access(project_id: int, user: User) -> tuple[Project, ProjectAccess] | None:
    """The project and the caller's :class:`ProjectAccess` in one query; ``None`` when there is no such project."""
    if not _is_row_id(project_id):
        return None
    found = fetch_instance(Project, _ACCESS_SQL, [user.pk, user.pk, project_id])
    if found is None:
        return None
    project, access = found
    return project, access_of(user, *access)


def access_of(user: User, role: str | None, guideline: int | None, version: int | None,
              acknowledged: Any) -> ProjectAccess:
    """The :class:`ProjectAccess` of the columns :data:`_ACCESS_SQL` (or the token's query,
    ``api/authentication.py``) reads after the project's."""
    if not user.is_authenticated:
        role = None
    elif user.is_superuser:
        role = "superuser"
    return ProjectAccess(role=role, guideline_id=guideline, guideline_version=version,
                         acknowledged=bool(acknowledged) or guideline is None)


_TOKEN_SQL = (f"SELECT {columns(User, 'u')}, t.created{{access}} FROM {User._meta.db_table} u"
              f" JOIN {Token._meta.db_table} t ON t.user_id = u.id{{joins}} WHERE t.key = %s")
_TOKEN_SQL_ALONE = _TOKEN_SQL.format(access="", joins="")
# The token with the project and the caller's access as _ACCESS_SQL reads them (NULLs without such a project).
_TOKEN_SQL_WITH_ACCESS = _TOKEN_SQL.format(access=f", {_access_columns('u.id')}",
                                           joins=f" LEFT JOIN {_PROJECT} p ON p.id = %s {_CURRENT_GUIDELINE}")
_PROJECT_COLUMN_COUNT = len(Project._meta.concrete_fields)


@dataclass(frozen=True)
class TokenOwner:
    """A token's user and when the token was issued; with ``project_id``, :func:`project_with_access` for it
    (``project`` ``None`` when there is no such project)."""

    user: User
    created: datetime
    project: tuple[Project, ProjectAccess] | None = None


def token_owner(key: str, project_id: int | None = None) -> TokenOwner | None:
    """The token's :class:`TokenOwner` in one query, ``None`` for an unknown key. An API request under
    ``/api/projects/{id}/`` reads the project with the token (``project_id``) instead of in a query of its own."""
    if project_id is not None and not _is_row_id(project_id):
        project_id = None
    if project_id is None:
        found = fetch_instance(User, _TOKEN_SQL_ALONE, [key])
        return None if found is None else TokenOwner(found[0], found[1][0])
    found = fetch_instance(User, _TOKEN_SQL_WITH_ACCESS, [project_id, key])
    if found is None:
        return None
    user, (created, *rest) = found
    project_row, access = rest[:_PROJECT_COLUMN_COUNT], rest[_PROJECT_COLUMN_COUNT:]
    if project_row[0] is None:
        return TokenOwner(user, created, None)
    return TokenOwner(user, created, (instance_from_row(Project, project_row), access_of(user, *access)))


def access_to(project: Project, user: User) -> ProjectAccess:
    """The caller's :class:`ProjectAccess` for a project already in hand (one query)."""
    found = project_with_access(project.pk, user)
    if found is None:
        raise Project.DoesNotExist(f"project {project.pk} no longer exists")
    return found[1]


def current_guideline(project: Project) -> Guideline | None:
    return Guideline.objects.filter(project=project, is_current=True).first()


def has_acknowledged_current(user: User, project: Project) -> bool:
    guideline = current_guideline(project)
    if guideline is None:
        return True
    return GuidelineAcknowledgement.objects.filter(user=user, guideline=guideline).exists()


_PAYLOAD = Item._meta.get_field("payload")


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


def stage_complete(project: Project, stage: str, annotations: Any, item_ids: Any = None) -> Any:
    """The one definition of "complete": an item's stage is complete when it has k annotations in that stage
    (k = the item's under the project's budget, :func:`stage_needed`), imported corpus annotations included.

    ``annotations`` is an item's count of annotations in the stage, or an array of counts (numpy or pandas),
    answered element by element; ``item_ids`` the item (or array of items) they count, needed only when the
    budget gives items different k. Progress, agreement and the release card count with this rule, as the queue
    does when it hands out places.
    """
    return annotations >= stage_needed(project, stage, item_ids)


def stage_needed(project: Project, stage: str, item_ids: Any = None) -> Any:
    """The k of ``item_ids`` (an id or a numpy array of ids) in the stage: one number when every item has the
    same (a uniform budget, a stage with a fixed number), else an array aligned with ``item_ids``."""

    budget = budget_of(project)
    fixed = project.task.stage(stage).annotators
    if fixed is not None or budget.uniform:
        return fixed or budget.default
    if item_ids is None:
        raise ValueError("the project's budget gives items different k: pass the items")
    needed = budget_ks(project, item_ids)
    return int(needed) if needed.ndim == 0 else needed


def budget_ks(project: Project, item_ids: Any) -> Any:
    """The budget's k of each of ``item_ids`` (a numpy array, or one id), as a numpy array of their shape: the
    project's items' k read in one query (items not in the project get the project's k)."""
    import numpy as np

    budget = budget_of(project)
    ids = np.asarray(item_ids, dtype=np.int64)
    if budget.uniform:
        return np.full(ids.shape, budget.default, dtype=np.int64)
    known = np.array(Item.objects.filter(project=project).annotate(k=item_k(budget)).order_by("pk")
                     .values_list("pk", "k"), dtype=np.int64).reshape(-1, 2)
    if not len(known):
        return np.full(ids.shape, budget.default, dtype=np.int64)
    at = np.clip(np.searchsorted(known[:, 0], ids), 0, len(known) - 1)
    return np.where(known[at, 0] == ids, known[at, 1], budget.default)


def project_progress(project: Project) -> dict[str, object]:
    """Items and annotations per stage, for managers (never shown to annotators)."""
    import numpy as np

    items = Item.objects.filter(project=project)
    total = items.count()
    by_screening = dict(items.values_list("screening_status").annotate(n=Count("id")).order_by())
    stages = []
    for stage in project.stage_names:
        per_item = list(
            Annotation.objects.filter(item__project=project, stage=stage)
            .values("item_id")
            .annotate(n=Count("id"))
            .values_list("item_id", "n")
        )
        counts = [n for _item, n in per_item]
        complete = stage_complete(project, stage, np.array(counts, dtype=np.int64),
                                  np.array([item for item, _n in per_item], dtype=np.int64))
        stages.append({
            "stage": stage,
            "needed_per_item": project.annotations_needed(stage),
            "annotations": sum(counts),
            "items_started": len(counts),
            "items_complete": int(np.count_nonzero(complete)) if len(counts) else 0,
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
    """The annotator's own counts: done, skipped, and what is still open to them: the items the queue could
    still give them plus the ones they hold a live lease on (the item on screen), so the count is the same
    before the workspace takes its first item and after each submission."""
    mine = Assignment.objects.filter(item__project=project, annotator=user)
    done = mine.filter(status=AssignmentStatus.SUBMITTED).count()
    skipped = mine.filter(status__in=[AssignmentStatus.SKIPPED, AssignmentStatus.FLAGGED]).count()
    leased = mine.filter(status=AssignmentStatus.LEASED, lease_expires_at__gt=timezone.now()).count()
    remaining = leased + sum(eligible_items(project, user, stage).count() for stage in project.stage_names)
    return {"done": done, "skipped": skipped, "remaining": remaining}


def items_held_by_others(project: Project, user: User) -> int:
    """Items the annotator could still be given but not now, because other annotators' live leases hold their last
    places: when a lease runs out, the item comes back to the queue. The workspace tells this apart from being
    done."""
    return sum(
        eligible_items(project, user, stage, leases_hold=False)
        .exclude(pk__in=eligible_items(project, user, stage).values("pk")).count()
        for stage in project.stage_names
    )


def next_project_with_work(user: User, *, after: Project) -> Project | None:
    """The annotator's next project (in the home page's order) whose queue has an item for them now."""
    projects = [p for p, role in projects_with_roles(user) if role == Role.ANNOTATOR and p.pk != after.pk]
    return next((p for p in projects
                 if any(eligible_items(p, user, stage).exists() for stage in p.stage_names)), None)


def _count_of(queryset: QuerySet) -> Coalesce:
    """``count(*)`` of a queryset filtered on an outer item, as a subquery (0 when it has no rows)."""
    return Coalesce(Subquery(queryset.values("item").annotate(n=Count("id")).values("n"), output_field=IntegerField()),
                    Value(0))


def _live_count(item_ref: Any, stage: str, now: Any, *, leases_hold: bool = True) -> Any:
    """The item's taken places in the stage: live assignments and imported annotations (see
    :func:`queue_sql.places_held`); without ``leases_hold``, only the submitted ones."""
    held = live_assignments(now=now) if leases_hold else Assignment.objects.filter(status=AssignmentStatus.SUBMITTED)
    return (_count_of(held.filter(item=item_ref, stage=stage))
            + _count_of(Annotation.objects.filter(item=item_ref, stage=stage, imported=True)))


def eligible_items(project: Project, user: User, stage: str, *, leases_hold: bool = True) -> QuerySet[Item]:
    """Items this annotator may receive in this stage, closest to completion first: the queue's rules with the
    ORM (the take reads the same rules in SQL, :func:`annotation.queue_sql.queue_candidate`).

    Never an item they already had in this stage (except their own expired lease), never one whose k places
    are taken (live assignments and imported annotations), never an item whose previous stage is unfinished, and never a
    hypothesis or question they wrote themselves. ``leases_hold=False`` counts only finished places: the items the
    annotator could get once others' leases run out.
    """
    now = timezone.now()
    qs = (
        annotatable_items(project)
        .exclude(assignments__in=Assignment.objects.filter(annotator=user, stage=stage)
                 .exclude(status=AssignmentStatus.EXPIRED))
        .filter(open_to(user))
        .annotate(live=_live_count(OuterRef("pk"), stage, now, leases_hold=leases_hold),
                  needed=stage_k(project, budget_of(project), stage))
        .filter(live__lt=F("needed"))
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


def open_to(user: User) -> Q:
    """Items the annotator may be given: those no manager assigned to chosen annotators, and those assigned to
    them (the take's rule in SQL: :func:`annotation.queue_sql.queue_candidate`)."""
    return ~Exists(ItemAssignee.objects.filter(item=OuterRef("pk"))) | Exists(
        ItemAssignee.objects.filter(item=OuterRef("pk"), annotator=user))


def item_needed(project: Project, item_id: int, stage: str) -> int:
    """The item's k in the stage under the project's budget (what its slot's ``needed`` holds)."""
    return Item.objects.filter(pk=item_id).annotate(k=stage_k(project, budget_of(project), stage)
                                                    ).values_list("k", flat=True).get()


def budget_summary(project: Project) -> dict[str, Any]:
    """The project's budget as stored, how many items get each k under it, and the assigned items per annotator."""
    stored = (project.options or {}).get("budget") or {}
    budget = budget_of(project)
    by_k = (Item.objects.filter(project=project).annotate(k=item_k(budget)).values("k").annotate(n=Count("id"))
            .order_by("k").values_list("k", "n"))
    return {"default": budget.default, "splits": stored.get("splits", {}), "rules": stored.get("rules", []),
            "items_by_k": {str(k): n for k, n in by_k}, "assignees": assignee_counts(project)}


def source_names(project: Project) -> list[str]:
    """The names of the project's sources (what a budget rule's ``source`` may name)."""
    return list(project.sources.order_by("name").values_list("name", flat=True))


def assignee_counts(project: Project) -> list[dict[str, Any]]:
    """Per annotator, how many of the project's items are assigned to them."""
    rows = (ItemAssignee.objects.filter(item__project=project).values("annotator__username")
            .annotate(items=Count("item_id")).order_by("annotator__username"))
    return [{"annotator": row["annotator__username"], "items": row["items"]} for row in rows]


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


_ANNOTATION_OF_SQL = {
    # The caller's annotation joined to a one-row table, so that the row exists without one and can carry the
    # reserved id (the CASE evaluates nextval only when there is no annotation).
    "postgresql": (f"SELECT {columns(Annotation, 'n')},"
                   f" CASE WHEN n.id IS NULL THEN nextval(pg_get_serial_sequence('{_ANNOTATION}', 'id')) END"
                   f" FROM (SELECT 1 AS one) q LEFT JOIN {_ANNOTATION} n"
                   " ON n.item_id = %s AND n.annotator_id = %s AND n.stage = %s"),
    "other": (f"SELECT {columns(Annotation, 'n')} FROM {_ANNOTATION} n"
              " WHERE n.item_id = %s AND n.annotator_id = %s AND n.stage = %s"),
}


def annotation_to_write(item_id: int, user: User, stage: str) -> Annotation:
    """The caller's annotation of the item in the stage (at most one: a unique constraint), else a new one
    (unsaved: ``_state.adding``) for the item, the caller and the stage.

    On PostgreSQL the new one's id is reserved here, so that its audit event can name it in the statement that
    inserts it (``rows.with_writes``); elsewhere the INSERT assigns it."""
    postgres = connection.vendor == "postgresql"
    found = fetch_instance(Annotation, _ANNOTATION_OF_SQL["postgresql" if postgres else "other"],
                           [item_id, user.pk, stage])
    if found is not None and found[0].pk is not None:
        return found[0]
    return Annotation(pk=found[1][0] if postgres and found is not None else None, item_id=item_id, annotator=user,
                      stage=stage)


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


def project_by_slug(slug: str) -> Project | None:
    """The project with this slug, or ``None`` (the commands name projects by slug)."""
    return Project.objects.filter(slug=slug).first()


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


def items_in(project: Project) -> QuerySet[Item]:
    """The project's items, for looking one up by id (managers' pages and API; annotators reach items only
    through their assignments)."""
    return Item.objects.filter(project=project)


#: The longest text an item search takes (pages and API): a search is a substring match, not a document.
SEARCH_MAX_CHARS = 200

# A text field matches when it contains the pattern; a turn field (``TaskType.turn_fields``, a WoS dialogue)
# when one of its turns' ``text`` does. Field names and the pattern are parameters. ``{like}`` is LIKE or
# ILIKE (PostgreSQL): ILIKE costs twice as much, and a search without cased letters (Korean, digits) does not
# need it.
_TEXT_MATCH_SQL = {
    "postgresql": "{t}.payload ->> %s::text {like} %s",
    "sqlite": "json_extract({t}.payload, %s) LIKE %s ESCAPE '\\'",
}
_TURN_MATCH_SQL = {
    "postgresql": (
        "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof({t}.payload -> %s::text) = 'array'"
        " THEN {t}.payload -> %s::text ELSE '[]'::jsonb END) AS turn(value) WHERE turn.value ->> 'text' {like} %s)"),
    "sqlite": (
        "EXISTS (SELECT 1 FROM json_each({t}.payload, %s) AS turn WHERE json_type({t}.payload, %s) = 'array'"
        " AND turn.type = 'object' AND json_extract(turn.value, '$.text') LIKE %s ESCAPE '\\')"),
}


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def items_matching(items: QuerySet[Item], project: Project, text: str) -> QuerySet[Item]:
    """The items whose annotator-visible text (the task type's ``text_fields``) contains ``text``, ignoring
    case; any substring, so a Korean word matches inside a longer eojeol (서울 in 서울시청에서). A scan of the
    project's items, not an index: most Korean searches are one or two syllables, shorter than the trigrams an
    index would hold (docs/agreement.md, "Search and triage")."""
    text = text.strip()[:SEARCH_MAX_CHARS]
    if not text:
        return items
    vendor = "postgresql" if connection.vendor == "postgresql" else "sqlite"
    table = connection.ops.quote_name(Item._meta.db_table)
    like = "LIKE" if text.lower() == text.upper() else "ILIKE"
    pattern = _like_pattern(text)
    clauses, params = [], []
    task = project.task
    for name in task.text_fields:
        key = name if vendor == "postgresql" else f'$."{name}"'
        if name in task.turn_fields:
            clauses.append(_TURN_MATCH_SQL[vendor].format(t=table, like=like))
            params += [key, key, pattern]
        else:
            clauses.append(_TEXT_MATCH_SQL[vendor].format(t=table, like=like))
            params += [key, pattern]
    return items.filter(RawSQL("(" + " OR ".join(clauses) + ")", params, output_field=BooleanField()))


def item_list(project: Project, *, split: str | None = None, screening_status: str | None = None,
              external_id: str | None = None, text: str = "") -> QuerySet[Item]:
    """The project's items with their source, narrowed by each filter given (``""`` matches the empty value;
    ``None`` does not filter) and by a text search (:func:`items_matching`), in id order (the items API)."""
    filters = {name: value for name, value in (("split", split), ("screening_status", screening_status),
                                               ("external_id", external_id)) if value is not None}
    return items_matching(items_in(project).select_related("source").filter(**filters), project, text)


def item_annotation(item: Item, annotation_id: int) -> Annotation | None:
    """One annotation of the item, by id, for its managers (adjudication); ``None`` when it is not on the item."""
    return Annotation.objects.filter(pk=annotation_id, item=item).first()


def project_items(project: Project, *, split: str | None = None,
                  screening_status: str | None = None, text: str = "") -> QuerySet[Item]:
    """Items with one annotation count per stage, as ``stage_<n>`` attributes (no per-row queries), narrowed
    by a text search (:func:`items_matching`)."""
    qs = items_matching(Item.objects.filter(project=project), project, text)
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


def own_annotations(user: User, project: Project) -> QuerySet[Annotation]:
    """The caller's own submissions in the project (never anyone else's, never a corpus's), most recently
    changed first, each with its item and ``gold_decided``: whether its item's gold was decided (then it can no
    longer be revised, ``gold.selectors.DECIDED_GOLD``)."""
    return (Annotation.objects.filter(item__project=project, annotator=user, imported=False)
            .select_related("item", "guideline", "annotator")
            .annotate(gold_decided=Exists(GoldLabel.objects.filter(item=OuterRef("item_id"),
                                                                   status__in=DECIDED_GOLD)))
            .order_by("-updated_at", "-id"))


def assignments_of(user: User, project: Project) -> QuerySet[Assignment]:
    """The caller's own assignments in the project (their queue history), never anyone else's."""
    return Assignment.objects.filter(item__project=project, annotator=user)


def was_assigned(user: User, item: Item) -> bool:
    """Whether the item was ever assigned to the user (an annotator flags only such items)."""
    return Assignment.objects.filter(item=item, annotator=user).exists()


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
