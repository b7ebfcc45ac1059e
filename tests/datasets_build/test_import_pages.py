"""The import, review-queue and sources pages as a Korean manager reads them: what the job and the screening
stored (English notes, identifiers such as ``needs_review`` or ``person``) is shown by human names, counts are
pluralised sentences, and the job's part of the page is the live region the release page uses too."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.models import Flag, Item, User
from datasets_build.models import ImportJob, ImportStatus
from tests.builders import jsonl
from tests.site.visible_text import offending_text

pytestmark = pytest.mark.django_db

RECORDS = jsonl({"guid": "k-1", "title": "홍길동 씨 인터뷰"}, {"guid": "k-2", "title": "이 씨발 놈들"},
                {"guid": "k-3", "title": "문의 010-2345-6789"}, {"guid": "k-4", "title": "평범한 기사 제목"})


def korean(user: User) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="ko")
    client.force_login(user)
    return client


def users_data(project) -> list[str]:
    return [project.name, "korean.jsonl", "blog-corpus", *User.objects.values_list("username", flat=True),
            *Item.objects.filter(project=project).values_list("external_id", flat=True),
            *(text for payload in Item.objects.filter(project=project).values_list("payload", flat=True)
              for text in payload.values() if isinstance(text, str))]


@pytest.fixture
def imported(make_project, django_capture_on_commit_callbacks):
    project = make_project("tc")
    client = korean(project.created_by)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/projects/{project.pk}/import/", {
            "file": SimpleUploadedFile("korean.jsonl", RECORDS), "format": "jsonl", "source": "blog-corpus",
            "license": "CC-BY-SA-4.0", "pii": "", "encoding": "auto", "duplicates": "skip"})
    assert response.status_code == 302
    return project, client, response.url


def test_the_import_page_reads_in_korean(imported):
    project, client, url = imported
    job = ImportJob.objects.get(project=project)
    assert job.status == ImportStatus.SUCCEEDED and job.message.startswith("imported 4 items")  # stored as is
    page = client.get(url).content.decode()
    assert "가져오기 완료: 항목 4개, 주석 0개." in page and "imported 4 items" not in page
    assert "인명: 탐지해 검토용으로 유지 1" in page and "전화번호: 가명 처리 1" in page
    assert "유해·혐오 표현: 욕설 ×1" in page
    assert "<dt>검토 필요</dt><dd>2</dd>" in page and "needs_review" not in page  # the project's statuses
    assert ">JSON Lines<" in page or ">JSONL<" in page  # the job's format by its name
    assert offending_text(page, data=users_data(project)) == []


def test_the_job_part_is_a_live_region_until_the_job_ends(imported):
    project, client, url = imported
    job = ImportJob.objects.get(project=project)
    ImportJob.objects.filter(pk=job.pk).update(status=ImportStatus.RUNNING, celery_task_id="")
    part = client.get(f"{url}&part=live").content.decode()
    assert part.lstrip().startswith('<section class="card" id="job"') and "<html" not in part
    assert 'data-live-done="0"' in part and "가져오는 중…" in part
    ImportJob.objects.filter(pk=job.pk).update(status=ImportStatus.SUCCEEDED)
    part = client.get(f"{url}&part=live").content.decode()
    assert 'data-live-done="1"' in part and "가져오기 완료" in part


def test_the_review_queue_names_what_the_screening_found_in_korean(imported):
    project, client, _url = imported
    assert Flag.objects.filter(item__project=project, note__startswith="PII detected").exists()  # stored English
    page = client.get(f"/projects/{project.pk}/review/").content.decode()
    assert "개인정보가 탐지되어 검토용으로 유지됨: 인명 ×1" in page and "PII detected" not in page
    assert "검수에서 발견: 욕설 ×1" in page and " by " not in page
    assert ">검토 대기열</a>" in page and "검수 검토" not in page  # the tab, in the glossary's words
    assert offending_text(page, data=users_data(project)) == []


def test_the_sources_page_reads_in_korean(imported):
    project, client, _url = imported
    page = client.get(f"/projects/{project.pk}/sources/").content.decode()
    assert "저작자 표시 필요" in page and "동일조건변경허락" in page and "attribution required" not in page
    assert "<td>인명</td>" in page and "<td>person</td>" not in page
    assert offending_text(page, data=users_data(project)) == []


def test_the_import_form_takes_approved_only_for_a_doccano_export_and_refuses_it_for_another_format(
        make_project, django_capture_on_commit_callbacks):
    from pathlib import Path

    project = make_project("ner")
    client = korean(project.created_by)
    export = (Path(__file__).parents[1] / "data" / "interop" / "doccano_ner_approved.zip").read_bytes()
    fields = {"pii": "", "encoding": "auto", "duplicates": "skip", "approved_only": "on"}
    page = client.get(f"/projects/{project.pk}/import/").content.decode()
    assert "doccano: 승인된 예제만" in page
    response = client.post(f"/projects/{project.pk}/import/", {
        "file": SimpleUploadedFile("records.jsonl", b'{"sentence": "x"}\n'), "format": "jsonl", **fields})
    assert response.status_code == 200 and "승인된 예제는 doccano 내보내기에만 있습니다." in response.content.decode()
    assert not ImportJob.objects.filter(project=project).exists()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/projects/{project.pk}/import/", {
            "file": SimpleUploadedFile("project-1.zip", export), "format": "doccano", **fields})
    assert response.status_code == 302
    job = ImportJob.objects.get(project=project)
    assert job.status == ImportStatus.SUCCEEDED and (job.items_written, job.annotations_written) == (3, 3)
    assert job.options["approved_only"] is True
