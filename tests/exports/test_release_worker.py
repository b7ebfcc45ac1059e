"""A release built by a live Celery worker on the PostgreSQL test database (skips without one)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from exports import services
from exports.models import Release, ReleaseStatus
from exports.tasks import release_build_task
from tests.builders import load_records, sample_records

pytestmark = [pytest.mark.worker, pytest.mark.postgres]


@pytest.mark.django_db(transaction=True)
def test_release_is_built_by_the_worker_and_a_redelivery_changes_nothing(live_worker, make_project, tmp_path):
    project = make_project("tc")
    load_records(project, sample_records("tc", 200))  # 20 dev records: enough for the check's verdict
    release = services.release_create(project=project, version="1.0.0", splits="0.8,0.1,0.1", seed=3,
                                      formats="klue,jsonl,parquet", out=tmp_path)
    result = release_build_task.delay(release.pk)
    assert result.get(timeout=300)["status"] in ("passed", "failed")
    release.refresh_from_db()
    assert release.status == ReleaseStatus.PASSED, release.error or release.baseline_check
    assert release.progress == {"phase": "done"}
    assert sum(release.split_counts.values()) == 200
    folder = Path(release.out_dir)
    assert (folder / "SHA256SUMS").is_file() and services.release_verify(release)["ok"]
    files = sorted(release.files.values_list("path", "sha256"))

    # The message delivered again (a worker lost after finishing): the finished release is left as it is.
    again = release_build_task.delay(release.pk)
    assert again.get(timeout=120)["status"] == "passed"
    assert sorted(Release.objects.get(pk=release.pk).files.values_list("path", "sha256")) == files
    assert live_worker.poll() is None


@pytest.mark.django_db(transaction=True)
def test_progress_is_visible_while_the_worker_builds(live_worker, make_project, tmp_path):
    project = make_project("nli")
    load_records(project, sample_records("nli", 40))
    release = services.release_create(project=project, version="1.0.0", formats="jsonl", out=tmp_path)
    result = release_build_task.delay(release.pk)
    phases = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        release.refresh_from_db()
        phases.add(release.progress.get("phase"))
        if release.status not in (ReleaseStatus.BUILDING, ReleaseStatus.CHECKING):
            break
        time.sleep(0.05)
    result.get(timeout=60)
    assert release.status == ReleaseStatus.UNCHECKED  # JSONL only: built, not checked
    assert "done" in phases and phases <= {"queued", "items", "splits", "files", "card", "contamination",
                                                "check", "done"}


@pytest.mark.django_db(transaction=True)
def test_a_contamination_check_asked_for_runs_on_the_worker(live_worker, make_project, tmp_path):
    from exports import contamination_services
    from exports.models import ContaminationCheck
    from tests.exports.release_history import planted_texts, records_of, split_as, write_reference

    project = make_project("tc")
    items = load_records(project, records_of(planted_texts(20, 21), "w"))
    split_as(items[:15], "train")
    split_as(items[15:], "test")
    release = services.release_build(project, version="1.0.0", keep_splits=True, formats="jsonl", out=tmp_path,
                                     agreement=False)
    reference = write_reference(tmp_path / "public.jsonl", [items[17].payload["title"], *planted_texts(3, 22)])
    # Stored where the worker reads uploads too (the media folder of its settings), removed at the end.
    with reference.open("rb") as upload:
        stored = contamination_services.reference_add_file(project=project, upload=upload, file_name=reference.name,
                                                           fmt="jsonl", by=None, name="public", training=False)
    check = contamination_services.check_request(release=release, by=None)  # queued after the commit
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        check.refresh_from_db()
        if check.status in ("done", "failed"):
            break
        time.sleep(0.2)
    assert check.status == "done", check.error
    assert [(h["item"], h["kind"], h["reference"]) for h in check.result["hits"]] == [(items[17].pk, "exact",
                                                                                       "public")]
    assert ContaminationCheck.objects.filter(release=release).count() == 1
    assert live_worker.poll() is None
    contamination_services.reference_delete(reference=stored, by=None)
