"""The REST API through the paths scripts and the browser use: projects, guidelines, queue, annotations."""

from __future__ import annotations

import pytest

from annotation import selectors, services
from annotation.models import Annotation, Assignment, Guideline, Item, Role

pytestmark = pytest.mark.django_db

TC_PAYLOAD = {"label": "사회", "second": "경제", "third": None}


def add_items(project, n: int, **payload_overrides) -> list[Item]:
    return [
        services.item_create(project=project, payload={"title": f"제목 {i}번 뉴스", **payload_overrides},
                             external_id=f"demo-{i}")
        for i in range(n)
    ]


def test_task_types_lists_the_eight_slugs(api, make_user):
    response = api(make_user()).get("/api/task-types/")
    assert response.status_code == 200
    assert [t["slug"] for t in response.json()] == ["tc", "sts", "nli", "ner", "re", "dp", "mrc", "dst"]
    nli = next(t for t in response.json() if t["slug"] == "nli")
    assert [s["name"] for s in nli["stages"]] == ["writing", "validation"]
    topics = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]
    assert response.json()[0]["default_schema"]["labels"] == topics


def test_token_auth(api, make_user):
    make_user("kim")
    response = api(None).post("/api/auth/token/", {"username": "kim", "password": "pw-goldset-123"})
    assert response.status_code == 200 and response.json()["token"]
    bad = api(None).post("/api/auth/token/", {"username": "kim", "password": "wrong"})
    assert bad.status_code == 400


def test_project_created_from_template_with_guideline_v1(api, make_user):
    manager = make_user(can_create=True)
    response = api(manager).post("/api/projects/", {"name": "뉴스 주제", "slug": "ynat", "task_type": "tc",
                                                    "annotators_per_item": 3}, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert {"id", "name", "slug", "task_type", "annotators_per_item"} <= body.keys()
    assert body["label_schema"]["labels"][0] == "IT과학"
    guideline = api(manager).get(f"/api/projects/{body['id']}/guideline/").json()
    assert guideline["version"] == 1 and guideline["is_current"]
    assert guideline["ethics"].strip() and guideline["pii"].strip()
    members = api(manager).get(f"/api/projects/{body['id']}/members/").json()["results"]
    assert [(m["username"], m["role"]) for m in members] == [(manager.username, "manager")]
    duplicate = api(manager).post("/api/projects/", {"name": "x", "slug": "ynat", "task_type": "tc"}, format="json")
    assert duplicate.status_code == 400


def test_unknown_task_type_is_rejected(api, make_user):
    response = api(make_user(can_create=True)).post(
        "/api/projects/", {"name": "x", "slug": "x", "task_type": "pos"}, format="json")
    assert response.status_code == 400 and "task_type" in response.json()


def test_members_roles_differ_per_project(api, make_user, make_project):
    manager = make_user(can_create=True)
    first, second = make_project("tc", manager=manager, slug="a"), make_project("sts", manager=manager, slug="b")
    lee = make_user("lee")
    assert api(manager).post(f"/api/projects/{first.id}/members/", {"username": "lee", "role": "annotator"},
                             format="json").status_code == 201
    assert api(manager).post(f"/api/projects/{second.id}/members/", {"username": "lee", "role": "maintainer"},
                             format="json").status_code == 201
    assert selectors.role_in_project(lee, first) == "annotator"
    assert selectors.role_in_project(lee, second) == "maintainer"
    unknown = api(manager).post(f"/api/projects/{first.id}/members/", {"username": "nobody", "role": "annotator"},
                                format="json")
    assert unknown.status_code == 400 and "nobody" in str(unknown.json())


def test_guideline_gate_then_annotate_and_resubmit(api, make_user, make_project, add_member):
    project = make_project("tc", k=2)
    add_items(project, 2)
    annotator = add_member(project, make_user(), Role.ANNOTATOR)
    client = api(annotator)

    gated = client.get(f"/api/projects/{project.id}/next/")
    assert gated.status_code == 403 and "guideline" in gated.json()["detail"]
    assert client.post(f"/api/projects/{project.id}/guideline/acknowledge/").status_code == 201

    first = client.get(f"/api/projects/{project.id}/next/")
    assert first.status_code == 200
    body = first.json()
    assert body["stage"] == "label" and body["item"]["payload"]["title"].startswith("제목")
    assert set(body["item"]) == {"id", "payload"}  # nothing about other annotators' work
    # Asking again before submitting resumes the same lease.
    assert client.get(f"/api/projects/{project.id}/next/").json()["assignment"] == body["assignment"]

    created = client.post(f"/api/projects/{project.id}/annotations/",
                          {"item": body["item"]["id"], "payload": TC_PAYLOAD, "seconds_spent": 4.5}, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["guideline_version"] == 1
    again = client.post(f"/api/projects/{project.id}/annotations/",
                        {"item": body["item"]["id"], "payload": {"label": "정치"}}, format="json")
    assert again.status_code == 200
    annotation = Annotation.objects.get(item_id=body["item"]["id"], annotator=annotator)
    assert annotation.payload["label"] == "정치"
    assert Annotation.objects.filter(item_id=body["item"]["id"]).count() == 1

    second = client.get(f"/api/projects/{project.id}/next/").json()
    assert second["item"]["id"] != body["item"]["id"]
    client.post(f"/api/projects/{project.id}/annotations/", {"item": second["item"]["id"], "payload": TC_PAYLOAD},
                format="json")
    assert client.get(f"/api/projects/{project.id}/next/").status_code == 204


def test_new_guideline_version_requires_new_acknowledgement(api, make_project, annotator_in):
    project = make_project("tc")
    add_items(project, 1)
    annotator = annotator_in(project)
    assert api(annotator).get(f"/api/projects/{project.id}/next/").status_code == 200
    manager = project.memberships.get(role=Role.MANAGER).user
    response = api(manager).post(f"/api/projects/{project.id}/guidelines/",
                                 {"instructions": "새 지침", "ethics": "윤리", "pii": "개인정보", "publish": True},
                                 format="json")
    assert response.status_code == 201 and response.json()["version"] == 2
    assert Guideline.objects.get(project=project, is_current=True).version == 2
    assert api(annotator).get(f"/api/projects/{project.id}/next/").status_code == 403


def test_invalid_payload_gets_the_validators_message(api, make_project, annotator_in):
    project = make_project("tc")
    add_items(project, 1)
    annotator = annotator_in(project)
    item = api(annotator).get(f"/api/projects/{project.id}/next/").json()["item"]
    response = api(annotator).post(f"/api/projects/{project.id}/annotations/",
                                   {"item": item["id"], "payload": {"label": "연예"}}, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == "payload.label" and "연예" in response.json()["detail"]
    assert not Annotation.objects.exists()


def test_cannot_annotate_an_item_not_assigned(api, make_project, annotator_in):
    project = make_project("tc")
    item = add_items(project, 1)[0]
    response = api(annotator_in(project)).post(f"/api/projects/{project.id}/annotations/",
                                               {"item": item.id, "payload": TC_PAYLOAD}, format="json")
    assert response.status_code == 400 and "not assigned" in response.json()["detail"]


def test_queue_gives_k_annotators_and_never_the_same_item_twice(api, make_project, annotator_in):
    project = make_project("tc", k=2)
    items = add_items(project, 3)
    annotators = [annotator_in(project) for _ in range(3)]
    seen: dict[int, list[int]] = {}
    for annotator in annotators:
        while True:
            response = api(annotator).get(f"/api/projects/{project.id}/next/")
            if response.status_code == 204:
                break
            item_id = response.json()["item"]["id"]
            assert annotator.id not in seen.get(item_id, [])
            seen.setdefault(item_id, []).append(annotator.id)
            api(annotator).post(f"/api/projects/{project.id}/annotations/", {"item": item_id, "payload": TC_PAYLOAD},
                                format="json")
    assert sorted(len(v) for v in seen.values()) == [2] * len(items)
    # Closest to completion first: the second annotator continues items the first started.
    assert Annotation.objects.count() == 6


def test_expired_lease_returns_item_to_pool(api, make_project, annotator_in):
    project = make_project("tc", k=1)
    add_items(project, 1)
    first, second = annotator_in(project), annotator_in(project)
    assert api(first).get(f"/api/projects/{project.id}/next/").status_code == 200
    assert api(second).get(f"/api/projects/{project.id}/next/").status_code == 204
    Assignment.objects.update(lease_expires_at="2000-01-01T00:00:00Z")
    assert services.assignments_expire() == 1
    assert api(second).get(f"/api/projects/{project.id}/next/").status_code == 200


def test_late_submission_past_k_is_refused(api, make_project, annotator_in):
    """Issue 23 (6): A takes, A's lease runs out, B takes and submits; A's late submission would be the item's
    second annotation at k = 1, so it is refused with 409 and stores nothing."""
    project = make_project("tc", k=1)
    (item,) = add_items(project, 1)
    first, second = annotator_in(project), annotator_in(project)
    url = f"/api/projects/{project.id}/annotations/"
    assert api(first).get(f"/api/projects/{project.id}/next/").json()["item"]["id"] == item.pk
    Assignment.objects.filter(annotator=first).update(lease_expires_at="2000-01-01T00:00:00Z")
    assert api(second).get(f"/api/projects/{project.id}/next/").json()["item"]["id"] == item.pk
    assert api(second).post(url, {"item": item.pk, "payload": TC_PAYLOAD}, format="json").status_code == 201
    late = api(first).post(url, {"item": item.pk, "payload": TC_PAYLOAD}, format="json")
    assert late.status_code == 409, late.content
    assert late.json()["code"] == "conflict" and "ran out" in late.json()["detail"]
    assert list(Annotation.objects.filter(item=item).values_list("annotator", flat=True)) == [second.pk]
    assert Assignment.objects.get(annotator=first).status == "expired"
    assert item.queue_slots.get().live == 1


def test_late_submission_with_a_free_place_is_kept(api, make_project, annotator_in):
    """A late submission that does not push the item past k takes the free place (k = 2: A late, B on time)."""
    project = make_project("tc", k=2)
    (item,) = add_items(project, 1)
    first, second = annotator_in(project), annotator_in(project)
    url = f"/api/projects/{project.id}/annotations/"
    api(first).get(f"/api/projects/{project.id}/next/")
    Assignment.objects.filter(annotator=first).update(lease_expires_at="2000-01-01T00:00:00Z")
    assert api(second).get(f"/api/projects/{project.id}/next/").json()["item"]["id"] == item.pk
    assert api(second).post(url, {"item": item.pk, "payload": TC_PAYLOAD}, format="json").status_code == 201
    assert api(first).post(url, {"item": item.pk, "payload": TC_PAYLOAD}, format="json").status_code == 201
    assert Annotation.objects.filter(item=item).count() == 2 and item.queue_slots.get().live == 2


def test_submit_answers_with_the_next_assignment(api, make_project, annotator_in):
    """One round trip per annotation: the submission's answer carries what ``next/`` would give, then null."""
    project = make_project("tc", k=1)
    items = add_items(project, 2)
    annotator = annotator_in(project)
    client = api(annotator)
    url = f"/api/projects/{project.id}/annotations/"
    first = client.get(f"/api/projects/{project.id}/next/").json()
    submitted = client.post(url, {"item": first["item"]["id"], "payload": TC_PAYLOAD}, format="json")
    assert submitted.status_code == 201 and submitted.json()["payload"]["label"] == "사회"
    following = submitted.json()["next"]
    assert following["item"] == {"id": items[1].pk, "payload": {"title": "제목 1번 뉴스"}}
    assert following["stage"] == "label" and following["suggestion"] is None
    assert client.get(f"/api/projects/{project.id}/next/").json() == following  # the same live lease
    resubmitted = client.post(url, {"item": first["item"]["id"], "payload": TC_PAYLOAD}, format="json")
    assert resubmitted.status_code == 200 and resubmitted.json()["next"] == following
    last = client.post(url, {"item": following["item"]["id"], "payload": TC_PAYLOAD}, format="json")
    assert last.status_code == 201 and last.json()["next"] is None  # nothing left, as next/'s 204
    # A changed guideline: the submission is stored, and the client is sent to next/ (which asks for it).
    guideline = services.guideline_create(project=project, instructions="새 지침", ethics="윤리", pii="개인정보",
                                          created_by=None)
    services.guideline_publish(guideline=guideline)
    again = client.post(url, {"item": following["item"]["id"], "payload": TC_PAYLOAD}, format="json")
    assert again.status_code == 200 and "next" not in again.json()


def test_skip_and_flag_leave_the_queue(api, make_project, annotator_in):
    project = make_project("tc", k=2)
    items = add_items(project, 2)
    annotator, other = annotator_in(project), annotator_in(project)
    first = api(annotator).get(f"/api/projects/{project.id}/next/").json()
    skipped = api(annotator).post(f"/api/projects/{project.id}/assignments/{first['assignment']}/skip/",
                                  {"reason": "모르겠음"}, format="json")
    assert skipped.status_code == 200 and skipped.json()["status"] == "skipped"
    second = api(annotator).get(f"/api/projects/{project.id}/next/").json()
    assert second["item"]["id"] != first["item"]["id"]
    flag = api(annotator).post(f"/api/projects/{project.id}/flags/",
                               {"item": second["item"]["id"], "kind": "pii", "note": "전화번호가 보입니다"},
                               format="json")
    assert flag.status_code == 201
    assert api(annotator).get(f"/api/projects/{project.id}/next/").status_code == 204
    # The flagged item waits for the manager; the other annotator gets only the unflagged one.
    got = api(other).get(f"/api/projects/{project.id}/next/").json()["item"]["id"]
    assert got == first["item"]["id"] and got != second["item"]["id"]
    manager = project.memberships.get(role=Role.MANAGER).user
    resolved = api(manager).post(f"/api/projects/{project.id}/flags/{flag.json()['id']}/resolve/",
                                 {"resolution": "dropped", "note": "개인정보"}, format="json")
    assert resolved.status_code == 200
    assert Item.objects.get(pk=items[1].pk if items[1].pk == second["item"]["id"] else items[0].pk
                            ).screening_status == "dropped"
    again = api(manager).post(f"/api/projects/{project.id}/flags/{flag.json()['id']}/resolve/",
                              {"resolution": "kept"}, format="json")
    assert again.status_code == 409


def test_flagging_an_item_of_another_project_answers_as_a_missing_item(api, make_project, annotator_in):
    # Issue 35, finding 10: "belongs to another project" told a member which ids exist elsewhere.
    project, other = make_project("tc", k=1), make_project("tc", k=1)
    add_items(project, 1)
    foreign = add_items(other, 1)[0]
    missing = Item.objects.order_by("-pk").first().pk + 1000
    for user in (project.memberships.get(role=Role.MANAGER).user, annotator_in(project)):
        answers = {}
        for item_id in (foreign.pk, missing):
            response = api(user).post(f"/api/projects/{project.id}/flags/", {"item": item_id, "kind": "pii"},
                                      format="json")
            assert response.status_code == 400, response.json()
            answers[item_id] = response.json()
        assert str(answers[foreign.pk]).replace(str(foreign.pk), "N") == str(answers[missing]).replace(
            str(missing), "N")
        assert "another project" not in str(answers[foreign.pk])
    assert not foreign.flags.exists()


def test_annotators_see_only_their_own_annotations(api, make_project, annotator_in):
    project = make_project("tc", k=2)
    add_items(project, 1)
    kim, lee = annotator_in(project), annotator_in(project)
    for user in (kim, lee):
        item = api(user).get(f"/api/projects/{project.id}/next/").json()["item"]
        api(user).post(f"/api/projects/{project.id}/annotations/", {"item": item["id"], "payload": TC_PAYLOAD},
                       format="json")
    mine = api(kim).get(f"/api/projects/{project.id}/annotations/").json()["results"]
    assert [a["annotator"] for a in mine] == [kim.username]
    lees = Annotation.objects.get(annotator=lee)
    assert api(kim).get(f"/api/projects/{project.id}/annotations/{lees.id}/").status_code == 404
    progress = api(kim).get(f"/api/projects/{project.id}/progress/").json()
    assert progress == {"done": 1, "skipped": 0, "remaining": 0, "held_by_others": 0, "next_project": None}
    manager = project.memberships.get(role=Role.MANAGER).user
    assert len(api(manager).get(f"/api/projects/{project.id}/annotations/").json()["results"]) == 2


def test_nli_writer_never_validates_own_hypothesis(api, make_project, annotator_in):
    project = make_project("nli", k=2)
    item = services.item_create(project=project, payload={"premise": "숙소가 역에서 가까워 편했다."})
    writer, v1, v2 = (annotator_in(project) for _ in range(3))
    task = api(writer).get(f"/api/projects/{project.id}/next/").json()
    assert task["stage"] == "writing"
    # Nobody can validate before the hypothesis exists.
    assert api(v1).get(f"/api/projects/{project.id}/next/").status_code == 204
    written = {"hypothesis": "숙소는 역과 멀다.", "label": "contradiction"}
    response = api(writer).post(f"/api/projects/{project.id}/annotations/", {"item": item.id, "payload": written},
                                format="json")
    assert response.status_code == 201, response.json()
    assert api(writer).get(f"/api/projects/{project.id}/next/").status_code == 204
    for validator in (v1, v2):
        got = api(validator).get(f"/api/projects/{project.id}/next/").json()
        assert got["stage"] == "validation" and got["item"]["payload"]["hypothesis"] == "숙소는 역과 멀다."
        assert api(validator).post(f"/api/projects/{project.id}/annotations/",
                                   {"item": item.id, "payload": {"label": "contradiction"}},
                                   format="json").status_code == 201
    assert Annotation.objects.filter(item=item, stage="validation").count() == 2
    assert Annotation.objects.filter(item=item, stage="writing").count() == 1


def test_openapi_schema_is_served(client):
    response = client.get("/api/schema/")
    assert response.status_code == 200 and b"/api/projects/{project_pk}/next/" in response.content
    assert client.get("/api/docs/").status_code == 200


def test_a_project_patch_changes_its_plain_fields_through_the_service(api, make_project):
    project = make_project("tc")
    manager = project.memberships.get(role=Role.MANAGER).user
    response = api(manager).patch(f"/api/projects/{project.id}/", {
        "name": "새 이름", "annotators_per_item": 5, "options": {"lease_minutes": 10}, "task_type": "ner",
        "slug": "moved"}, format="json")
    assert response.status_code == 200, response.json()
    project.refresh_from_db()
    # The task type and the slug stay as they were made; the rest changes.
    assert (project.name, project.annotators_per_item, project.options) == ("새 이름", 5, {"lease_minutes": 10})
    assert (project.task_type, project.slug) == ("tc", response.json()["slug"]) and project.slug != "moved"
    with pytest.raises(services.ServiceError):
        services.project_update(project=project, changes={"task_type": "ner"})


def test_project_without_annotations_can_be_deleted(api, make_project):
    project = make_project("tc")
    manager = project.memberships.get(role=Role.MANAGER).user
    assert api(manager).delete(f"/api/projects/{project.id}/").status_code == 204


def test_keeping_the_last_flag_of_a_screened_item_returns_it_to_the_queue(api, make_project):
    project = make_project("tc")
    item = services.item_create(project=project, payload={"title": "검토가 필요한 기사"})
    Item.objects.filter(pk=item.pk).update(screening_status="needs_review")  # as a screener would have left it
    flag = services.flag_create(item=item, user=None, kind="toxic", note="lexicon hit")
    manager = project.memberships.get(role=Role.MANAGER).user
    response = api(manager).post(f"/api/projects/{project.id}/flags/{flag.id}/resolve/", {"resolution": "kept"},
                                 format="json")
    assert response.status_code == 200
    item.refresh_from_db()
    assert item.screening_status == "kept"


def test_ids_beyond_the_id_columns_are_not_found(api, make_project, annotator_in):
    project = make_project("tc", k=1)
    client = api(annotator_in(project))
    huge = 2**80
    assert client.get(f"/api/projects/{huge}/next/").status_code == 404
    response = client.post(f"/api/projects/{project.pk}/annotations/", {"item": huge, "payload": {"label": "사회"}},
                           format="json")
    assert response.status_code == 400 and response.json()["code"] == "not_assigned"
