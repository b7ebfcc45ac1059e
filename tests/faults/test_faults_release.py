"""Redelivered release builds, in-process (issue 9, faults): the states a killed worker can leave behind.

The live-worker versions (a worker really killed) are in test_faults_worker.py; these run the job's
code path eagerly on any database, and with a second connection on PostgreSQL.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from exports import services
from exports.card import CARD_NAME
from exports.models import Release, ReleaseStatus
from exports.tasks import release_build_task
from tests.builders import load_records, sample_records
from tests.conftest import is_postgres


@pytest.fixture
def built(make_project, tmp_path: Path) -> Release:
    project = make_project("tc")
    load_records(project, sample_records("tc", 200))  # 20 dev records: enough for the check's verdict
    release = services.release_build(project, version="1.0.0", seed=2, formats="klue,jsonl", out=tmp_path)
    assert release.status == ReleaseStatus.PASSED, release.error
    return release


@pytest.mark.django_db
def test_a_build_that_died_after_moving_its_folder_is_only_recorded_on_redelivery(built):
    files = sorted(built.files.values_list("path", "sha256"))
    Release.objects.filter(pk=built.pk).update(status=ReleaseStatus.CHECKING, finished_at=None)

    assert release_build_task.delay(built.pk).get()["status"] == ReleaseStatus.PASSED
    built.refresh_from_db()
    assert built.status == ReleaseStatus.PASSED and built.finished_at is not None
    assert sorted(built.files.values_list("path", "sha256")) == files and services.release_verify(built)["ok"]


@pytest.mark.django_db
def test_a_folder_that_does_not_match_the_record_is_not_taken_for_the_build(built):
    Release.objects.filter(pk=built.pk).update(status=ReleaseStatus.BUILDING)
    card = Path(built.out_dir) / CARD_NAME
    card.chmod(0o644)
    card.write_text("edited by hand\n", encoding="utf-8")

    release_build_task.delay(built.pk)
    built.refresh_from_db()
    assert built.status == ReleaseStatus.ERROR and "already exists" in built.error
    assert card.read_text(encoding="utf-8") == "edited by hand\n"  # left for a person to look at


@pytest.mark.django_db
def test_a_build_that_died_while_checking_is_built_again(make_project, tmp_path):
    project = make_project("tc")
    load_records(project, sample_records("tc", 60))
    release = services.release_create(project=project, version="1.0.0", seed=2, formats="jsonl", out=tmp_path)
    Release.objects.filter(pk=release.pk).update(status=ReleaseStatus.CHECKING)
    hidden = tmp_path / f".{Path(release.out_dir).name}.partial"
    hidden.mkdir()
    (hidden / "half-written.jsonl").write_text("{", encoding="utf-8")

    assert release_build_task.delay(release.pk).get()["status"] == ReleaseStatus.UNCHECKED  # JSONL only
    release.refresh_from_db()
    assert services.release_verify(release)["ok"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [Path(release.out_dir).name]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_second_delivery_waits_for_the_build_another_worker_holds(make_project, tmp_path):
    if not is_postgres():
        pytest.skip("the build lock is a PostgreSQL advisory lock")
    project = make_project("tc")
    load_records(project, sample_records("tc", 30))
    release = services.release_create(project=project, version="1.0.0", formats="jsonl", out=tmp_path)
    s = connection.settings_dict
    outcome: list[str] = []

    def second_delivery() -> None:
        try:
            outcome.append(release_build_task.delay(release.pk).get()["status"])
        finally:
            connection.close()

    with psycopg.connect(host=s["HOST"], port=s["PORT"] or 5432, user=s["USER"], password=s["PASSWORD"] or None,
                         dbname=s["NAME"], autocommit=True) as first_worker:
        first_worker.execute("SELECT pg_advisory_lock(%s, %s)", (services._BUILD_LOCK, release.pk))
        waiting = threading.Thread(target=second_delivery)
        waiting.start()
        waiting.join(timeout=3)
        assert waiting.is_alive() and outcome == []  # it waits instead of building alongside
        release.refresh_from_db()
        assert release.status == ReleaseStatus.BUILDING and list(tmp_path.iterdir()) == []
    # The first worker is gone (its connection closed, as when it dies): the waiting delivery builds it.
    waiting.join(timeout=120)
    assert outcome == [ReleaseStatus.UNCHECKED]  # JSONL only: built, not checked
    assert os.path.isdir(release.out_dir)
