"""An import job through a live Celery worker on the PostgreSQL test database (skips without one)."""

from __future__ import annotations

import json
import time

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
