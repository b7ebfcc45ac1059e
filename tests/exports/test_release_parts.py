"""A release's items pass read ahead (PostgreSQL outside a transaction): the three queries on threads with their
own connections (``exports.ahead.ReadAhead``). The release is the same, byte for byte, as one read in the build's
thread; and the items read ahead while the gold was checked are read again when the gold had to be recomputed."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from annotation.models import Annotation, Item, ScreeningStatus
from exports import selectors, services
from exports.ahead import ReadAhead
from exports.models import Release, ReleaseStatus
from tests.builders import load_records, sample_records
from tests.conftest import is_postgres

pytestmark = pytest.mark.django_db(transaction=True)

STATS = ("split_counts", "label_counts", "excluded", "leakage", "screening", "annotators", "sources",
         "guideline_versions", "gold", "agreement")


def project_of(make_project: Any, task_type: str, n: int = 60) -> Any:
    project = make_project(task_type)
    items = load_records(project, [{**r, "guid": f"x-{i}"} for i, r in enumerate(sample_records(task_type, n))])
    # Items each part excludes, for each reason: the counts of both parts are added up.
    Item.objects.filter(id__in=[i.id for i in items[3::11]]).update(screening_status=ScreeningStatus.DROPPED)
    Item.objects.filter(id__in=[i.id for i in items[5::13]]).update(screening_status=ScreeningStatus.PENDING)
    return project


def build(project: Any, out: Path, version: str, formats: list[str]) -> tuple[Release, dict[str, bytes]]:
    release = services.release_build(project, version=version, seed=3, formats=formats, out=out)
    assert release.status != ReleaseStatus.ERROR, release.error
    folder = Path(release.out_dir)
    # The manifest, card and sums name the version; the data files must be the same bytes.
    files = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*")
             if p.is_file() and p.parent != folder}
    return release, files


@pytest.mark.parametrize(("task_type", "formats"), [
    ("tc", ["jsonl"]), ("ner", ["jsonl"]), ("re", ["jsonl", "klue"]), ("mrc", ["jsonl", "csv", "klue"]),
    ("dst", ["jsonl"]), ("sts", ["jsonl", "parquet"]),
])
def test_a_release_read_ahead_is_the_release_read_in_the_build_thread(make_project, tmp_path, monkeypatch,
                                                                        task_type, formats):
    project = project_of(make_project, task_type)
    ahead, ahead_files = build(project, tmp_path / "ahead", "1.0.0", formats)
    monkeypatch.setattr(services, "may_read_ahead", lambda: False)
    monkeypatch.setattr("exports.ahead.may_read_ahead", lambda: False)
    here, here_files = build(project, tmp_path / "here", "1.0.1", formats)
    assert here_files == ahead_files and len(ahead_files) >= 3
    for name in STATS:
        assert getattr(here, name) == getattr(ahead, name), name
    assert ahead.excluded.get("screening_pending")


@pytest.mark.postgres
@pytest.mark.skipif(not is_postgres(), reason="read ahead on PostgreSQL only")
def test_items_read_ahead_before_the_gold_was_recomputed_are_read_again(make_project, tmp_path, monkeypatch):
    project = make_project("tc", k=1)  # one annotation decides the gold
    load_records(project, [{**r, "guid": f"x-{i}"} for i, r in enumerate(sample_records("tc", 30))])
    calls: list[str] = []
    original = selectors.item_streams

    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append("streams")
        return original(*args, **kwargs)

    monkeypatch.setattr(selectors, "item_streams", recorded)
    refreshed_on: list[str] = []
    compute = services.gold_compute

    def refresh(*args: Any, **kwargs: Any) -> Any:
        refreshed_on.append(threading.current_thread().name)
        return compute(*args, **kwargs)

    monkeypatch.setattr(services, "gold_compute", refresh)

    def labels(release: Release) -> dict[str, str]:
        found = {}
        for path in (Path(release.out_dir) / "jsonl").glob("*.jsonl"):  # the data files, not changes.jsonl
            found.update((r["guid"], r["label"]) for r in map(json.loads, path.read_text("utf-8").splitlines()))
        return found

    first = services.release_build(project, version="1.0.0", formats=["jsonl"], out=tmp_path)
    calls.clear()
    unchanged = services.release_build(project, version="1.0.1", formats=["jsonl"], out=tmp_path)
    assert calls == ["streams"] and labels(unchanged) == labels(first)  # the gold was current: read once
    assert set(refreshed_on) == {"release-beside"}  # checked beside the items pass, not before it

    item = Item.objects.filter(project=project).order_by("id").first()
    guid = item.external_id
    new_label = next(label for label in ("정치", "경제") if label != labels(first)[guid])
    for annotation in Annotation.objects.filter(item=item):  # every vote: the gold follows them
        annotation.payload = {**annotation.payload, "label": new_label}
        annotation.save()
    calls.clear()
    changed = services.release_build(project, version="1.0.2", formats=["jsonl"], out=tmp_path)
    assert calls == ["streams", "streams"]
    assert labels(changed)[guid] == new_label
    assert {g: v for g, v in labels(changed).items() if g != guid} == {
        g: v for g, v in labels(first).items() if g != guid}


def test_read_ahead_hands_over_the_error_and_stops_when_closed():
    def failing():
        yield from range(1200)
        raise ValueError("stream broke")

    ahead = ReadAhead(failing)
    with pytest.raises(ValueError, match="stream broke"):
        assert sum(1 for _ in ahead) == 1200
    ahead.close()
    assert not ahead.is_alive()

    closed = threading.Event()

    def endless():
        try:
            n = 0
            while True:
                n += 1
                yield n
        finally:
            closed.set()

    ahead = ReadAhead(endless)
    assert [n for n, _ in zip(ahead, range(10), strict=False)] == list(range(1, 11))
    ahead.close()
    assert not ahead.is_alive()
    if connection.vendor == "postgresql":  # read on its thread, which closed it
        assert closed.is_set()
