"""Annotation budgets under twenty annotators asking for work at once, on PostgreSQL: each item ends with exactly its
own k (by split, by a seeded sample, on items assigned to chosen annotators), assigned items reach their annotators
alone, no annotator gets an item twice, and no request fails. Raising a budget while they work reopens items, and
they are completed to the new k. The threads follow ``test_queue_concurrency.py``; SQLite serialises writers, so
the test skips there."""

from __future__ import annotations

import threading
from collections import Counter, defaultdict

import pytest
from django.db import connection, connections

from annotation import services
from annotation.budget import budget_of
from annotation.models import SLOT_HOLDING, Annotation, Assignment, ItemAssignee, Project, QueueSlot, User
from tests.annotation.concurrency import annotators, in_sample, run_per_user
from tests.conftest import is_postgres

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not is_postgres(), reason="needs DATABASE_URL pointing at PostgreSQL"),
]

BUDGET = {"splits": {"train": 1, "dev": 5, "test": 3},
          "rules": [{"k": 3, "split": "train", "sample": 0.2, "seed": 13}]}


def _items(project: Project) -> dict[int, str]:
    made = {}
    for i, split in enumerate(["train"] * 40 + ["dev"] * 10 + ["test"] * 10):
        item = services.item_create(project=project, payload={"title": f"예산 동시성 기사 {i}"},
                                    external_id=f"bc-{i}", split=split)
        made[item.pk] = split
    return made


def _expected_k(project: Project, made: dict[int, str]) -> dict[int, int]:
    budget = budget_of(project)
    expected = {}
    for item_id, split in made.items():
        rule = budget.rules[0] if budget.rules else None
        if rule is not None and split == rule.split and in_sample(item_id, rule.sample, rule.seed):
            expected[item_id] = rule.k
        else:
            expected[item_id] = budget.splits.get(split, budget.default)
    return expected


def _work(project: Project, users: list[User], until: threading.Event | None = None
          ) -> tuple[dict[int, list[int]], list[BaseException]]:
    received: dict[int, list[int]] = defaultdict(list)
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(users))

    def run(user: User) -> None:
        waiting = until
        try:
            barrier.wait()
            while True:
                assignment = services.assignment_next(project=project, user=user)
                if assignment is None:
                    if waiting is not None:
                        waiting.wait(30)  # the budget is being raised: ask again once it is
                        waiting = None
                        continue
                    return
                received[user.pk].append(assignment.item_id)
                services.annotation_submit(project=project, user=user, item_id=assignment.item_id,
                                           payload={"label": "사회"})
        except BaseException as error:  # reported by the main thread
            errors.append(error)
        finally:
            connections.close_all()

    run_per_user(run, users, timeout=180)
    return received, errors


def _assert_exact(project: Project, expected: dict[int, int], received: dict[int, list[int]]) -> None:
    for user_id, got in received.items():
        assert len(got) == len(set(got)), f"annotator {user_id} received an item twice"
    counts = Counter(Annotation.objects.filter(item__project=project).values_list("item_id", flat=True))
    assert {item: counts[item] for item in expected} == expected
    held = Counter(Assignment.objects.filter(item__project=project, status__in=SLOT_HOLDING)
                   .values_list("item_id", flat=True))
    for item_id, live, needed in QueueSlot.objects.filter(project=project).values_list("item_id", "live", "needed"):
        assert live == held[item_id] and needed == expected[item_id], (item_id, live, held[item_id], needed)


@pytest.mark.django_db(transaction=True)
def test_twenty_annotators_fill_each_item_to_its_own_k(make_project, make_user) -> None:
    assert connection.vendor == "postgresql"
    project = make_project("tc", k=2)
    made = _items(project)
    services.project_update(project=project, changes={"options": {**project.options, "budget": BUDGET}}, by=None)
    users = annotators(project, make_user)
    chosen = users[:5]
    dev = [item_id for item_id, split in made.items() if split == "dev"][:4]
    services.items_assign(project=project, items=services.items_chosen(project, item_ids=dev),
                          annotators=[user.username for user in chosen], by=None)
    expected = _expected_k(project, made)
    assert set(expected.values()) == {1, 3, 5}
    received, errors = _work(project, users)
    assert not errors, errors
    _assert_exact(project, expected, received)
    assigned = set(ItemAssignee.objects.filter(item_id__in=dev).values_list("annotator_id", flat=True))
    by = set(Annotation.objects.filter(item_id__in=dev).values_list("annotator_id", flat=True))
    assert by == assigned == {user.pk for user in chosen}  # k = 5 of 5 chosen: every one of them, nobody else


@pytest.mark.django_db(transaction=True)
def test_raising_the_budget_while_annotators_work_reopens_items_to_the_new_k(make_project, make_user) -> None:
    project = make_project("tc", k=1)
    made = _items(project)
    users = annotators(project, make_user, 12)
    raised = threading.Event()

    def raise_budget() -> None:
        try:
            services.project_update(project=Project.objects.get(pk=project.pk),
                                    changes={"options": {**project.options, "budget": BUDGET}}, by=None)
        finally:
            raised.set()
            connections.close_all()

    timer = threading.Timer(0.3, raise_budget)
    timer.start()
    received, errors = _work(project, users, until=raised)
    timer.join()
    assert not errors, errors
    project.refresh_from_db()
    _assert_exact(project, _expected_k(project, made), received)
