"""The audit trail: every change a person makes to an annotation, a gold decision, a guideline, a release or
an import is recorded (who, when, before and after) and shown to managers only."""

from __future__ import annotations

import orjson
import pytest
from django.urls import reverse
from django.utils import translation

from annotation import services
from annotation.gold.services import gold_for_item
from annotation.models import AuditEvent, Item, Role
from annotation.task_types import get_task_type
from datasets_build.services import items_import
from tests.builders import client_for, load_records, sample_records

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(make_project, make_user, add_member, annotator_in):
    manager = make_user("audit-manager", can_create=True)
    project = make_project("tc", manager=manager, k=1)
    maintainer = add_member(project, make_user("audit-maintainer"), Role.MAINTAINER)
    return {"project": project, "manager": manager, "maintainer": maintainer,
            "annotator": annotator_in(project, "audit-annotator")}


def _events(api, user, project, **params) -> list[dict]:
    response = api(user).get(f"/api/projects/{project.pk}/audit/", params)
    assert response.status_code == 200, response.data
    return response.data["results"]


def test_annotation_edit_adjudication_guideline_and_release_are_recorded(team, api, release_root,
                                                                          django_capture_on_commit_callbacks):
    project, manager, maintainer, annotator = (team[k] for k in ("project", "manager", "maintainer", "annotator"))
    load_records(project, sample_records("tc", 20))  # complete: k = 1 and three corpus labels each
    services.item_create(project=project, payload={"title": "감사 기록 시험 기사"}, external_id="audit-open")
    base = f"/api/projects/{project.pk}/"

    # An annotation submitted, then edited: one create event and one update with the old payload.
    item_id = api(annotator).get(base + "next/").data["item"]["id"]
    assert api(annotator).post(base + "annotations/", {"item": item_id, "payload": {"label": "사회"}},
                               format="json").status_code == 201
    assert api(annotator).post(base + "annotations/", {"item": item_id, "payload": {"label": "경제"}},
                               format="json").status_code == 200
    # A resubmission of the same answer (a retry) changes nothing and records nothing.
    assert api(annotator).post(base + "annotations/", {"item": item_id, "payload": {"label": "경제"}},
                               format="json").status_code == 200
    annotation_events = _events(api, manager, project, object_type="annotation")
    assert [(e["action"], e["actor"]) for e in annotation_events] == [("update", annotator.username),
                                                                       ("create", annotator.username)]
    update = annotation_events[0]
    assert update["before"]["label"] == "사회" and update["after"]["payload"]["label"] == "경제"
    assert update["after"]["item"] == item_id and update["at"]

    # A manager's adjudication: before is the rule's gold, after the decision and its reason.
    rule_gold = gold_for_item(Item.objects.get(pk=item_id))
    decided = api(manager).post(base + f"gold/{item_id}/adjudicate/", {"payload": {"label": "정치"},
                                                                      "reason": "지침 3.2",
                                                                      "version": rule_gold.version}, format="json")
    assert decided.status_code == 200, decided.data
    (gold_event,) = _events(api, manager, project, object_type="gold")
    assert gold_event["actor"] == manager.username and gold_event["object_id"] == item_id
    assert gold_event["before"] == {"status": rule_gold.status, "payload": rule_gold.payload,
                                    "version": rule_gold.version}
    assert gold_event["after"] == {"status": "adjudicated", "payload": {"label": "정치"}, "reason": "지침 3.2",
                                   "accepted_annotation": None}

    # A guideline draft and its publication.
    created = api(manager).post(base + "guidelines/", {"instructions": "새 지침", "ethics": "윤리", "pii": "개인정보"},
                                format="json")
    assert created.status_code == 201
    assert api(manager).post(base + f"guidelines/{created.data['id']}/publish/").status_code == 200
    guideline_events = _events(api, manager, project, object_type="guideline")
    assert [(e["action"], e["actor"]) for e in guideline_events[:2]] == [("publish", manager.username),
                                                                         ("create", manager.username)]
    assert guideline_events[0]["before"] == {"current_version": 1}
    assert guideline_events[0]["after"]["current_version"] == 2
    assert guideline_events[1]["after"]["instructions"] == "새 지침"

    # A release built by a manager and published by a maintainer: its 2 dev records allow no verdict, so it
    # is inconclusive and publishing it takes an override, whose reason the trail keeps.
    with django_capture_on_commit_callbacks(execute=True):
        built = api(manager).post(base + "releases/", {"version": "1.0.0", "formats": ["klue", "jsonl"]},
                                  format="json")
    assert built.status_code == 202, built.data
    publish = base + f"releases/{built.data['id']}/publish/"
    assert api(maintainer).post(publish).status_code == 409
    assert api(maintainer).post(publish, {"override_reason": "파일럿 공개"}, format="json").status_code == 200
    release_events = _events(api, manager, project, object_type="release")
    assert [(e["action"], e["actor"]) for e in release_events] == [("publish", maintainer.username),
                                                                   ("create", manager.username)]
    assert release_events[0]["before"] == {"version": "1.0.0", "status": "inconclusive"}
    assert release_events[0]["after"]["status"] == "published"
    assert release_events[0]["after"]["override_reason"] == "파일럿 공개"

    # Unfiltered, the list holds all of them, newest first; the page shows the same trail.
    everything = _events(api, manager, project)
    assert everything[0]["object_type"] == "release" and len(everything) == AuditEvent.objects.filter(
        project=project).count()
    from django.test import Client

    page = Client()
    page.force_login(manager)
    html = page.get(reverse("annotation:project-audit", args=[project.pk]), {"object_type": "gold"}).content.decode()
    assert "지침 3.2" in html and "adjudicate" in html and "새 지침" not in html


def test_annotators_and_maintainers_cannot_read_the_trail(team, api, make_user, client):
    project = team["project"]
    url = f"/api/projects/{project.pk}/audit/"
    assert api(team["annotator"]).get(url).status_code == 403
    assert api(team["maintainer"]).get(url).status_code == 403
    assert api(make_user("audit-outsider")).get(url).status_code == 404
    client.force_login(team["annotator"])
    assert client.get(reverse("annotation:project-audit", args=[project.pk])).status_code == 403


def test_an_import_is_one_event_and_a_failed_one_none(team, tmp_path):
    project, manager = team["project"], team["manager"]
    good = tmp_path / "good.jsonl"
    good.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in sample_records("tc", 30)))
    result = items_import(project, good, "jsonl", source="audit-corpus", license="CC-BY-SA-4.0", user=manager)
    assert result.ok and result.items == 30 and result.annotations > 0
    (event,) = AuditEvent.objects.filter(project=project, object_type="import")
    assert event.actor == manager and event.action == "import"
    assert event.after == {"file": "good.jsonl", "format": "jsonl", "source": "audit-corpus", "items": 30,
                           "annotations": result.annotations}
    # The imported annotations are in that one event, not one row each.
    assert not AuditEvent.objects.filter(project=project, object_type="annotation").exists()

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"guid": "x-v1_dev_1", "title": "제목"}\n{not json\n', encoding="utf-8")
    assert not items_import(project, bad, "jsonl", source="audit-bad", license="CC0-1.0", user=manager).ok
    assert AuditEvent.objects.filter(project=project, object_type="import").count() == 1


def test_known_answers_and_release_deletion_are_recorded(team, api, release_root):
    project, manager = team["project"], team["manager"]
    (item,) = load_records(project, sample_records("tc", 1))
    base = f"/api/projects/{project.pk}/"
    assert api(manager).post(base + f"gold/{item.pk}/known/", {"payload": {"label": "경제"}},
                             format="json").status_code == 200
    assert api(manager).delete(base + f"gold/{item.pk}/known/").status_code in (200, 204)
    actions = [e["action"] for e in _events(api, manager, project, object_type="gold")]
    assert actions == ["clear_known_answer", "set_known_answer"]

    from exports import services as release_services
    from exports.models import ReleaseStatus

    release = release_services.release_create(project=project, version="0.1.0", formats=["jsonl"], user=manager)
    release.status = ReleaseStatus.FAILED
    release.save(update_fields=["status"])
    assert api(manager).delete(base + f"releases/{release.pk}/").status_code == 204
    delete_event = _events(api, manager, project, object_type="release")[0]
    assert delete_event["action"] == "delete" and delete_event["before"] == {"version": "0.1.0", "status": "failed"}



def test_the_korean_trail_names_what_changed_as_its_subject_not_a_grammatical_object(team):
    """"Object" on the trail is the thing changed (대상); the relation task's "Object" entity stays 목적어."""
    page = client_for(team["manager"]).get(reverse("annotation:project-audit", args=[team["project"].pk]),
                                           HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert '<label for="audit-type">대상</label>' in page and "<th>대상</th>" in page and "목적어" not in page
    with translation.override("ko"):
        assert get_task_type("re").widget_strings()["re_object"] == "목적어"
