"""The queue's maintained counter (``QueueSlot.live``) follows every assignment status change, and the
``"uncertainty"`` queue order hands out the highest priority first."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from annotation import services
from annotation.models import (
    SLOT_HOLDING,
    Annotation,
    Assignment,
    AssignmentStatus,
    FlagKind,
    FlagResolution,
    Project,
    QueueSlot,
)
from annotation.selectors import annotator_progress, eligible_items
from datasets_build.services import items_import

pytestmark = pytest.mark.django_db


def assert_counter_exact(project: Project) -> None:
    """Every slot's ``live`` equals the number of its leased or submitted assignments and imported annotations."""
    held = Counter(Assignment.objects.filter(item__project=project, status__in=SLOT_HOLDING)
                   .values_list("item_id", "stage"))
    held.update(Annotation.objects.filter(item__project=project, imported=True).values_list("item_id", "stage"))
    for item_id, stage, live in QueueSlot.objects.filter(project=project).values_list("item_id", "stage", "live"):
        assert live == held[(item_id, stage)], (item_id, stage, live, held[(item_id, stage)])


def live_of(item_id: int, stage: str) -> int:
    return QueueSlot.objects.get(item_id=item_id, stage=stage).live


def tc_items(project: Project, n: int) -> list[int]:
    return [services.item_create(project=project, payload={"title": f"계수 시험 기사 {i}"}, external_id=f"q-{i}").pk
            for i in range(n)]


def test_lease_and_submit(make_project, annotator_in) -> None:
    project = make_project("tc", k=2)
    first, *_ = tc_items(project, 3)
    alice = annotator_in(project)
    assignment = services.assignment_next(project=project, user=alice)
    assert assignment.item_id == first and live_of(first, "label") == 1  # the lease counts
    services.annotation_submit(project=project, user=alice, item_id=first, payload={"label": "사회"})
    assert live_of(first, "label") == 1  # submitting keeps the place
    services.annotation_submit(project=project, user=alice, item_id=first, payload={"label": "경제"})
    assert live_of(first, "label") == 1  # so does resubmitting
    assert_counter_exact(project)


def test_closest_to_completion_first_and_never_past_k(make_project, annotator_in) -> None:
    """The started item comes first even when an older item is untouched: the order is by places taken, not
    by age (with ties broken by age), and an item with k places taken is never handed out."""
    project = make_project("tc", k=3)
    oldest, middle, newest = tc_items(project, 3)
    alice, bob, carol, dave = (annotator_in(project) for _ in range(4))
    # alice passes on the two older items, so the newest is the first one started.
    for passed in (oldest, middle):
        skipped = services.assignment_next(project=project, user=alice)
        assert skipped.item_id == passed
        services.assignment_skip(assignment=skipped, reason="모름")
    assert services.assignment_next(project=project, user=alice).item_id == newest
    assert services.assignment_next(project=project, user=bob).item_id == newest  # 1 taken beats 0 taken
    assert services.assignment_next(project=project, user=carol).item_id == newest  # 2 taken beats 0
    assert live_of(newest, "label") == 3
    assert services.assignment_next(project=project, user=dave).item_id == oldest  # newest is full; then by age
    assert live_of(newest, "label") == 3 and live_of(oldest, "label") == 1
    assert_counter_exact(project)


def test_expiry_by_task_and_lazily_by_the_take(make_project, annotator_in) -> None:
    project = make_project("tc", k=1)
    first, second = tc_items(project, 2)
    alice, bob = annotator_in(project), annotator_in(project)
    services.assignment_next(project=project, user=alice)
    Assignment.objects.update(lease_expires_at="2000-01-01T00:00:00Z")
    assert services.assignments_expire() == 1
    assert live_of(first, "label") == 0
    assert services.assignment_next(project=project, user=bob).item_id == first
    Assignment.objects.filter(annotator=bob).update(lease_expires_at="2000-01-01T00:00:00Z")
    # No task ran: the take itself marks bob's lease expired, so the item goes to alice again.
    again = services.assignment_next(project=project, user=alice)
    assert again.item_id == first and again.status == AssignmentStatus.LEASED
    assert Assignment.objects.get(annotator=bob).status == AssignmentStatus.EXPIRED
    assert live_of(first, "label") == 1 and live_of(second, "label") == 0
    assert_counter_exact(project)


def test_late_submission_of_an_expired_lease_is_counted(make_project, annotator_in) -> None:
    project = make_project("tc", k=2)
    first, _ = tc_items(project, 2)
    alice = annotator_in(project)
    services.assignment_next(project=project, user=alice)
    Assignment.objects.update(lease_expires_at="2000-01-01T00:00:00Z")
    services.assignments_expire()
    services.annotation_submit(project=project, user=alice, item_id=first, payload={"label": "사회"})
    assert live_of(first, "label") == 1
    assert_counter_exact(project)


def test_skip_gives_the_place_back(make_project, annotator_in) -> None:
    project = make_project("tc", k=1)
    first, second = tc_items(project, 2)
    alice, bob = annotator_in(project), annotator_in(project)
    services.assignment_skip(assignment=services.assignment_next(project=project, user=alice), reason="모름")
    assert live_of(first, "label") == 0
    assert services.assignment_next(project=project, user=alice).item_id == second  # never first again
    assert services.assignment_next(project=project, user=bob).item_id == first
    assert_counter_exact(project)


def test_flag_then_kept_re_enters_the_queue(make_project, annotator_in, make_user) -> None:
    project = make_project("tc", k=2)
    (first,) = tc_items(project, 1)
    alice, bob = annotator_in(project), annotator_in(project)
    assignment = services.assignment_next(project=project, user=alice)
    flag = services.flag_create(item=assignment.item, user=alice, kind=FlagKind.OTHER, note="이상함")
    assert live_of(first, "label") == 0
    assert services.assignment_next(project=project, user=bob) is None  # an open flag keeps it out
    services.flag_resolve(flag=flag, resolution=FlagResolution.KEPT, by=project.created_by)
    assert services.assignment_next(project=project, user=bob).item_id == first
    assert services.assignment_next(project=project, user=alice) is None  # alice flagged it: not again
    assert live_of(first, "label") == 1
    assert_counter_exact(project)


def test_membership_removal_frees_the_lease(make_project, annotator_in) -> None:
    project = make_project("tc", k=1)
    (first,) = tc_items(project, 1)
    alice = annotator_in(project)
    services.assignment_next(project=project, user=alice)
    services.membership_remove(membership=project.memberships.get(user=alice))
    assert live_of(first, "label") == 0
    assert_counter_exact(project)


def test_two_stages_count_separately(make_project, annotator_in) -> None:
    project = make_project("nli", k=2)
    item = services.item_create(project=project, payload={"premise": "시립도서관은 평일 9시까지 문을 연다."})
    writer, alice, bob = (annotator_in(project) for _ in range(3))
    writing = services.assignment_next(project=project, user=writer)
    assert writing.stage == "writing" and live_of(item.pk, "writing") == 1
    services.annotation_submit(project=project, user=writer, item_id=item.pk, stage="writing",
                               payload={"hypothesis": "도서관은 평일에 연다.", "label": "entailment"})
    assert services.assignment_next(project=project, user=writer) is None  # never validates their own
    for user in (alice, bob):
        validation = services.assignment_next(project=project, user=user)
        assert validation.stage == "validation"
        services.annotation_submit(project=project, user=user, item_id=item.pk, stage="validation",
                                   payload={"label": "entailment"})
    assert live_of(item.pk, "writing") == 1 and live_of(item.pk, "validation") == 2
    assert_counter_exact(project)


def test_bulk_created_items_get_their_slots(make_project, annotator_in) -> None:
    """Importers and the demo bulk-create items: the take and the periodic sync give them slots."""
    project = make_project("tc", k=1)
    tc_items(project, 1)
    alice = annotator_in(project)
    services.assignment_next(project=project, user=alice)
    created = services.items_create(project=project, items=[{"payload": {"title": f"대량 기사 {i}"}} for i in range(3)])
    assert services.assignment_next(project=project, user=annotator_in(project)).item_id == created[0].pk
    QueueSlot.objects.filter(item_id=created[1].pk).delete()  # as if an import committed after a newer item
    assert services.queue_slots_sync() == 1
    assert QueueSlot.objects.filter(project=project).count() == 4
    assert_counter_exact(project)


def test_uncertainty_order(make_project, annotator_in) -> None:
    project = make_project("tc", k=1)
    first, second, third, fourth = tc_items(project, 4)
    project.options = {**project.options, "queue_order": "uncertainty"}
    project.save(update_fields=["options"])
    assert services.queue_priority_set(project, {second: 0.2, third: 0.9, fourth: None}) == 3
    got = [services.assignment_next(project=project, user=annotator_in(project)).item_id for _ in range(4)]
    assert got == [third, second, first, fourth]  # highest first, unset last (by id)


def test_default_order_ignores_priority(make_project, annotator_in) -> None:
    project = make_project("tc", k=1)
    first, second = tc_items(project, 2)
    services.queue_priority_set(project, {second: 0.9})
    assert services.assignment_next(project=project, user=annotator_in(project)).item_id == first


def test_imported_annotations_take_places(make_project, annotator_in, tmp_path) -> None:
    """Issue 19: an item is complete with k annotations, the corpus's included. Imported with one corpus label
    at k = 3, an item gets exactly 2 human annotations; the unlabelled one 3."""
    project = make_project("tc", k=3)
    corpus = tmp_path / "ynat.jsonl"
    corpus.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in (
        {"guid": "ynat-1", "title": "국회, 내년도 예산안 본회의 통과", "label": "정치"},
        {"guid": "ynat-2", "title": "프로야구 개막전 만원 관중"})), encoding="utf-8")
    result = items_import(project, corpus, "jsonl")
    assert (result.items, result.annotations) == (2, 1)
    labelled, unlabelled = (project.items.get(external_id=guid).pk for guid in ("ynat-1", "ynat-2"))
    annotators = [annotator_in(project) for _ in range(4)]
    assert services.assignment_next(project=project, user=annotators[0]).item_id == labelled  # closest to done
    assert live_of(labelled, "label") == 2
    got: Counter[int] = Counter()
    for user in annotators:
        while (assignment := services.assignment_next(project=project, user=user)) is not None:
            services.annotation_submit(project=project, user=user, item_id=assignment.item_id,
                                       payload={"label": "사회"})
            got[assignment.item_id] += 1
    assert got == {labelled: 2, unlabelled: 3}
    assert Annotation.objects.filter(item_id=labelled).count() == 3
    assert not eligible_items(project, annotators[3], "label").filter(pk=labelled).exists()
    assert annotator_progress(project, annotators[3])["remaining"] == 0
    assert_counter_exact(project)


def test_a_drifted_counter_is_corrected_by_the_take(make_project, annotator_in) -> None:
    """The take recounts the candidate's taken places under its lock: a counter that says "free" on a full item
    is corrected and the next candidate is taken."""
    project = make_project("tc", k=1)
    first, second = tc_items(project, 2)
    alice, bob = annotator_in(project), annotator_in(project)
    assert services.assignment_next(project=project, user=alice).item_id == first
    QueueSlot.objects.filter(item_id=first).update(live=0)
    assert services.assignment_next(project=project, user=bob).item_id == second
    assert live_of(first, "label") == 1 and live_of(second, "label") == 1
    assert_counter_exact(project)
