"""An import job through a live Celery worker on the PostgreSQL test database (skips without one)."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Item
from datasets_build.models import ImportJob, ImportStatus
from datasets_build.tasks import run_import

pytestmark = [pytest.mark.worker, pytest.mark.postgres]


def wait_for(job_id: int, timeout: float = 120) -> ImportJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = ImportJob.objects.get(pk=job_id)
        if job.is_finished:
            return job
        time.sleep(0.5)
    raise AssertionError(f"import job {job_id} did not finish in {timeout} s")


@pytest.mark.django_db(transaction=True)
def test_upload_is_imported_by_the_worker_and_a_redelivery_changes_nothing(live_worker, api, make_project, settings,
                                                                          tmp_path):
    settings.MEDIA_ROOT = tmp_path  # the stored path is absolute, so the worker reads it from here
    project = make_project("tc")
    lines = "".join(json.dumps({"guid": f"w-{i}", "title": f"워커가 가져올 기사 제목 {i}번", "label": "사회"},
                               ensure_ascii=False) + "\n" for i in range(1200))
    response = api(project.created_by).post(f"/api/projects/{project.pk}/imports/", {
        "file": SimpleUploadedFile("w.jsonl", lines.encode("utf-8")), "format": "jsonl",
    }, format="multipart")
    assert response.status_code == 202
    job = wait_for(response.data["id"])
    assert job.status == ImportStatus.SUCCEEDED, job.errors
    assert (job.records_read, job.records_screened, job.items_written, job.annotations_written) == (1200,) * 3 + (1200,)
    assert job.celery_task_id
    detail = api(project.created_by).get(f"/api/projects/{project.pk}/imports/{job.pk}/").data
    assert detail["progress"] == {"read": 1200, "screened": 1200, "written": 1200}

    result = run_import.delay(job.pk)  # what late acks do after a worker dies mid-task
    assert result.get(timeout=60)["status"] == ImportStatus.SUCCEEDED
    assert Item.objects.filter(project=project).count() == 1200
    assert live_worker.poll() is None


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.django_db(transaction=True)
def test_a_killed_preparation_process_fails_the_job_and_frees_the_worker(live_worker, api, make_project, settings,
                                                                        tmp_path):
    """The kernel's OOM killer takes a preparation process in the middle of an import in a Celery worker: the
    job fails with a message, the upload is deleted, the worker takes the next import, and a redelivery of the
    failed job's message does nothing."""
    settings.MEDIA_ROOT = tmp_path
    project = make_project("tc")
    client = api(project.created_by)
    lines = "".join(json.dumps({"title": f"워커가 가져올 기사 제목 {i}번, 준비 중에 멈춘다"}, ensure_ascii=False) + "\n"
                    for i in range(60_000))
    response = client.post(f"/api/projects/{project.pk}/imports/", {
        "file": SimpleUploadedFile("k.jsonl", lines.encode("utf-8")), "format": "jsonl"}, format="multipart")
    assert response.status_code == 202
    # The importing process forks the model screeners' process, then the preparation processes.
    deadline = time.monotonic() + 180
    killed = None
    while killed is None and time.monotonic() < deadline:
        forked = [pid for child in _children(live_worker.pid) for pid in _children(child)]
        if len(forked) >= 2 and ImportJob.objects.get(pk=response.data["id"]).status == ImportStatus.RUNNING:
            killed = max(forked)  # a preparation process
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.05)
    assert killed, "no preparation process was seen"
    job = wait_for(response.data["id"])
    assert job.status == ImportStatus.FAILED and "a preparation process stopped" in job.message, job.message
    assert not Item.objects.filter(project=project).exists() and list((tmp_path / "imports").iterdir()) == []

    assert run_import.delay(job.pk).get(timeout=60)["status"] == ImportStatus.FAILED
    job.refresh_from_db()
    assert job.status == ImportStatus.FAILED and not Item.objects.filter(project=project).exists()
    # The worker is free: the next import runs (in preparation processes again) and succeeds.
    response = client.post(f"/api/projects/{project.pk}/imports/", {
        "file": SimpleUploadedFile("n.jsonl", "".join(lines.splitlines(keepends=True)[:500]).encode("utf-8")),
        "format": "jsonl"}, format="multipart")
    assert wait_for(response.data["id"]).status == ImportStatus.SUCCEEDED
    assert live_worker.poll() is None
