"""The queue's rules, written twice — in SQL for the take (``annotation.queue_sql.queue_candidate``, read from
the maintained counter) and with the ORM for counts (``selectors.eligible_items``) — stay the same rules:
hypothesis builds random projects (task type with one or two stages, k, a budget by split and sample, items
assigned to chosen annotators, screening, flags, leases live and run out, submissions, skips, imported annotations,
writing done or not, queue order and priorities) and both must offer every annotator the same items, the same one
first. Runs on SQLite and on PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from itertools import count

import pytest
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation import services
from annotation.models import (
    UNSET_PRIORITY_LAST,
    Annotation,
    Assignment,
    AssignmentStatus,
    Flag,
    FlagKind,
    FlagResolution,
    Item,
    ItemAssignee,
    Project,
    QueueSlot,
    ScreeningStatus,
    User,
)
from annotation.queue_sql import queue_candidate
from annotation.selectors import eligible_items

pytestmark = pytest.mark.django_db

_UNSET = UNSET_PRIORITY_LAST.get_source_expressions()[1].value
_serial = count()
#: Choices are listed with the telling ones first (annotatable, k above 1, an imported annotation): hypothesis
#: leans towards the first, and order among items shows only when their counts differ.
_SCREENING = [ScreeningStatus.CLEAR, ScreeningStatus.KEPT, ScreeningStatus.NEEDS_REVIEW, ScreeningStatus.PENDING,
              ScreeningStatus.DROPPED]
#: What an annotator may have done with an item in a stage (None: nothing, as often as all the rest, so that
#: most items stay open to most annotators and the order among them is tested).
_HISTORY = [None] * 6 + ["live", "ran_out", AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED,
                         AssignmentStatus.FLAGGED, AssignmentStatus.EXPIRED]


def _random_project(data: st.DataObject) -> tuple[Project, list[User]]:
    n = next(_serial)
    task_type = data.draw(st.sampled_from(["tc", "nli"]), label="task type")
    project = services.project_create(name=f"queue {n}", slug=f"queue-sql-{n}", task_type=task_type, created_by=None,
                                      annotators_per_item=data.draw(st.sampled_from([3, 2, 1]), label="k"))
    people = [User.objects.create(username=f"queue-{n}-{i}") for i in range(3)]
    corpus = [User.objects.create(username=f"queue-{n}-corpus-{i}", is_imported=True) for i in range(2)]
    now = timezone.now()
    items = []
    for i in range(data.draw(st.integers(1, 6), label="items")):
        payload = {"title": f"기사 {i}"} if task_type == "tc" else {"premise": f"전제 {i}"}
        if task_type == "nli" and data.draw(st.booleans(), label="written"):
            payload["hypothesis"] = f"가설 {i}"
        items.append(Item.objects.create(project=project, payload=payload, external_id=f"q{i}",
                                         split=data.draw(st.sampled_from(["dev", "train", ""]), label="split"),
                                         screening_status=data.draw(st.sampled_from(_SCREENING))))
        assignees = data.draw(st.sampled_from([(), (), (0, 1), (1, 2, 0)]), label="assigned to")
        ItemAssignee.objects.bulk_create([ItemAssignee(item=items[-1], annotator=people[j]) for j in assignees])
    # Newest item first, so that the draws hypothesis prefers give later items more places taken than earlier
    # ones: then "closest to completion first" and "oldest first" disagree.
    for item in reversed(items):
        flag = data.draw(st.sampled_from([None, FlagResolution.KEPT, FlagResolution.OPEN]), label="flag")
        if flag:
            Flag.objects.create(item=item, kind=FlagKind.OTHER, resolution=flag)
        for stage in project.stage_names:
            for person in people:
                history = data.draw(st.sampled_from(_HISTORY), label="history")
                if history is None:
                    continue
                leased = history in ("live", "ran_out")
                Assignment.objects.create(
                    item=item, annotator=person, stage=stage,
                    status=AssignmentStatus.LEASED if leased else history,
                    lease_expires_at=now + (timedelta(hours=1) if history == "live" else timedelta(hours=-1)))
                if history == AssignmentStatus.SUBMITTED:
                    Annotation.objects.create(item=item, annotator=person, stage=stage, payload={})
            for person in corpus[:data.draw(st.sampled_from([1, 0, 2]), label="imported annotations")]:
                Annotation.objects.create(item=item, annotator=person, stage=stage, payload={}, imported=True)
    budget = data.draw(st.sampled_from([None, {"splits": {"dev": 3, "train": 1}},
                                        {"splits": {"train": 2}, "rules": [{"k": 1, "sample": 0.5, "seed": 3}]}]),
                       label="budget")
    if budget is not None:  # half of the slots made before the budget, half after
        services.queue_slots_ensure(project, project.stage_names[0])
        project.options = {**project.options, "budget": budget}
        project.save(update_fields=["options"])
        services.queue_needed_refresh(project)
    for stage in project.stage_names:
        services.queue_slots_ensure(project, stage)
    if data.draw(st.booleans(), label="uncertainty order"):
        project.options = {**project.options, "queue_order": "uncertainty"}
        project.save(update_fields=["options"])
        ids = list(project.items.values_list("id", flat=True))
        services.queue_priority_set(project, {item_id: data.draw(st.none() | st.sampled_from([0.1, 0.5, 0.9]))
                                              for item_id in ids})
    services.assignments_expire()  # the take expires run-out leases before it chooses
    return project, people


def _take_order(project: Project, person: User, stage: str) -> list[int]:
    """Every item the take would hand ``person``, in its order: take the first candidate, fill its slot so it
    is no candidate any more, again (inside a savepoint, rolled back)."""
    order: list[int] = []
    with transaction.atomic():
        while (candidate := queue_candidate(project, person, stage)) is not None:
            order.append(candidate.item.pk)
            QueueSlot.objects.filter(pk=candidate.slot_id).update(live=F("needed"))
        transaction.set_rollback(True)
    return order


def _expected_order(orm: list[int], priority: dict[int, float | None], uncertainty: bool) -> list[int]:
    if uncertainty:  # highest priority first, unset last, then the item id
        return sorted(orm, key=lambda i: (-(priority[i] if priority[i] is not None else _UNSET), i))
    return orm  # closest to completion first, then the item id: as the ORM orders them


@settings(max_examples=100, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_the_sql_queue_offers_what_the_orm_rules_offer(data: st.DataObject) -> None:
    with transaction.atomic():
        project, people = _random_project(data)
        uncertainty = project.options.get("queue_order") == "uncertainty"
        for stage in project.stage_names:
            slots = list(QueueSlot.objects.filter(project=project, stage=stage)
                         .values_list("id", "item_id", "priority"))
            priority = {item_id: value for _slot, item_id, value in slots}
            for person in people:
                orm = list(eligible_items(project, person, stage).values_list("id", flat=True))
                offered = {item_id for slot, item_id, _p in slots
                           if queue_candidate(project, person, stage, slot_id=slot) is not None}
                assert offered == set(orm), (stage, person.username)
                assert _take_order(project, person, stage) == _expected_order(orm, priority, uncertainty), \
                    (stage, person.username)
        transaction.set_rollback(True)
