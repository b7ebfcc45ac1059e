"""Concurrency through the API on PostgreSQL: parallel submissions of one answer (a double-click, a retry
after a timeout) store one annotation and one audit event; parallel ``next/`` and submissions of one
annotator (two tabs, a script's threads) all get the same live assignment; two managers adjudicating one item
at once — one wins, the other gets 409 with a message saying what happened."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

import pytest
from django.db import connection

from annotation import services
from annotation.gold.services import gold_for_item
from annotation.models import Adjudication, Annotation, Assignment, AuditEvent, Role

pytestmark = pytest.mark.django_db(transaction=True)


def _in_parallel(calls: list[Callable[[], object]]) -> list[object]:
    """Run the calls at once (each thread on its own database connection); their results in order."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def run(index: int) -> None:
        try:
            barrier.wait()
            results[index] = calls[index]()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.fixture(autouse=True)
def _postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("real row locks and parallel connections need PostgreSQL")


def test_parallel_submissions_of_one_answer_store_one_annotation(make_project, annotator_in, api):
    project = make_project("tc", k=1, slug="race-submit")
    services.item_create(project=project, payload={"title": "동시 제출 기사"}, external_id="race-1")
    annotator = annotator_in(project, "race-annotator")
    item_id = services.assignment_next(project=project, user=annotator).item_id
    url = f"/api/projects/{project.pk}/annotations/"
    body = {"item": item_id, "payload": {"label": "사회"}}
    responses = _in_parallel([lambda: api(annotator).post(url, body, format="json") for _ in range(6)])
    codes = sorted(r.status_code for r in responses)
    assert codes == [200] * 5 + [201], [getattr(r, "data", None) for r in responses]
    assert Annotation.objects.filter(item_id=item_id, annotator=annotator).count() == 1
    assert AuditEvent.objects.filter(project=project, object_type="annotation").count() == 1


def test_parallel_requests_of_one_annotator_share_one_live_assignment(make_project, annotator_in, api):
    """Issue 23 (7): three annotators, four threads each, to the end of a k = 3 queue. The threads submit at
    once (each submission answers with the next assignment), and every other round ask ``next/`` at once
    too: all of one annotator's threads get the same assignment, nothing fails, and every item ends with k."""
    project = make_project("tc", k=3, slug="race-next")
    for i in range(6):
        services.item_create(project=project, payload={"title": f"동시 요청 기사 {i}"}, external_id=f"race-n{i}")
    annotators = [annotator_in(project, f"race-next-{i}") for i in range(3)]
    base = f"/api/projects/{project.pk}"
    threads = [user for user in annotators for _ in range(4)]

    def one_each(answers: list[dict | None]) -> dict[int, dict | None]:
        """The assignment each annotator's threads got, checking that they all got the same one."""
        got: dict[int, list[dict | None]] = {}
        for user, answer in zip(threads, answers, strict=True):
            got.setdefault(user.pk, []).append(answer)
        assert all(answers.count(answers[0]) == len(answers) for answers in got.values()), got
        return {user: answers[0] for user, answers in got.items()}

    def next_in_parallel() -> dict[int, dict | None]:
        responses = _in_parallel([lambda user=user: api(user).get(f"{base}/next/") for user in threads])
        assert {r.status_code for r in responses} <= {200, 204}, [(r.status_code, r.content) for r in responses]
        return one_each([r.json() if r.status_code == 200 else None for r in responses])

    current = next_in_parallel()
    for rounds in range(8):
        if all(assignment is None for assignment in current.values()):
            break
        working = [user for user in threads if current[user.pk] is not None]
        responses = _in_parallel([lambda user=user, item=current[user.pk]["item"]["id"]: api(user).post(
            f"{base}/annotations/", {"item": item, "payload": {"label": "사회"}}, format="json") for user in working])
        assert {r.status_code for r in responses} <= {200, 201}, [(r.status_code, r.content) for r in responses]
        handed = {user.pk: response.json()["next"] for user, response in zip(working, responses, strict=True)}
        current = one_each([handed.get(user.pk) for user in threads])
        if rounds % 2:  # next/ in parallel resumes what the submissions handed out
            assert next_in_parallel() == current
    else:
        pytest.fail("the queue did not run out")
    per_item = Counter(Annotation.objects.filter(item__project=project).values_list("item_id", flat=True))
    assert sorted(per_item.values()) == [3] * 6
    assert Assignment.objects.filter(item__project=project).count() == 18


def test_two_managers_adjudicating_at_once_one_wins_the_other_is_told(make_project, make_user, add_member, api):
    first = make_user("race-manager-1", can_create=True)
    project = make_project("tc", k=3, slug="race-adjudicate", manager=first)
    second = add_member(project, make_user("race-manager-2"), Role.MANAGER)
    item = services.item_create(project=project, payload={"title": "판정 기사"}, external_id="race-a")
    for i, label in enumerate(["사회", "경제", "정치"]):
        Annotation.objects.create(item=item, annotator=make_user(f"race-voter-{i}"), stage="label",
                                  payload={"label": label})
    version = gold_for_item(item).version
    url = f"/api/projects/{project.pk}/gold/{item.pk}/adjudicate/"
    responses = _in_parallel([
        lambda: api(first).post(url, {"payload": {"label": "사회"}, "reason": "첫째", "version": version},
                                format="json"),
        lambda: api(second).post(url, {"payload": {"label": "경제"}, "reason": "둘째", "version": version},
                                 format="json"),
    ])
    assert sorted(r.status_code for r in responses) == [200, 409]
    loser = next(r for r in responses if r.status_code == 409)
    assert loser.data["code"] == "conflict" and "reload and decide again" in loser.data["detail"]
    assert Adjudication.objects.filter(item=item).count() == 1
    assert AuditEvent.objects.filter(project=project, object_type="gold").count() == 1
