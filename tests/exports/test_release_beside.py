"""Work a release build does beside itself (PostgreSQL: on a thread with its own connection), the agreement
report, and after it: the splits a ratio release chose, recorded with its final state and then copied onto its
items, so that the release is downloadable while the items' rows are rewritten."""

from __future__ import annotations

import threading

import pytest
from django.core.management import CommandError
from django.db import DatabaseError, connection

from annotation.models import Item, Project
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


def test_the_agreement_is_done_beside_the_build_and_the_splits_after_it(make_project, tmp_path, monkeypatch):
    project = make_project("tc")
    load_records(project, [{**r, "guid": f"x-{n}"} for n, r in enumerate(sample_records("tc", 40))])
    agreement = spy(monkeypatch, "_agreement")
    when: list[tuple[str, bool]] = []
    write = services._items_split_write

    def recorded(*args, **kwargs):
        # What a client polling the release sees while the items' rows are rewritten.
        release = Release.objects.get(project=project)
        when.append((release.status, release.chosen_splits.applied))
        return write(*args, **kwargs)

    monkeypatch.setattr(services, "_items_split_write", recorded)
    result = build(project, tmp_path, "--version", "1.0.0", "--seed", "2", "--format", "jsonl")
    assert agreement == ["release-beside" if connection.vendor == "postgresql" else "MainThread"]
    release = Release.objects.get(project=project)
    assert when == [(release.status, False)] and release.status == ReleaseStatus.UNCHECKED
    chosen = release.chosen_splits.as_dict()
    assert release.chosen_splits.applied
    assert len(chosen) == 40 and dict(Item.objects.filter(project=project).values_list("id", "split")) == chosen
    assert result["splits"] == {name: list(chosen.values()).count(name) for name in ("train", "dev", "test")}
    assert release.agreement == services._agreement(project)
    assert not [t for t in threading.enumerate() if t.name == "release-beside"]


def test_a_build_that_fails_after_choosing_splits_records_and_writes_none(make_project, tmp_path, monkeypatch):
    project = make_project("tc")
    load_records(project, [{**r, "guid": f"x-{n}"} for n, r in enumerate(sample_records("tc", 40))])
    before = dict(Item.objects.filter(project=project).values_list("id", "split"))
    writes = spy(monkeypatch, "_items_split_write")

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(services, "write_sums", full)
    with pytest.raises(CommandError, match="no space left"):
        build(project, tmp_path, "--version", "1.0.0", "--seed", "2", "--format", "jsonl")
    assert Release.objects.get(project=project).status == ReleaseStatus.ERROR
    assert writes == []
    assert dict(Item.objects.filter(project=project).values_list("id", "split")) == before
    assert not ReleaseSplits.objects.exists()
    assert not [t for t in threading.enumerate() if t.name == "release-beside"]


def _pending_splits(project, tmp_path, monkeypatch, *versions: str) -> dict[str, dict[int, str]]:
    """Ratio releases whose copy onto the items failed (a lost worker, a database error): their splits pending."""
    def broken(*args, **kwargs):
        raise DatabaseError("the copy failed")

    monkeypatch.setattr(services, "_items_split_write", broken)
    # New random splits move earlier training items into the test split: contamination, which the default policy
    # fails; these tests are about the splits' copy, so it only warns here.
    Project.objects.filter(pk=project.pk).update(options={**project.options, "contamination_policy": "warn"})
    chosen = {}
    for n, version in enumerate(versions):
        build(project, tmp_path, "--version", version, "--seed", str(n + 1), "--format", "jsonl")
        release = Release.objects.get(project=project, version=version)
        assert release.status == ReleaseStatus.UNCHECKED and not release.chosen_splits.applied
        chosen[version] = release.chosen_splits.as_dict()
    monkeypatch.undo()
    return chosen


def test_a_keep_splits_build_copies_the_pending_splits_of_the_newest_ratio_release_first(
        make_project, tmp_path, monkeypatch):
    project = make_project("tc")
    load_records(project, [{**r, "guid": f"x-{n}"} for n, r in enumerate(sample_records("tc", 40))])
    chosen = _pending_splits(project, tmp_path, monkeypatch, "1.0.0", "1.1.0")
    assert chosen["1.0.0"] != chosen["1.1.0"]
    assert set(Item.objects.filter(project=project).values_list("split", flat=True)) == {""}
    build(project, tmp_path, "--version", "1.2.0", "--keep-splits", "--format", "jsonl")
    # The newer release's splits, not the older one's that was pending too.
    assert dict(Item.objects.filter(project=project).values_list("id", "split")) == chosen["1.1.0"]
    assert all(ReleaseSplits.objects.values_list("applied", flat=True))
    kept = Release.objects.get(project=project, version="1.2.0")
    assert kept.split_counts == Release.objects.get(project=project, version="1.1.0").split_counts


def test_an_older_releases_pending_splits_never_overwrite_a_newer_ones(make_project, tmp_path, monkeypatch):
    project = make_project("tc")
    load_records(project, [{**r, "guid": f"x-{n}"} for n, r in enumerate(sample_records("tc", 40))])
    chosen = _pending_splits(project, tmp_path, monkeypatch, "1.0.0")
    build(project, tmp_path, "--version", "1.1.0", "--seed", "7", "--format", "jsonl")
    newer = Release.objects.get(project=project, version="1.1.0").chosen_splits.as_dict()
    assert newer != chosen["1.0.0"]
    assert dict(Item.objects.filter(project=project).values_list("id", "split")) == newer
    ReleaseSplits.objects.filter(release__version="1.0.0").update(applied=False)  # e.g. a redelivered copy
    services.release_splits_apply(project)
    assert dict(Item.objects.filter(project=project).values_list("id", "split")) == newer
    assert all(ReleaseSplits.objects.values_list("applied", flat=True))


def test_a_redelivered_build_copies_the_splits_its_first_run_recorded(make_project, tmp_path, monkeypatch):
    project = make_project("tc")
    load_records(project, [{**r, "guid": f"x-{n}"} for n, r in enumerate(sample_records("tc", 40))])
    chosen = _pending_splits(project, tmp_path, monkeypatch, "1.0.0")["1.0.0"]
    release = services.release_run(Release.objects.get(project=project).pk)  # the job delivered again
    assert release.status == ReleaseStatus.UNCHECKED and release.chosen_splits.applied
    assert dict(Item.objects.filter(project=project).values_list("id", "split")) == chosen
