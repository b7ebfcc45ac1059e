"""Annotation budgets (``annotation.budget``) written into the queue, and the items a manager assigns to chosen
annotators (``ItemAssignee``).

The take compares each slot's ``live`` with its ``needed``; this module keeps ``needed`` equal to the budget's k
for the item whenever the budget, the project's k or an item's split or source changes. Raising a k reopens the
items below it (their slots have free places again); lowering one deletes nothing: annotations and live leases
stay, and an item counts as complete once it holds its new k.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Count, F, IntegerField, OuterRef, QuerySet, Subquery
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from ..audit import audit_record
from ..budget import Budget, Rule, budget_of, budget_problem, item_k, rule_condition, stage_k
from ..models import AuditObject, Item, ItemAssignee, Membership, Project, QueueSlot, Role, User
from .errors import ServiceError


def _writers(project: Project) -> int:
    """1 when a stage's writer may not also label the item (the NLI writer does not validate), else 0."""
    return int(any(stage.done_marker for stage in project.task.stages))


def queue_needed_refresh(project: Project, *, items: QuerySet[Item] | None = None) -> int:
    """Write the budget's k into the project's slots (of ``items`` only, when given) where it differs; returns
    how many slots changed. Called in the transaction of the change that moves a k."""
    budget = budget_of(project)
    changed = 0
    for stage in project.stage_names:
        k = Subquery(Item.objects.filter(pk=OuterRef("item_id")).annotate(k=stage_k(project, budget, stage))
                     .values("k")[:1], output_field=IntegerField())
        slots = QueueSlot.objects.filter(project=project, stage=stage)
        if items is not None:
            slots = slots.filter(item__in=items.values("pk"))
        changed += slots.annotate(k=k).exclude(needed=k).update(needed=k)
    return changed


def _over_capacity(project: Project, budget: Budget, items: QuerySet[Item]) -> tuple[int, int, int] | None:
    """(items, k, assignees) of the assigned items whose k exceeds what their assignees can give, or None."""
    writers = _writers(project)
    short = (items.filter(assignees__isnull=False).annotate(n=Count("assignees"), k=item_k(budget))
             .filter(k__gt=F("n") - writers).values_list("k", "n"))
    found = list(short[:1])
    if not found:
        return None
    return short.count(), found[0][0], found[0][1]


def budget_capacity_check(project: Project, budget: Budget) -> None:
    """Refuse a budget (or project k) that would ask more of an assigned item than its assignees can give."""
    over = _over_capacity(project, budget, Item.objects.filter(project=project))
    if over is not None:
        count, k, n = over
        raise ServiceError(ngettext(
            "%(count)d item is assigned to %(n)d annotators but would need %(k)d; assign more annotators to it "
            "or give it a smaller k.",
            "%(count)d items are assigned to too few annotators (one to %(n)d but would need %(k)d); assign more "
            "annotators to them or give them a smaller k.", count) % {"count": count, "n": n, "k": k},
            code="conflict", field="options.budget")


# -- assigning items to annotators ----------------------------------------------------------------


def items_chosen(project: Project, *, item_ids: list[int] | None = None,
                 where: dict[str, Any] | None = None) -> QuerySet[Item]:
    """The project's items a manager chose: by id, or by a budget rule's conditions (``split``, ``sample`` with
    ``seed``, ``source``, ``label``) without its k. Unknown ids or a bad condition are refused."""
    if (item_ids is None) == (where is None):
        raise ServiceError(_("choose the items either by id (items) or by conditions (where), not both"),
                           field="items")
    items = Item.objects.filter(project=project)
    if item_ids is not None:
        if not isinstance(item_ids, list) or not item_ids or not all(
                isinstance(i, int) and not isinstance(i, bool) for i in item_ids):
            raise ServiceError(_("items must be a non-empty list of item ids"), field="items")
        found = set(items.filter(pk__in=item_ids).values_list("pk", flat=True))
        missing = [i for i in item_ids if i not in found]
        if missing:
            raise ServiceError(_("no item %(ids)s in this project") % {"ids": ", ".join(map(str, missing[:5]))},
                               code="not_found", field="items")
        return items.filter(pk__in=item_ids)
    if not isinstance(where, dict):
        raise ServiceError(_("where must be an object of conditions; got %(value)r") % {"value": where},
                           field="where")
    problem = budget_problem({"rules": [{**where, "k": 1}]})
    if problem is not None:
        raise ServiceError(problem[1], field=problem[0].replace("budget.rules[0]", "where"))
    rule = Rule(k=1, split=where.get("split"), sample=where.get("sample"), seed=where.get("seed", 0),
                source=where.get("source"), label=where.get("label"))
    return items.filter(rule_condition(rule, ""))


@transaction.atomic
def items_assign(*, project: Project, items: QuerySet[Item], annotators: list[str], by: User | None) -> int:
    """Give ``items`` exactly these annotators (usernames of the project's annotators), replacing the ones they
    had; an empty list makes them open to every annotator again. Returns how many items changed hands.

    Work already done stays: annotations and live leases of others are kept, and count towards k. Refused when
    an item's k is more than its annotators can give (the NLI writer cannot validate their own hypothesis)."""
    Project.objects.select_for_update().get(pk=project.pk)  # against a budget change checking the same items
    if not isinstance(annotators, list) or not all(isinstance(name, str) for name in annotators):
        raise ServiceError(_("annotators must be a list of usernames"), field="annotators")
    members = dict(Membership.objects.filter(project=project, role=Role.ANNOTATOR, user__username__in=annotators)
                   .values_list("user__username", "user_id"))
    unknown = [name for name in annotators if name not in members]
    if unknown:
        raise ServiceError(_("%(names)s is not an annotator of this project") % {"names": ", ".join(unknown)},
                           field="annotators")
    ids = list(items.order_by("pk").values_list("pk", flat=True))
    if not ids:
        raise ServiceError(_("no item matches"), field="items")
    chosen = sorted(set(members.values()))
    if chosen:
        needed = max(items.annotate(k=item_k(budget_of(project))).values_list("k", flat=True))
        if needed + _writers(project) > len(chosen):
            raise ServiceError(ngettext(
                "these items need %(k)d annotators each; choose at least %(need)d (%(n)d chosen)",
                "these items need %(k)d annotators each; choose at least %(need)d (%(n)d chosen)", needed)
                % {"k": needed, "need": needed + _writers(project), "n": len(chosen)}, field="annotators")
    ItemAssignee.objects.filter(item_id__in=ids).delete()
    ItemAssignee.objects.bulk_create([ItemAssignee(item_id=item_id, annotator_id=user_id, assigned_by=by)
                                      for item_id in ids for user_id in chosen], batch_size=5000)
    names = sorted(name for name, user_id in members.items() if user_id in chosen)
    audit_record(project=project, actor=by, object_type=AuditObject.ASSIGNEES, object_id=None,
                 action="assign" if chosen else "unassign",
                 after={"items": len(ids), "first_item": ids[0], "last_item": ids[-1], "annotators": names})
    return len(ids)
