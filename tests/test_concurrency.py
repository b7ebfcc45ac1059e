"""Concurrency through the API on PostgreSQL: parallel submissions of one answer (a double-click, a retry
after a timeout) store one annotation and one audit event; two managers adjudicating one item at once —
one wins, the other gets 409 with a message saying what happened."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection

from annotation import services
from annotation.gold.services import gold_for_item
from annotation.models import Adjudication, Annotation, AuditEvent, Role

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
