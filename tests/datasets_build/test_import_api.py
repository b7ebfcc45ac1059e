"""Imports through the API and the browser: upload → job → poll; review queue; sources and licences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Flag, FlagResolution, Item, Role, ScreeningStatus
from datasets_build import services
from datasets_build.models import ImportJob, ImportStatus
from tests.builders import jsonl

DEMO = Path(__file__).resolve().parents[2] / "demo" / "corpus"


pytestmark = pytest.mark.usefixtures("media")


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


@pytest.mark.django_db
def test_upload_runs_the_job_and_the_job_can_be_polled(api, make_project, django_capture_on_commit_callbacks, media):
    project = make_project("tc")
    manager = project.created_by
    client = api(manager)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/projects/{project.pk}/imports/", {
            "file": upload("tc.jsonl", (DEMO / "tc.jsonl").read_bytes()), "format": "jsonl",
            "source": "goldset-demo", "license": "CC-BY-SA-4.0",
        }, format="multipart")
    assert response.status_code == 202, response.data
    job_id = response.data["id"]
    assert response.data["status"] == ImportStatus.QUEUED
    detail = client.get(f"/api/projects/{project.pk}/imports/{job_id}/").data
    assert detail["status"] == ImportStatus.SUCCEEDED
    assert detail["progress"] == {"read": 40, "screened": 40, "written": 40}
    assert detail["items_written"] == 40 and detail["annotations_written"] == 40
    assert detail["errors"] == [] and detail["summary"]["duplicates_skipped"] == 0
    assert "stored_path" not in detail
    assert detail["celery_task_id"].startswith(f"import-{job_id}-")
    assert Item.objects.filter(project=project).count() == 40
    # The upload was stored under a random name and removed once imported.
    assert list((media / "imports").iterdir()) == []
    assert client.get(f"/api/projects/{project.pk}/imports/").data[0]["id"] == job_id


@pytest.mark.django_db
def test_a_failed_job_reports_its_errors_and_imports_nothing(api, make_project, django_capture_on_commit_callbacks):
    project = make_project("tc")
    client = api(project.created_by)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/projects/{project.pk}/imports/", {
            "file": upload("bad.jsonl", jsonl({"guid": "a", "title": "좋은 제목"}, {"guid": "b"})), "format": "jsonl",
        }, format="multipart")
    job = client.get(f"/api/projects/{project.pk}/imports/{response.data['id']}/").data
    assert job["status"] == ImportStatus.FAILED
    assert job["errors"] == [{"record": 2, "field": "title", "message": "is required"}]
    assert "nothing imported" in job["message"]
    assert not Item.objects.filter(project=project).exists()


@pytest.mark.django_db
def test_uploads_are_checked_for_extension_size_and_options(api, make_project, settings):
    project = make_project("tc")
    client = api(project.created_by)
    url = f"/api/projects/{project.pk}/imports/"
    response = client.post(url, {"file": upload("tc.exe", b"x"), "format": "jsonl"}, format="multipart")
    assert response.status_code == 400 and ".exe" in response.data["detail"]
    response = client.post(url, {"file": upload("tc.jsonl", b"x"), "format": "jsonl", "pii": "shred"},
                           format="multipart")
    assert response.status_code == 400 and "pii" in response.data
    settings.GOLDSET_MAX_UPLOAD_MB = 0
    response = client.post(url, {"file": upload("tc.jsonl", b'{"title": "x"}\n'), "format": "jsonl"},
                           format="multipart")
    assert response.status_code == 400 and "upload limit" in response.data["detail"]
    assert not ImportJob.objects.exists()


@pytest.mark.django_db
def test_running_a_job_twice_imports_once(make_project, media):
    project = make_project("tc")
    job = services.import_job_create(project=project, upload=upload("tc.jsonl", (DEMO / "tc.jsonl").read_bytes()),
                                     file_name="tc.jsonl", fmt="jsonl", user=project.created_by)
    services.import_job_run(job.pk)
    again = services.import_job_run(job.pk)  # a redelivered message after a worker crash
    assert again.status == ImportStatus.SUCCEEDED
    assert Item.objects.filter(project=project).count() == 40


@pytest.mark.django_db
def test_a_job_interrupted_mid_import_leaves_nothing_and_reruns_cleanly(make_project, monkeypatch):
    project = make_project("tc")
    job = services.import_job_create(project=project, upload=upload("tc.jsonl", (DEMO / "tc.jsonl").read_bytes()),
                                     file_name="tc.jsonl", fmt="jsonl", user=project.created_by)
    from datasets_build import pipeline

    original = pipeline.ImportPipeline._write  # a batch's writing
    calls = {"n": 0}

    def crash_after_writing(self, *batch):
        original(self, *batch)
        calls["n"] += 1
        if calls["n"] == 1 and self.outcome.items:
            raise SystemExit("worker killed")

    monkeypatch.setattr(pipeline.ImportPipeline, "_write", crash_after_writing)
    with pytest.raises(SystemExit):
        services.import_job_run(job.pk)
    assert not Item.objects.filter(project=project).exists()
    assert ImportJob.objects.get(pk=job.pk).status == ImportStatus.RUNNING
    monkeypatch.setattr(pipeline.ImportPipeline, "_write", original)
    assert services.import_job_run(job.pk).status == ImportStatus.SUCCEEDED
    assert Item.objects.filter(project=project).count() == 40


@pytest.mark.django_db
def test_sources_and_pii_report(api, make_project, add_member, make_user, tmp_path):
    project = make_project("tc")
    path = tmp_path / "nc.jsonl"
    path.write_bytes(jsonl({"guid": "n-1", "title": "문의 010-2345-6789"},
                           {"guid": "n-2", "title": "홍길동 씨 인터뷰"}))
    services.items_import(project, path, "jsonl", source="blog-corpus", license="CC-BY-NC-ND-4.0")
    maintainer = add_member(project, make_user("keeper"), Role.MAINTAINER)
    sources = api(maintainer).get(f"/api/projects/{project.pk}/sources/").data
    [source] = sources
    assert source["name"] == "blog-corpus" and source["items"] == 2 and source["license"] == "CC-BY-NC-ND-4.0"
    assert not source["derivatives"] and not source["commercial"]
    assert any("no derivatives" in w.lower() or "(ND)" in w for w in source["warnings"])
    assert any("non-commercial" in w for w in source["warnings"])
    report = api(maintainer).get(f"/api/projects/{project.pk}/pii-report/").data
    assert report["items_with_pii"] == 2
    assert report["types"] == {"phone": {"total": 1, "pseudonymized": 1}, "person": {"total": 1, "detected": 1}}
    assert "010" not in json.dumps(report)


@pytest.mark.django_db
def test_review_queue_keep_and_drop(api, make_project, tmp_path):
    project = make_project("tc")
    path = tmp_path / "r.jsonl"
    path.write_bytes(jsonl({"guid": "r-1", "title": "홍길동 씨 인터뷰"}, {"guid": "r-2", "title": "이 씨발 놈들"},
                           {"guid": "r-3", "title": "평범한 기사 제목"}))
    services.items_import(project, path, "jsonl")
    client = api(project.created_by)
    queue = client.get(f"/api/projects/{project.pk}/screening-review/").data
    assert [row["external_id"] for row in queue] == ["r-1", "r-2"]
    assert queue[0]["flags"][0]["kind"] == "pii" and queue[1]["flags"][0]["kind"] == "toxic"
    r1, r2 = (Item.objects.get(external_id=e) for e in ("r-1", "r-2"))
    response = client.post(f"/api/projects/{project.pk}/screening-review/{r1.pk}/",
                           {"decision": "keep", "reason": "공인 인터뷰"}, format="json")
    assert response.status_code == 200 and response.data["screening_status"] == ScreeningStatus.KEPT
    response = client.post(f"/api/projects/{project.pk}/screening-review/{r2.pk}/",
                           {"decision": "drop", "reason": "욕설"}, format="json")
    assert response.data["screening_status"] == ScreeningStatus.DROPPED
    flag = Flag.objects.get(item=r2)
    assert flag.resolution == FlagResolution.DROPPED and flag.resolution_note == "욕설"
    assert client.get(f"/api/projects/{project.pk}/screening-review/").data == []
    response = client.post(f"/api/projects/{project.pk}/screening-review/{r1.pk}/",
                           {"decision": "keep", "reason": " "}, format="json")
    assert response.status_code == 400
    # Kept items reach annotators; dropped ones never do.
    from annotation.selectors import annotatable_items

    assert set(annotatable_items(project).values_list("external_id", flat=True)) == {"r-1", "r-3"}


# -- pages ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_import_page_uploads_and_shows_the_job(client, make_project, django_capture_on_commit_callbacks):
    project = make_project("tc")
    client.force_login(project.created_by)
    page = client.get(f"/projects/{project.pk}/import/")
    assert page.status_code == 200 and "Import a file" in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/projects/{project.pk}/import/", {
            "file": upload("tc.jsonl", (DEMO / "tc.jsonl").read_bytes()), "format": "jsonl", "source": "",
            "license": "", "pii": "", "encoding": "auto", "duplicates": "skip",
        })
    assert response.status_code == 302
    job = ImportJob.objects.get(project=project)
    assert response.url.endswith(f"?job={job.pk}")
    body = client.get(response.url).content.decode()
    # The job's part of the page follows the job through the shared live region (as a release build does).
    assert "live_region.js" in body and f'?job={job.pk}&amp;part=live' in body and 'data-live-done="1"' in body
    assert "Imported 40 items and 40 annotations." in body and ">40<" in body


@pytest.mark.django_db
def test_import_page_shows_errors_of_a_failed_job(client, make_project, django_capture_on_commit_callbacks):
    project = make_project("tc")
    client.force_login(project.created_by)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/projects/{project.pk}/import/", {
            "file": upload("bad.jsonl", jsonl({"guid": "x"})), "format": "jsonl", "encoding": "auto",
            "duplicates": "skip",
        })
    body = client.get(response.url).content.decode()
    assert "Nothing was imported" in body and "is required" in body


@pytest.mark.django_db
def test_a_failed_import_s_errors_read_in_korean(client, make_project, django_capture_on_commit_callbacks):
    """The record errors a Korean team meets most (a missing or empty field, a value of the wrong type, a line
    that is not JSON) are told in Korean, not kept as English marked lang="en"."""
    project = make_project("tc")
    client.force_login(project.created_by)
    lines = b'{"guid": "a"}\n{"guid": "b", "title": 3}\n{"guid": "c", "title": ""}\n[1]\n{"guid": "d", "title": \n'
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/projects/{project.pk}/import/", {
            "file": upload("bad.jsonl", lines), "format": "jsonl", "encoding": "auto", "duplicates": "skip",
        })
    body = client.get(response.url, HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    table = body.split("<tbody>")[1].split("</tbody>")[0]
    for korean in ("필수 필드인데 없습니다", "문자열이어야 하는데 숫자입니다", "비어 있으면 안 됩니다",
                   "각 줄은 JSON 객체여야 하는데 목록입니다", "올바른 JSON이 아닙니다 (줄의 "):
        assert korean in table, korean
    assert 'lang="en">' not in table.replace('<td lang="en"><code>', "")


@pytest.mark.django_db
def test_pages_are_for_managers(client, make_project, add_member, make_user):
    project = make_project("tc")
    annotator = add_member(project, make_user("ann"), Role.ANNOTATOR)
    maintainer = add_member(project, make_user("keeper"), Role.MAINTAINER)
    outsider = make_user("out")
    for path in ("import/", "review/", "sources/"):
        url = f"/projects/{project.pk}/{path}"
        client.force_login(annotator)
        assert client.get(url).status_code == 403
        client.force_login(outsider)
        assert client.get(url).status_code == 404
        client.force_login(maintainer)
        assert client.get(url).status_code == (200 if path == "sources/" else 403)
        client.force_login(project.created_by)
        assert client.get(url).status_code == 200


@pytest.mark.django_db
def test_review_page_keeps_and_drops_with_a_reason(client, make_project, tmp_path):
    project = make_project("tc")
    path = tmp_path / "r.jsonl"
    path.write_bytes(jsonl({"guid": "r-1", "title": "홍길동 씨 인터뷰"},
                           {"guid": "r-2", "title": "틀딱들은 다 사라져야"}))
    services.items_import(project, path, "jsonl")
    client.force_login(project.created_by)
    body = client.get(f"/projects/{project.pk}/review/").content.decode()
    assert "r-1" in body and "r-2" in body and "Personal information" in body
    r1 = Item.objects.get(external_id="r-1")
    response = client.post(f"/projects/{project.pk}/review/", {"item": r1.pk, "decision": "keep", "reason": "공인"})
    assert response.status_code == 302
    r1.refresh_from_db()
    assert r1.screening_status == ScreeningStatus.KEPT
    r2 = Item.objects.get(external_id="r-2")
    client.post(f"/projects/{project.pk}/review/", {"item": r2.pk, "decision": "drop", "reason": ""})
    r2.refresh_from_db()
    assert r2.screening_status == ScreeningStatus.NEEDS_REVIEW  # no reason, no decision
    client.post(f"/projects/{project.pk}/review/", {"item": r2.pk, "decision": "drop", "reason": "혐오 표현"})
    r2.refresh_from_db()
    assert r2.screening_status == ScreeningStatus.DROPPED
    assert "Nothing waits for review" in client.get(f"/projects/{project.pk}/review/").content.decode()


@pytest.mark.django_db
def test_sources_page_warns_about_licences(client, make_project, tmp_path):
    project = make_project("tc")
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl({"guid": "s-1", "title": "첫 기사"}))
    services.items_import(project, path, "jsonl", source="reviews", license="CC-BY-NC-4.0")
    client.force_login(project.created_by)
    body = client.get(f"/projects/{project.pk}/sources/").content.decode()
    assert "reviews" in body and "CC-BY-NC-4.0" in body and "non-commercial" in body


@pytest.mark.django_db
def test_near_duplicate_groups_through_the_api_and_the_sources_page(api, client, make_project, tmp_path):
    """Near duplicates are listed as groups (one entry per item, not per pair), paged by group."""
    project = make_project("tc")
    base = "서울시는 다음 달부터 심야버스 노선을 다섯 개 늘리고 배차 간격을 줄인다고 밝혔다"
    other = "전국 대부분 지역에 내일 오후까지 많은 비가 내리고 강풍이 분다는 예보가 나왔다"
    path = tmp_path / "near.jsonl"
    path.write_bytes(jsonl(*[{"guid": f"a-{i}", "title": base + "!" * i} for i in range(4)],
                           *[{"guid": f"b-{i}", "title": other + "." * i} for i in range(2)],
                           {"guid": "c-0", "title": "전혀 관계없는 스포츠 기사 제목입니다 야구 경기 결과"}))
    assert services.items_import(project, path, "jsonl").summary["near_duplicates"] == 4
    client_ = api(project.created_by)
    url = f"/api/projects/{project.pk}/near-duplicates/"
    body = client_.get(url).data
    assert body["count"] == 6 and body["groups"] == 2 and body["offset"] == 0
    first, second = body["results"]
    assert [m["external_id"] for m in first["items"]] == ["a-0", "a-1", "a-2", "a-3"]
    assert first["group"] == first["items"][0]["id"] and first["items"][0]["duplicate_of"] is None
    assert all(m["duplicate_of"] is not None and m["similarity"] >= 0.8 for m in first["items"][1:])
    assert [m["external_id"] for m in second["items"]] == ["b-0", "b-1"]
    assert [g["group"] for g in client_.get(url, {"offset": 1, "limit": 1}).data["results"]] == [second["group"]]
    refused = client_.get(url, {"limit": "501"})
    assert refused.status_code == 400 and "limit" in refused.data
    assert client_.get(url, {"offset": "-1"}).status_code == 400
    client.force_login(project.created_by)
    page = client.get(f"/projects/{project.pk}/sources/").content.decode()
    assert "6 items have a near duplicate, in 2 near-duplicate groups." in page
