"""An annotator's own submissions: the history page and the API list, revision until the item's gold is decided
(audited, read by agreement and gold), and nobody else's annotations seen or changed."""

from __future__ import annotations

import json
import re
import threading
import time

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import services
from annotation.agreement.disagreement import items_by_disagreement
from annotation.agreement.selectors import annotation_fingerprint
from annotation.gold.services import adjudicate, gold_compute, gold_for_item
from annotation.models import Annotation, AuditEvent, GoldStatus, Project, Role
from annotation.services import ServiceError
from tests.builders import client_for

LABELS = ("사회", "경제", "정치")


@pytest.fixture
def worked(make_project, annotator_in, make_user, add_member):
    """Two headlines, each labelled by three annotators through the queue: 사회 / 경제 / 정치."""
    project = make_project("tc", k=3, slug="mine")
    coders = [annotator_in(project, f"mine-coder{i}") for i in range(3)]
    for n in range(2):
        services.item_create(project=project, payload={"title": f"서울시청 기사 {n}"}, external_id=f"h{n}")
    for coder, label in zip(coders, LABELS, strict=True):
        for _ in range(2):
            assignment = services.assignment_next(project=project, user=coder)
            services.annotation_submit(project=project, user=coder, item_id=assignment.item_id,
                                       payload={"label": label})
    manager = project.created_by
    maintainer = add_member(project, make_user("mine-maintainer"), Role.MAINTAINER)
    return project, coders, manager, maintainer


def _own(coder, item_external_id: str) -> Annotation:
    return Annotation.objects.get(annotator=coder, item__external_id=item_external_id)


@pytest.mark.django_db
def test_history_page_lists_only_ones_own_and_revision_feeds_agreement_and_gold(worked):
    project, coders, _manager, _maintainer = worked
    third = coders[2]
    client = client_for(third)
    history = client.get(reverse("annotation:my-submissions", args=[project.pk])).content.decode()
    revise_links = set(re.findall(rf'href="/projects/{project.pk}/mine/(\d+)/"', history))
    assert revise_links == {str(a.pk) for a in Annotation.objects.filter(annotator=third)}
    assert "정치" in history and "경제" not in history and "mine-coder0" not in history
    # Reachable from the workspace.
    workspace = client.get(reverse("annotation:annotate", args=[project.pk])).content.decode()
    assert f'href="{reverse("annotation:my-submissions", args=[project.pk])}"' in workspace

    own = _own(third, "h0")
    before = annotation_fingerprint(project)
    disagreement = {r["external_id"]: r for r in items_by_disagreement(project).rows}
    assert disagreement["h0"]["labels"] == {"사회": 1, "경제": 1, "정치": 1}
    url = reverse("annotation:my-submission-revise", args=[project.pk, own.pk])
    form = client.get(url).content.decode()
    config = json.loads(re.search(r'<script id="revise-config" type="application/json">(.*?)</script>', form)[1])
    assert config["initial"]["label"] == "정치" and config["item"]["title"] == "서울시청 기사 0"
    done = client.post(url, {"payload": '{"label": "사회"}'})
    assert done.status_code == 302 and done.url == reverse("annotation:my-submissions", args=[project.pk])
    own.refresh_from_db()
    assert own.payload["label"] == "사회"
    event = AuditEvent.objects.get(project=project, action="revise")
    assert (event.actor, event.object_id) == (third, own.pk)
    assert event.before["payload"]["label"] == "정치" and event.after["payload"]["label"] == "사회"
    # Agreement and gold read the revised answer.
    assert annotation_fingerprint(project) != before
    disagreement = {r["external_id"]: r for r in items_by_disagreement(project).rows}
    assert disagreement["h0"]["labels"] == {"사회": 2, "경제": 1}
    gold = gold_for_item(own.item)
    assert gold.status == GoldStatus.RESOLVED and gold.payload["label"] == "사회"


@pytest.mark.django_db
def test_revision_is_refused_with_the_reason_once_gold_is_decided(worked, api):
    project, coders, *_ = worked
    third = coders[2]
    own = _own(third, "h1")
    services.annotation_revise(project=project, user=third, annotation_id=own.pk, payload={"label": "사회"})
    gold_compute(project)  # h1 resolves to 사회 by majority; h0 needs adjudication
    url = f"/api/projects/{project.pk}/annotations/{own.pk}/"
    refused = api(third).patch(url, {"payload": {"label": "경제"}}, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "gold_decided"
    assert "decided" in refused.json()["detail"] and "manager" in refused.json()["detail"]
    page = client_for(third).post(reverse("annotation:my-submission-revise", args=[project.pk, own.pk]),
                                  {"payload": '{"label": "경제"}'})
    assert page.status_code == 409 and "can no longer be revised" in page.content.decode()
    own.refresh_from_db()
    assert own.payload["label"] == "사회"
    assert AuditEvent.objects.filter(project=project, action="revise").count() == 1
    listed = {a["item"]: a["revisable"] for a in api(third).get(
        f"/api/projects/{project.pk}/annotations/mine/").json()["results"]}
    assert listed == {own.item_id: False, _own(third, "h0").item_id: True}
    history = client_for(third).get(reverse("annotation:my-submissions", args=[project.pk])).content.decode()
    assert "Gold decided" in history
    # A disputed item stays open: its annotator can still settle it.
    open_one = _own(third, "h0")
    assert api(third).patch(f"/api/projects/{project.pk}/annotations/{open_one.pk}/",
                            {"payload": {"label": "경제"}}, format="json").status_code == 200


@pytest.mark.django_db
def test_nobody_else_sees_or_revises_an_annotation(worked, api):
    project, coders, manager, maintainer = worked
    first, other = coders[0], coders[1]
    own = _own(first, "h0")
    url = f"/api/projects/{project.pk}/annotations/{own.pk}/"
    assert api(other).patch(url, {"payload": {"label": "경제"}}, format="json").status_code == 404
    assert client_for(other).get(reverse("annotation:my-submission-revise",
                                         args=[project.pk, own.pk])).status_code == 404
    assert client_for(other).post(reverse("annotation:my-submission-revise", args=[project.pk, own.pk]),
                                  {"payload": '{"label": "경제"}'}).status_code == 404
    mine = api(other).get(f"/api/projects/{project.pk}/annotations/mine/").json()
    assert mine["count"] == 2 and {a["annotator"] for a in mine["results"]} == {"mine-coder1"}
    assert {a["payload"]["label"] for a in mine["results"]} == {"경제"}
    # Managers decide gold; they do not rewrite an annotator's answer.
    assert api(manager).patch(url, {"payload": {"label": "경제"}}, format="json").status_code == 403
    assert api(maintainer).get(f"/api/projects/{project.pk}/annotations/mine/").status_code == 403
    own.refresh_from_db()
    assert own.payload["label"] == "사회" and not AuditEvent.objects.filter(action="revise").exists()


@pytest.mark.django_db
def test_a_revision_is_validated_like_a_submission(worked, api):
    project, coders, *_ = worked
    own = _own(coders[0], "h0")
    bad = api(coders[0]).patch(f"/api/projects/{project.pk}/annotations/{own.pk}/",
                               {"payload": {"label": "없는 라벨"}}, format="json")
    assert bad.status_code == 400 and bad.json()["field"].startswith("payload")
    same = api(coders[0]).patch(f"/api/projects/{project.pk}/annotations/{own.pk}/",
                                {"payload": {"label": "사회"}}, format="json")
    assert same.status_code == 200 and not AuditEvent.objects.filter(action="revise").exists()


@pytest.mark.django_db(transaction=True)
def test_a_revision_waits_for_a_gold_decision_under_way_and_is_refused(worked):
    """A manager's decision holding the project row (as every gold write does) while the annotator revises: the
    revision waits, then sees the decision, so an answer never changes under a decided gold."""
    if connection.vendor != "postgresql":
        pytest.skip("real row locks need PostgreSQL")
    project, coders, manager, _maintainer = worked
    own = _own(coders[2], "h0")
    gold_compute(project)  # h0: needs adjudication, open to revision
    deciding, decided = threading.Event(), threading.Event()

    def decide() -> None:
        try:
            with transaction.atomic():
                Project.objects.select_for_update().get(pk=project.pk)
                deciding.set()
                time.sleep(0.5)  # the revision starts meanwhile and has to wait
                adjudicate(item=own.item, by=manager, reason="사회 기사", payload={"label": "사회"}, base_version=1)
            decided.set()
        finally:
            connection.close()

    thread = threading.Thread(target=decide)
    thread.start()
    assert deciding.wait(10)
    try:
        with pytest.raises(ServiceError) as refused:
            services.annotation_revise(project=project, user=coders[2], annotation_id=own.pk,
                                       payload={"label": "경제"})
    finally:
        thread.join()
    assert decided.is_set() and refused.value.code == "gold_decided"
    own.refresh_from_db()
    assert own.payload["label"] == "정치"


@pytest.mark.django_db
def test_a_written_hypothesis_is_not_revisable_and_a_validation_is(make_project, annotator_in, api):
    project = make_project("nli", k=1)
    item = services.item_create(project=project, payload={"premise": "숙소가 역에서 가까워 편했다."})
    writer, validator = annotator_in(project), annotator_in(project)
    services.assignment_next(project=project, user=writer)
    written, _ = services.annotation_submit(project=project, user=writer, item_id=item.pk,
                                            payload={"hypothesis": "숙소는 역과 멀다.", "label": "contradiction"})
    services.assignment_next(project=project, user=validator)
    validation, _ = services.annotation_submit(project=project, user=validator, item_id=item.pk,
                                               payload={"label": "contradiction"})
    mine = api(writer).get(f"/api/projects/{project.pk}/annotations/mine/").json()["results"]
    assert [(a["stage"], a["revisable"]) for a in mine] == [("writing", False)]
    other_text = {"hypothesis": "숙소는 역과 가깝다.", "label": "entailment"}
    refused = api(writer).patch(f"/api/projects/{project.pk}/annotations/{written.pk}/", {"payload": other_text},
                                format="json")
    assert refused.status_code == 400 and "cannot be revised" in refused.json()["detail"]
    assert "Written text cannot be revised" in client_for(writer).get(
        reverse("annotation:my-submissions", args=[project.pk])).content.decode()
    revised = api(validator).patch(f"/api/projects/{project.pk}/annotations/{validation.pk}/",
                                   {"payload": {"label": "neutral"}}, format="json")
    assert revised.status_code == 200 and revised.json()["payload"]["label"] == "neutral"
    item.refresh_from_db()
    assert item.payload["hypothesis"] == "숙소는 역과 멀다."


@pytest.mark.django_db
def test_history_page_and_list_do_not_grow_their_queries_with_rows(make_project, annotator_in, api):
    project = make_project("tc", k=1)
    coder = annotator_in(project)

    def add(n: int, tag: str) -> None:
        for i in range(n):
            item = services.item_create(project=project, payload={"title": f"기사 {tag} {i}"})
            Annotation.objects.create(item=item, annotator=coder, stage="label", payload={"label": "사회"})

    def count(request) -> int:
        request()
        with CaptureQueriesContext(connection) as queries:
            assert request().status_code == 200
        return len(queries)

    page = reverse("annotation:my-submissions", args=[project.pk])
    listing = f"/api/projects/{project.pk}/annotations/mine/"
    client, token = client_for(coder), api(coder)
    add(2, "a")
    few = (count(lambda: client.get(page)), count(lambda: token.get(listing)))
    add(40, "b")
    assert (count(lambda: client.get(page)), count(lambda: token.get(listing))) == few
