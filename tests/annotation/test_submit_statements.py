"""How many statements a submission with its next assignment sends to PostgreSQL.

The annotator's queue lock is held from the assignment's statement to the commit, so their parallel requests
wait for each round trip in between: the submit-with-next's statement count bounds one annotator's rate
(docs/performance.md, "Annotate beside doccano"). These tests pin it, and that the fewer statements leave the
same rows behind as before.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import services
from annotation.models import Annotation, Assignment, AuditEvent, Item, QueueSlot
from tests.conftest import is_postgres

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not is_postgres(), reason="counts PostgreSQL's statements"),
]


TC_PAYLOAD = {"label": "사회", "second": "경제", "third": None}


def add_items(project, n: int) -> list[Item]:
    return [services.item_create(project=project, payload={"title": f"제목 {i}번 뉴스"}, external_id=f"s-{i}")
            for i in range(n)]


def _submit(client, project, item_id: int, payload: dict) -> tuple[dict, list[str], int]:
    with CaptureQueriesContext(connection) as queries:
        response = client.post(f"/api/projects/{project.id}/annotations/", {"item": item_id, "payload": payload},
                               format="json")
    assert response.status_code in (200, 201), response.content
    return response.json(), [q["sql"] for q in queries.captured_queries], response.status_code


def test_a_submission_taking_the_next_item_runs_six_statements(api, make_project, annotator_in):
    """The token with its user, the project and the caller's access, then in the transaction (a savepoint here, not
    counted): the assignment with the queue lock; the caller's annotation (none, an id reserved); the
    annotation, its audit event, the assignment's status and the caller's queue state; the candidate; its place
    and the new lease."""
    project = make_project("tc", k=2)
    items = add_items(project, 3)
    annotator = annotator_in(project)
    client = api(annotator)
    first = client.get(f"/api/projects/{project.id}/next/").json()
    body, statements, status = _submit(client, project, first["item"]["id"], TC_PAYLOAD)
    assert status == 201 and body["next"]["item"]["id"] == items[1].pk
    work = [sql for sql in statements if "SAVEPOINT" not in sql]
    assert len(work) == 6, "\n".join(statements)
    annotation = Annotation.objects.get(item_id=items[0].pk, annotator=annotator)
    assert annotation.payload["label"] == "사회" and annotation.guideline_id is not None
    event = AuditEvent.objects.get(object_type="annotation", object_id=annotation.pk)
    assert (event.action, event.actor_id, event.before) == ("create", annotator.pk, None)
    assert event.after == {"item": items[0].pk, "stage": "label", "payload": annotation.payload}
    assert Assignment.objects.get(pk=first["assignment"]).status == "submitted"
    assert Assignment.objects.get(pk=body["next"]["assignment"]).status == "leased"
    assert {s.item_id: s.live for s in QueueSlot.objects.filter(project=project)} == {
        items[0].pk: 1, items[1].pk: 1, items[2].pk: 0}


def test_a_resubmission_resuming_the_live_lease_runs_four_statements(api, make_project, annotator_in):
    """A second tab submitting the item again: token and project, the assignment, the annotation, then one
    statement that updates the annotation, records the change and reads the live lease to resume."""
    project = make_project("tc", k=2)
    add_items(project, 2)
    annotator = annotator_in(project)
    client = api(annotator)
    first = client.get(f"/api/projects/{project.id}/next/").json()
    following = _submit(client, project, first["item"]["id"], TC_PAYLOAD)[0]["next"]
    changed = {**TC_PAYLOAD, "label": "정치"}
    body, statements, status = _submit(client, project, first["item"]["id"], changed)
    assert status == 200 and body["next"] == following and body["payload"]["label"] == "정치"
    work = [sql for sql in statements if "SAVEPOINT" not in sql]
    assert len(work) == 4, "\n".join(statements)
    annotation = Annotation.objects.get(item_id=first["item"]["id"], annotator=annotator)
    events = AuditEvent.objects.filter(object_type="annotation", object_id=annotation.pk).order_by("id")
    assert [(e.action, e.before, e.after["payload"]) for e in events] == [
        ("create", None, TC_PAYLOAD), ("update", TC_PAYLOAD, annotation.payload)]
    assert annotation.payload["label"] == "정치" and annotation.updated_at > annotation.created_at
    unchanged = _submit(client, project, first["item"]["id"], changed)
    assert unchanged[2] == 200 and events.count() == 2  # the same answer again changes nothing worth recording
