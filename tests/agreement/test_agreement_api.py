"""The agreement, gold and adjudication API through the user's path (token-authenticated clients)."""

from __future__ import annotations

import time

import pytest

from annotation import services
from annotation.models import AgreementReport, Annotation, GoldLabel, JobStatus, Role

VOTES = {  # item -> labels of coders 0..2
    **{f"same{n}": ["사회", "사회", "사회"] for n in range(8)},
    "split": ["사회", "경제", "정치"],
    "pair": ["경제", "경제", "사회"],
    "ai": ["IT과학", "IT과학", "경제"],
}


@pytest.fixture
def labelled(make_project, make_user, add_member):
    project = make_project("tc", k=3, slug="api-agree")
    manager = project.created_by
    coders = [add_member(project, make_user(f"api-coder{i}"), Role.ANNOTATOR) for i in range(3)]
    maintainer = add_member(project, make_user("api-maintainer"), Role.MAINTAINER)
    items = {}
    for key, labels in VOTES.items():
        item = services.item_create(project=project, payload={"title": f"기사 {key}", "source": "news" if key != "ai"
                                                              else "blog"}, external_id=key)
        items[key] = item
        for coder, label in zip(coders, labels, strict=True):
            Annotation.objects.create(item=item, annotator=coder, stage="label", payload={"label": label},
                                      seconds_spent=12.0)
    return project, manager, maintainer, coders, items


@pytest.mark.django_db
def test_report_is_queued_then_served(labelled, api, django_capture_on_commit_callbacks):
    project, manager, maintainer, coders, _ = labelled
    url = f"/api/projects/{project.pk}/agreement/"
    with django_capture_on_commit_callbacks(execute=True):  # the eager Celery task runs at commit
        first = api(manager).get(url)
    assert first.status_code == 202 and first.data["job"]["status"] == "pending"
    report = api(maintainer).get(url)
    assert report.status_code == 200
    assert set(report.data) >= {"project", "task_type", "annotators", "items_counted", "items_excluded",
                                "coefficients"}
    assert report.data["job"]["status"] == "done" and report.data["job"]["progress"] == 100
    assert report.data["items_counted"] == len(VOTES)
    assert AgreementReport.objects.filter(project=project).count() == 1
    quality = api(manager).get(f"/api/projects/{project.pk}/agreement/annotators/")
    assert quality.status_code == 200
    assert {q["username"] for q in quality.data["annotators"]} == {"api-coder0", "api-coder1", "api-coder2"}
    for coder in coders:
        assert api(coder).get(url).status_code == 403  # annotators never see agreement


@pytest.mark.django_db
def test_items_by_disagreement_with_filters(labelled, api):
    project, manager, *_ = labelled
    url = f"/api/projects/{project.pk}/agreement/items/"
    response = api(manager).get(url)
    assert response.status_code == 200
    rows = response.data["results"]
    assert rows[0]["external_id"] == "split" and rows[0]["disagreement"] == pytest.approx(1.0)
    assert rows[0]["labels"] == {"사회": 1, "경제": 1, "정치": 1}
    assert rows[-1]["disagreement"] == 0.0 and response.data["count"] == len(VOTES)
    assert [r["external_id"] for r in api(manager).get(url, {"label": "IT과학"}).data["results"]] == ["ai"]
    assert [r["external_id"] for r in api(manager).get(url, {"source": "blog"}).data["results"]] == ["ai"]
    assert api(manager).get(url, {"annotator": "api-coder1", "limit": 2}).data["count"] == len(VOTES)
    assert len(api(manager).get(url, {"limit": 2}).data["results"]) == 2


@pytest.mark.django_db
def test_gold_compute_and_adjudication_with_conflict(labelled, api, make_user, add_member):
    project, manager, maintainer, coders, items = labelled
    other = add_member(project, make_user("api-manager2"), Role.MANAGER)
    computed = api(manager).post(f"/api/projects/{project.pk}/gold/")
    assert computed.status_code == 200
    assert computed.data["statuses"] == {"resolved": 10, "needs_adjudication": 1}
    waiting = api(maintainer).get(f"/api/projects/{project.pk}/gold/", {"status": "needs_adjudication"})
    assert [g["external_id"] for g in waiting.data["results"]] == ["split"]
    version = waiting.data["results"][0]["version"]
    url = f"/api/projects/{project.pk}/gold/{items['split'].pk}/adjudicate/"
    accepted = Annotation.objects.get(item=items["split"], annotator=coders[1])
    won = api(manager).post(url, {"annotation": accepted.pk, "reason": "경제 정책 기사", "version": version},
                            format="json")
    assert won.status_code == 200 and won.data["payload"] == {"label": "경제"} and won.data["status"] == "adjudicated"
    lost = api(other).post(url, {"payload": {"label": "정치"}, "reason": "정치 기사", "version": version},
                           format="json")
    assert lost.status_code == 409 and lost.data["code"] == "conflict"
    invalid = api(other).post(url, {"payload": {"label": "날씨"}, "reason": "?", "version": won.data["version"]},
                              format="json")
    assert invalid.status_code == 400 and invalid.data["field"] == "payload.label"
    assert api(maintainer).post(url, {"payload": {"label": "정치"}, "reason": "x"}, format="json").status_code == 403
    assert GoldLabel.objects.get(item=items["split"]).payload == {"label": "경제"}


@pytest.mark.django_db
def test_known_answers_through_the_api(labelled, api):
    project, manager, _, _, items = labelled
    url = f"/api/projects/{project.pk}/gold/{items['pair'].pk}/known/"
    response = api(manager).post(url, {"payload": {"label": "경제"}}, format="json")
    assert response.status_code == 200 and response.data["status"] == "known"
    items["pair"].refresh_from_db()
    assert items["pair"].is_gold_check
    assert api(manager).delete(url).status_code == 204
    items["pair"].refresh_from_db()
    assert not items["pair"].is_gold_check


@pytest.mark.worker
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_report_computed_by_the_live_worker(live_worker, labelled, api):
    project, manager, *_ = labelled
    url = f"/api/projects/{project.pk}/agreement/"
    first = api(manager).get(url)
    assert first.status_code == 202
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        response = api(manager).get(url)
        if response.status_code == 200:
            break
        assert response.data["job"]["status"] in {JobStatus.PENDING, JobStatus.RUNNING}
        time.sleep(0.5)
    assert response.status_code == 200 and response.data["items_counted"] == len(VOTES)
    assert AgreementReport.objects.get(project=project).status == JobStatus.DONE
