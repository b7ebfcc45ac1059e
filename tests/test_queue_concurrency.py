"""Twenty (and thirty-two) annotators asking for work at once, on PostgreSQL: no item goes past k annotations per stage,
and no annotator receives an item twice.

Each thread has its own database connection (Django opens one per thread) and closes it at the end.
SQLite serialises writers anyway, so the test only means something on PostgreSQL and skips elsewhere.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, connections

from annotation import services
from annotation.models import SLOT_HOLDING, Annotation, Assignment, Project, QueueSlot, Role, User
from tests.conftest import is_postgres

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not is_postgres(), reason="needs DATABASE_URL pointing at PostgreSQL"),
]

ANNOTATORS = 20


def work_in_parallel(project: Project, users: list[User], payload_for: Callable[[Assignment], dict[str, Any]],
                     ) -> tuple[dict[int, list[tuple[int, str]]], list[BaseException]]:
    """Every user works through their queue in their own thread, all starting at the same moment."""
    received: dict[int, list[tuple[int, str]]] = defaultdict(list)
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(users))

    def run(user: User) -> None:
        try:
            barrier.wait()
            while (assignment := services.assignment_next(project=project, user=user)) is not None:
                received[user.pk].append((assignment.item_id, assignment.stage))
                services.annotation_submit(project=project, user=user, item_id=assignment.item_id,
                                           payload=payload_for(assignment), stage=assignment.stage)
        except BaseException as error:  # reported by the main thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a worker thread hung"
    return received, errors


def annotators(project: Project, make_user: Callable[..., User], n: int = ANNOTATORS) -> list[User]:
    users = []
    for _ in range(n):
        user = make_user()
        services.membership_set(project=project, user=user, role=Role.ANNOTATOR)
        services.guideline_acknowledge(user=user, project=project)
        users.append(user)
    return users


def assert_queue_invariants(project: Project, received: dict[int, list[tuple[int, str]]]) -> None:
    for user_id, got in received.items():
        assert len(got) == len(set(got)), f"annotator {user_id} received an item twice in a stage"
    # The maintained counter equals the leased and submitted assignments it stands for.
    held = Counter(Assignment.objects.filter(item__project=project, status__in=SLOT_HOLDING)
                   .values_list("item_id", "stage"))
    for item_id, stage, live in QueueSlot.objects.filter(project=project).values_list("item_id", "stage", "live"):
        assert live == held[(item_id, stage)], (item_id, stage, live)
    for stage in project.stage_names:
        needed = project.annotations_needed(stage)
        per_item = Counter(Annotation.objects.filter(item__project=project, stage=stage)
                           .values_list("item_id", flat=True))
        assert per_item and max(per_item.values()) <= needed, (stage, per_item.most_common(3))
        leased = Counter(Assignment.objects.filter(item__project=project, stage=stage, status__in=SLOT_HOLDING)
                         .values_list("item_id", flat=True))
        assert max(leased.values()) <= needed, (stage, leased.most_common(3))


@pytest.mark.django_db(transaction=True)
def test_twenty_annotators_in_parallel_never_exceed_k(make_project, make_user) -> None:
    assert connection.vendor == "postgresql"
    project = make_project("tc", k=3)
    for i in range(40):
        services.item_create(project=project, payload={"title": f"동시성 시험 기사 {i}"}, external_id=f"c-{i}")
    users = annotators(project, make_user)
    received, errors = work_in_parallel(project, users, lambda _: {"label": "사회"})
    assert not errors, errors
    assert_queue_invariants(project, received)
    # Every item got exactly k annotations: the queue neither overshot nor left work behind.
    counts = Counter(Annotation.objects.filter(item__project=project).values_list("item_id", flat=True))
    assert len(counts) == 40 and set(counts.values()) == {3}
    assert sum(len(got) for got in received.values()) == 120


@pytest.mark.django_db(transaction=True)
def test_twenty_annotators_on_a_two_stage_task(make_project, make_user) -> None:
    project = make_project("nli", k=3)
    for i in range(15):
        services.item_create(project=project, payload={"premise": f"시립도서관은 평일 {i}시까지 문을 연다."},
                             external_id=f"n-{i}")
    users = annotators(project, make_user)

    def payload(assignment: Assignment) -> dict[str, Any]:
        if assignment.stage == "writing":
            return {"hypothesis": f"도서관은 {assignment.item_id}번 규칙을 따른다.", "label": "neutral"}
        return {"label": "neutral"}

    received, errors = work_in_parallel(project, users, payload)
    assert not errors, errors
    assert_queue_invariants(project, received)
    writers = dict(Annotation.objects.filter(item__project=project, stage="writing")
                   .values_list("item_id", "annotator_id"))
    assert len(writers) == 15
    for item_id, validator_id in Annotation.objects.filter(item__project=project, stage="validation").values_list(
            "item_id", "annotator_id"):
        assert writers[item_id] != validator_id, "a writer validated their own hypothesis"


@pytest.mark.django_db(transaction=True)
def test_thirty_two_clients_with_skips_never_exceed_k(make_project, make_user) -> None:
    """Issue 9: 32 parallel clients; every fifth take is skipped, so places are given back and retaken."""
    project = make_project("tc", k=3)
    for i in range(60):
        services.item_create(project=project, payload={"title": f"서른둘 시험 기사 {i}"}, external_id=f"t-{i}")
    users = annotators(project, make_user, 32)
    received: dict[int, list[tuple[int, str]]] = defaultdict(list)
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(users))

    def run(user: User) -> None:
        try:
            barrier.wait()
            while (assignment := services.assignment_next(project=project, user=user)) is not None:
                received[user.pk].append((assignment.item_id, assignment.stage))
                if (assignment.item_id + user.pk) % 5 == 0:
                    services.assignment_skip(assignment=assignment, reason="동시성")
                else:
                    services.annotation_submit(project=project, user=user, item_id=assignment.item_id,
                                               payload={"label": "사회"})
        except BaseException as error:  # reported by the main thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert not any(thread.is_alive() for thread in threads), "a worker thread hung"
    assert not errors, errors
    assert_queue_invariants(project, received)
    counts = Counter(Annotation.objects.filter(item__project=project).values_list("item_id", flat=True))
    assert len(counts) == 60 and set(counts.values()) == {3}  # skipped places were filled by others
