"""Projects, their members and guidelines."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext as _

from ..audit import audit_record
from ..budget import budget_of, project_budget_problem
from ..models import (
    Annotation,
    Assignment,
    AssignmentStatus,
    AuditObject,
    Guideline,
    GuidelineAcknowledgement,
    Membership,
    Project,
    Role,
    User,
)
from ..selectors import (
    current_guideline,
)
from ..task_types import LABEL_NAMES, get_task_type
from .budgets import budget_capacity_check, queue_needed_refresh
from .errors import ServiceError
from .queue import assignments_close

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
    from ..project_settings import label_schema_validate, options_validate  # it imports ServiceError

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
        change_note=gettext("Template guideline"), created_by=created_by,
    )
    guideline_publish(guideline=guideline, by=created_by)
    return project


#: What may change after a project is made; its task type shapes every item, annotation and gold label.
PROJECT_EDITABLE = ("name", "slug", "description", "annotators_per_item", "label_schema", "options")


def annotation_count(project: Project) -> int:
    """The project's annotations (imported ones included): once there is one, its labels are in use."""
    return Annotation.objects.filter(item__project=project).count()


def project_locks(project: Project, *, annotations: int | None = None) -> dict[str, str]:
    """What cannot change now, each with the reason a manager reads: the task type always; once annotation
    has started, the label schema beyond new labels, display names and gold settings (a removed or renamed
    label, a changed score range or ontology would leave stored annotations outside the schema)."""
    locks = {"task_type": _("The task type shapes every item, annotation and gold label; make a new project "
                            "for another task type.")}
    count = annotation_count(project) if annotations is None else annotations
    if count:
        locks["label_schema"] = ngettext(
            "Annotation has started (%(n)d annotation uses these labels): labels cannot be removed or renamed, "
            "and the rest of the schema cannot change. New labels and display names can still be added.",
            "Annotation has started (%(n)d annotations use these labels): labels cannot be removed or renamed, "
            "and the rest of the schema cannot change. New labels and display names can still be added.",
            count) % {"n": count}
    return locks


def _schema_change_refused(project: Project, new: dict[str, Any], reason: str) -> None:
    """Refuse (``ServiceError`` naming the field) a schema change beyond what stays safe once annotated: new
    labels appended to the task's label list, display names and the gold settings."""
    from ..project_settings import GOLD_KEYS  # it imports ServiceError

    old = project.label_schema or {}
    free = {LABEL_NAMES, *GOLD_KEYS}
    task = project.task
    for key in sorted((old.keys() | new.keys()) - free):
        before, after = old.get(key), new.get(key)
        if key == task.label_list and isinstance(before, list) and isinstance(after, list) \
                and after[:len(before)] == before:
            continue
        if before != after:
            if key == task.label_list and isinstance(before, list) and isinstance(after, list):
                gone = [value for value in before if value not in after]
                if gone:
                    reason = _("%(labels)s cannot be removed or renamed: %(reason)s") % {
                        "labels": ", ".join(map(str, gone)), "reason": reason}
            raise ServiceError(reason, code="conflict", field=f"label_schema.{key}")


def _changed(stored: Project, changes: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in changes.items() if getattr(stored, name) != value}


def project_changes_checked(project: Project, changes: dict[str, Any]) -> dict[str, Any]:
    """``changes`` (field → new value) as :func:`project_update` stores them, or ``ServiceError`` naming the
    field: a field that never changes, a label schema change that annotation has locked (``conflict``, with
    the reason), invalid options or schema. Only what differs from ``project`` is kept. The API's serializer
    calls it too, to key an invalid field like its other errors."""
    from ..project_settings import label_schema_validate, options_validate  # it imports ServiceError

    for name in changes:
        if name not in PROJECT_EDITABLE:
            reason = project_locks(project, annotations=0).get(name, _("it is fixed when the project is made"))
            raise ServiceError(_("%(field)s cannot be changed once the project exists: %(reason)s")
                               % {"field": name, "reason": reason}, field=name)
    changes = _changed(project, changes)
    if isinstance(changes.get("label_schema"), dict):
        # Before the schema's own checks: a label removed once annotated is refused for that reason.
        reason = project_locks(project).get("label_schema")
        if reason:
            _schema_change_refused(project, changes["label_schema"], reason)
    if "options" in changes:
        changes = {**changes, "options": options_validate(changes["options"])}
    if "label_schema" in changes:
        changes = {**changes, "label_schema": label_schema_validate(changes["label_schema"],
                                                                    task_type=project.task_type)}
    if "annotators_per_item" in changes and int(changes["annotators_per_item"]) < 1:
        raise ServiceError("annotators_per_item must be at least 1", field="annotators_per_item")
    if "options" in changes:
        problem = project_budget_problem(project, (changes["options"] or {}).get("budget"))
        if problem is not None:
            raise ServiceError(problem[1], field=f"options.{problem[0]}")
    return changes


@transaction.atomic
def project_update(*, project: Project, changes: dict[str, Any], by: User | None = None) -> Project:
    """Change a project's settings (:func:`project_changes_checked`: validated as on creation, and what
    annotation has locked refused with the reason) and audit the change with the values before and after.
    The API's PATCH and the settings page both call it."""
    from .suggestions import queue_priorities_refresh

    # One change at a time, checked against the stored row (the admin hands over an instance already changed).
    stored = Project.objects.select_for_update().get(pk=project.pk)
    changes = project_changes_checked(stored, changes)
    if not changes:
        return project
    before = {name: getattr(stored, name) for name in changes}
    old_order = (stored.options or {}).get("queue_order")
    old_budget = budget_of(stored)
    for name, value in changes.items():
        setattr(project, name, value)
    if budget_of(project) != old_budget:
        budget_capacity_check(project, budget_of(project))
    project.save(update_fields=[*changes, "updated_at"])
    if budget_of(project) != old_budget:
        queue_needed_refresh(project)
    audit_record(project=project, actor=by, object_type=AuditObject.PROJECT, object_id=project.pk,
                 action="update", before=before, after=dict(changes))
    if (project.options or {}).get("queue_order") == "uncertainty" != old_order:
        transaction.on_commit(lambda: queue_priorities_refresh(project))
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
    assignments_close(Assignment.objects.filter(
        item__project_id=membership.project_id, annotator_id=membership.user_id,
        status=AssignmentStatus.LEASED,
    ), AssignmentStatus.EXPIRED)
    membership.delete()
