"""Work a release build does beside itself (PostgreSQL: on a thread with its own connection): the agreement
report, and the splits written back, committed only once the release's folder is in place."""

from __future__ import annotations

import threading

import pytest
from django.core.management import CommandError
from django.db import connection

from annotation.models import Item
from exports import services
from exports.models import Release, ReleaseSplits, ReleaseStatus
from tests.builders import build_release as build
from tests.builders import load_records, sample_records

pytestmark = pytest.mark.django_db(transaction=True)


def spy(monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    threads: list[str] = []
    original = getattr(services, name)

    def recorded(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(services, name, recorded)
    return threads


def test_splits_and_agreement_are_done_beside_the_build(make_project, tmp_path, monkeypatch):
    project = make_project("tc")
    load_records(project, [{**r, "guid": f"x-{n}"} for n, r in enumerate(sample_records("tc", 40))])
    splits, agreement = spy(monkeypatch, "_remember_splits"), spy(monkeypatch, "_agreement")
    result = build(project, tmp_path, "--version", "1.0.0", "--seed", "2", "--format", "jsonl")
    where = "release-beside" if connection.vendor == "postgresql" else "MainThread"
    assert splits == [where] and agreement == [where]
    release = Release.objects.get(project=project)
    chosen = release.chosen_splits.as_dict()
    assert len(chosen) == 40 and dict(Item.objects.filter(project=project).values_list("id", "split")) == chosen
    assert result["splits"] == {name: list(chosen.values()).count(name) for name in ("train", "dev", "test")}
    assert release.agreement == services._agreement(project)
    assert not [t for t in threading.enumerate() if t.name == "release-beside"]


def test_a_build_that_fails_after_choosing_splits_writes_none_back(make_project, tmp_path, monkeypatch):
    project = make_project("tc")
    load_records(project, [{**r, "guid": f"x-{n}"} for n, r in enumerate(sample_records("tc", 40))])
    before = dict(Item.objects.filter(project=project).values_list("id", "split"))
    splits = spy(monkeypatch, "_remember_splits")

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(services, "write_sums", full)
    with pytest.raises(CommandError, match="no space left"):
        build(project, tmp_path, "--version", "1.0.0", "--seed", "2", "--format", "jsonl")
    assert Release.objects.get(project=project).status == ReleaseStatus.ERROR
    # On PostgreSQL the splits were written beside the build and rolled back; elsewhere never written.
    assert splits == (["release-beside"] if connection.vendor == "postgresql" else [])
    assert dict(Item.objects.filter(project=project).values_list("id", "split")) == before
    assert not ReleaseSplits.objects.exists()
    assert not [t for t in threading.enumerate() if t.name == "release-beside"]
