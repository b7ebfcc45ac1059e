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
from django.db import connection, connections, transaction

from annotation import services
from annotation.models import SLOT_HOLDING, Annotation, Assignment, Project, QueueSlot, User
from annotation.selectors import eligible_items
from tests.annotation.concurrency import annotators, run_per_user
from tests.conftest import is_postgres

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not is_postgres(), reason="needs DATABASE_URL pointing at PostgreSQL"),
]


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

    run_per_user(run, users, timeout=120)
    return received, errors


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
    # "Nothing left" is right while the last places are held by other clients' leases, and a skip gives such
    # a place back afterwards; so a client told "nothing left" asks again if a skip began or ended while it
    # asked (an annotator would reload). Otherwise the answer is final, and checkable: without a skip, places
    # are only taken, so an item still free for the client now was free when it asked. The queue once
    # answered "nothing left" while the free places were locked by other requests, leaving items short of k.
    skips = threading.Condition()
    skip_events = skips_running = 0

    def skip(assignment: Assignment) -> None:
        nonlocal skip_events, skips_running
        with skips:
            skip_events, skips_running = skip_events + 1, skips_running + 1
        try:
            services.assignment_skip(assignment=assignment, reason="동시성")
        finally:
            with skips:
                skip_events, skips_running = skip_events + 1, skips_running - 1
                skips.notify_all()

    def run(user: User) -> None:
        try:
            barrier.wait()
            while True:
                with skips:
                    events_before = skip_events
                assignment = services.assignment_next(project=project, user=user)
                if assignment is None:
                    with skips:  # held while checking: no skip can start meanwhile
                        if skip_events == events_before and not skips_running:
                            free = list(eligible_items(project, user, "label").values_list("id", flat=True))
                            assert not free, f"annotator {user.pk} was told nothing is left; free: {free}"
                            return
                        skips.wait_for(lambda: not skips_running)
                    continue
                received[user.pk].append((assignment.item_id, assignment.stage))
                if (assignment.item_id + user.pk) % 5 == 0:
                    skip(assignment)
                else:
                    services.annotation_submit(project=project, user=user, item_id=assignment.item_id,
                                               payload={"label": "사회"})
        except BaseException as error:  # reported by the main thread
            errors.append(error)
        finally:
            connections.close_all()

    run_per_user(run, users, timeout=180)
    assert not errors, errors
    assert_queue_invariants(project, received)
    counts = Counter(Annotation.objects.filter(item__project=project).values_list("item_id", flat=True))
    assert len(counts) == 60 and set(counts.values()) == {3}  # skipped places were filled by others


@pytest.mark.django_db(transaction=True)
def test_a_locked_slot_with_a_free_place_is_waited_for_not_passed_over(make_project, make_user) -> None:
    """The take passes over slots other requests hold locked (SKIP LOCKED); when that leaves nothing, it
    waits for a locked slot that still has a place instead of answering "nothing left"."""
    project = make_project("tc", k=3)
    item = services.item_create(project=project, payload={"title": "잠긴 자리 시험 기사"}, external_id="l-1")
    (bob,) = annotators(project, make_user, 1)
    services.queue_slots_ensure(project, "label")
    locked, release = threading.Event(), threading.Event()

    def hold_the_slot() -> None:  # as a take or a skip of another request does, for a moment
        try:
            with transaction.atomic():
                QueueSlot.objects.select_for_update().get(item=item, stage="label")
                locked.set()
                release.wait(timeout=30)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_the_slot)
    holder.start()
    assert locked.wait(timeout=30)
    threading.Timer(0.5, release.set).start()
    assignment = services.assignment_next(project=project, user=bob)
    holder.join(timeout=30)
    assert assignment is not None and assignment.item_id == item.pk
    assert release.is_set()  # it waited for the holder
