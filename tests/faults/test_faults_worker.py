"""Workers killed with SIGKILL in the middle of an import and of a release build (issue 9, faults).

Each test starts its own ``celery worker --pool=prefork --concurrency=1`` on its own queue and the PostgreSQL
test database, then kills either the pool child running the job (the worker requeues the message at once:
``task_reject_on_worker_lost``) or the whole worker, main process included (the message comes back from
Redis after the visibility timeout, to a worker started afterwards). An import prepared in forked processes is
killed both ways too, the main process alone included (issue 35): the forked processes die with the pool
child, so no orphan keeps the killed import's database session — its transaction and the job's row lock —
alive, and the redelivered job finishes within the visibility timeout plus a minute, with no one's help.
Meanwhile the test watches what users would see: no item of a half-done import, no release folder before it
is complete. In the end the job is done exactly once, and delivering its message again changes nothing.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from annotation.models import Item, Project
from datasets_build.models import ImportStatus
from datasets_build.services import items_import
from exports import services as release_services
from exports.integrity import verify_folder
from exports.models import Release, ReleaseStatus
from exports.tasks import release_build_task
from tests.faults.helpers import (
    VISIBILITY_TIMEOUT,
    alive,
    assert_imported_once,
    descendants,
    upload_import,
    wait_for_import_end,
    wait_for_import_midway,
    wait_until,
    write_tc_jsonl,
)

pytestmark = [pytest.mark.worker, pytest.mark.postgres]

RELEASE_ITEMS = 6000


@pytest.mark.django_db(transaction=True)
def test_import_pool_child_killed_is_requeued_at_once_and_imported_once(start_worker, api, make_project, settings,
                                                                        tmp_path):
    settings.MEDIA_ROOT = tmp_path
    project = make_project("tc")
    worker = start_worker()
    job = upload_import(api, project, tmp_path)
    wait_for_import_midway(api, project, job)

    killed = worker.kill_pool_child()
    job = wait_for_import_end(project, job)
    assert worker.process.poll() is None and worker.pool_children not in ([], [killed])
    assert_imported_once(project, job)


@pytest.mark.django_db(transaction=True)
def test_import_worker_killed_outright_is_redelivered_to_the_next_worker(start_worker, api, make_project, settings,
                                                                         tmp_path):
    settings.MEDIA_ROOT = tmp_path
    project = make_project("tc")
    first = start_worker()
    job = upload_import(api, project, tmp_path)
    wait_for_import_midway(api, project, job)

    first.kill()
    job.refresh_from_db()
    assert job.status == ImportStatus.RUNNING and not Item.objects.filter(project=project).exists()
    start_worker()  # takes the unacknowledged message once the visibility timeout has passed
    job = wait_for_import_end(project, job)
    assert_imported_once(project, job)


def forked_by_the_import(pool_child: int) -> list[int]:
    """The processes the import running in ``pool_child`` forked (its preparation and model screening processes)."""
    forked = descendants(pool_child)
    assert len(forked) >= 2, "the import is not prepared in forked processes"
    return forked


def wait_until_gone(pids: list[int], what: str) -> None:
    wait_until(lambda: not any(alive(pid) for pid in pids), 15, what, every=0.1)


@pytest.mark.django_db(transaction=True)
def test_parallel_import_pool_child_killed_takes_its_forked_processes_and_is_imported_once(
        start_worker, api, make_project, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    project = make_project("tc")
    worker = start_worker(parallel=True)
    job = upload_import(api, project, tmp_path)
    wait_for_import_midway(api, project, job)
    (pool_child,) = worker.pool_children
    forked = forked_by_the_import(pool_child)

    os.kill(pool_child, signal.SIGKILL)
    killed_at = time.monotonic()
    wait_until_gone(forked, "the import's forked processes to die with the pool child")
    job = wait_for_import_end(project, job, timeout=VISIBILITY_TIMEOUT + 60 - (time.monotonic() - killed_at))
    assert worker.process.poll() is None
    assert_imported_once(project, job)


@pytest.mark.django_db(transaction=True)
def test_parallel_import_worker_main_process_killed_alone_is_redelivered_and_imported_once(
        start_worker, api, make_project, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    project = make_project("tc")
    first = start_worker(parallel=True)
    job = upload_import(api, project, tmp_path)
    wait_for_import_midway(api, project, job)
    (pool_child,) = first.pool_children
    forked = forked_by_the_import(pool_child)

    first.kill_main_process()  # SIGKILL: no handler of the worker's runs
    killed_at = time.monotonic()
    wait_until_gone([pool_child, *forked], "the pool child and the import's forked processes to die with the worker")
    job.refresh_from_db()
    assert job.status == ImportStatus.RUNNING and not Item.objects.filter(project=project).exists()
    start_worker(parallel=True)  # what the worker's supervisor does; it takes the message after the timeout
    job = wait_for_import_end(project, job, timeout=VISIBILITY_TIMEOUT + 60 - (time.monotonic() - killed_at))
    assert_imported_once(project, job)


# -- release builds ---------------------------------------------------------------------------------


def release_project(make_project: Callable, tmp_path: Path) -> Project:
    project = make_project("tc")
    result = items_import(project, write_tc_jsonl(tmp_path / "items.jsonl", RELEASE_ITEMS), "jsonl")
    assert result.ok and result.items == RELEASE_ITEMS, result.errors
    return project


def request_release(api: Callable, project: Project) -> Release:
    response = api(project.created_by).post(f"/api/projects/{project.pk}/releases/", {
        "version": "1.0.0", "splits": "0.8,0.1,0.1", "seed": 1, "formats": ["klue", "jsonl", "parquet"]},
        format="json")
    assert response.status_code == 202, response.data
    return Release.objects.get(pk=response.data["id"])


def hidden_work_files(release: Release) -> list[str]:
    final = Path(release.out_dir)
    return sorted(p.name for p in final.parent.iterdir() if p.name != final.name) if final.parent.exists() else []


def wait_for_phase(release: Release, phase: str, status: str = ReleaseStatus.BUILDING) -> None:
    def reached() -> bool:
        release.refresh_from_db()
        assert release.status in (ReleaseStatus.BUILDING, ReleaseStatus.CHECKING), "the build ended before the kill"
        return release.progress.get("phase") == phase and release.status == status

    wait_until(reached, 180, f"the build to reach {phase}", every=0.02)
    # Mid-build: the files go to a hidden temporary folder; the release's own folder does not exist yet.
    assert f".{Path(release.out_dir).name}.partial" in hidden_work_files(release)
    assert not Path(release.out_dir).exists()


def wait_for_release_end(release: Release) -> Release:
    """Until the build is over; the release folder is never visible before it is complete and checksummed."""
    final = Path(release.out_dir)

    def finished() -> bool:
        if final.exists():
            assert verify_folder(final)["ok"], "the release folder appeared before it was complete"
        release.refresh_from_db()
        return release.status not in (ReleaseStatus.BUILDING, ReleaseStatus.CHECKING)

    wait_until(finished, 300, "the build to be redone", every=0.1)
    return release


def assert_built_once(release: Release) -> None:
    assert release.status == ReleaseStatus.PASSED, release.error or release.baseline_check
    assert release.progress == {"phase": "done"}
    assert sum(release.split_counts.values()) == RELEASE_ITEMS
    assert release_services.release_verify(release)["ok"]
    assert hidden_work_files(release) == []  # no temporary folder or work file left behind
    files = sorted(release.files.values_list("path", "sha256"))

    assert release_build_task.delay(release.pk).get(timeout=120)["status"] == ReleaseStatus.PASSED
    assert sorted(Release.objects.get(pk=release.pk).files.values_list("path", "sha256")) == files


@pytest.mark.django_db(transaction=True)
def test_release_pool_child_killed_while_writing_files_is_rebuilt(start_worker, api, make_project, settings,
                                                                  tmp_path):
    settings.GOLDSET_RELEASE_ROOT = tmp_path / "releases"
    project = release_project(make_project, tmp_path)
    worker = start_worker()
    release = request_release(api, project)
    wait_for_phase(release, "files")

    worker.kill_pool_child()
    assert_built_once(wait_for_release_end(release))


@pytest.mark.django_db(transaction=True)
def test_release_worker_killed_outright_while_checking_is_rebuilt_by_the_next(start_worker, api, make_project,
                                                                               settings, tmp_path):
    settings.GOLDSET_RELEASE_ROOT = tmp_path / "releases"
    project = release_project(make_project, tmp_path)
    first = start_worker()
    release = request_release(api, project)
    wait_for_phase(release, "check", ReleaseStatus.CHECKING)

    first.kill()
    release.refresh_from_db()
    assert release.status == ReleaseStatus.CHECKING and not Path(release.out_dir).exists()
    start_worker()
    assert_built_once(wait_for_release_end(release))
