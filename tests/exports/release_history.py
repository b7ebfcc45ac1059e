"""Projects with release histories for the release diff, changelog and contamination tests (and their pages
in the browser): the releases built, and what each test expects to find between them."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.gold.services import adjudicate
from annotation.models import Flag, GoldLabel, Item, Role
from datasets_build.models import NearDuplicate
from exports import services
from exports.models import Release
from tests.builders import load_records, sample_records


def build_kept(project, version: str, out: Path, *, agreement: bool = True) -> Release:
    """A release of the items' own splits, in JSONL, that must build unchecked."""
    release = services.release_build(project, version=version, keep_splits=True, formats="jsonl", out=out,
                                     refresh_gold=False, agreement=agreement)
    assert release.status == "unchecked", release.error or release.leakage
    return release


@pytest.fixture
def history(make_project, make_user, add_member, annotator_in, tmp_path):
    """Release 1.0.0, then one change of every kind, then release 1.1.0."""
    manager = make_user(can_create=True)
    project = make_project("tc", manager=manager)
    items = load_records(project, sample_records("tc", 30))
    Item.objects.filter(pk__in=[i.pk for i in items[:20]]).update(split="train")
    Item.objects.filter(pk__in=[i.pk for i in items[20:25]]).update(split="dev")
    Item.objects.filter(pk__in=[i.pk for i in items[25:30]]).update(split="test")
    Item.objects.filter(pk=items[29].pk).update(screening_status="needs_review")
    v1 = build_kept(project, "1.0.0", tmp_path)

    screened, flagged, discarded, deleted, relabelled, moved, retexted, readmitted = (
        items[0], items[1], items[2], items[3], items[4], items[5], items[6], items[29])
    Item.objects.filter(pk=screened.pk).update(screening_status="needs_review")
    Flag.objects.create(item=flagged, user=manager, kind="pii", note="a phone number")
    GoldLabel.objects.create(item=discarded, payload=None, status="discarded", rule="majority")
    Item.objects.filter(pk=deleted.pk).delete()
    old_label = relabelled.payload.get("label") or sample_records("tc", 5)[4]["label"]
    new_label = "스포츠" if old_label != "스포츠" else "정치"
    adjudicate(item=relabelled, by=manager, reason="the headline is about a match", payload={"label": new_label})
    Item.objects.filter(pk=moved.pk).update(split="dev")
    Item.objects.filter(pk=retexted.pk).update(payload={**retexted.payload, "title": "고쳐 쓴 제목"},
                                               content_hash="f" * 64)
    Item.objects.filter(pk=readmitted.pk).update(screening_status="kept")
    added = load_records(project, sample_records("tc", 2, prefix="n"))
    Item.objects.filter(pk__in=[i.pk for i in added]).update(split="test")
    v2 = build_kept(project, "1.1.0", tmp_path)
    maintainer = add_member(project, make_user(), Role.MAINTAINER)
    return {"project": project, "manager": manager, "maintainer": maintainer, "annotator": annotator_in(project),
            "v1": v1, "v2": v2, "out": tmp_path, "old_label": old_label, "new_label": new_label,
            "ids": {"screened": screened.pk, "flagged": flagged.pk, "discarded": discarded.pk,
                    "deleted": deleted.pk, "relabelled": relabelled.pk, "moved": moved.pk,
                    "retexted": retexted.pk, "readmitted": readmitted.pk, "added": [i.pk for i in added]}}


def expected_changes(history) -> dict[str, dict[int, object]]:
    ids = history["ids"]
    return {
        "added": {ids["added"][0]: "new", ids["added"][1]: "new", ids["readmitted"]: "screening_needs_review"},
        "dropped": {ids["screened"]: "screening_needs_review", ids["flagged"]: "open_flag",
                    ids["discarded"]: "gold_discarded", ids["deleted"]: "deleted"},
        "relabelled": {ids["relabelled"]: (history["old_label"], history["new_label"])},
        "moved": {ids["moved"]: ("train", "dev")},
        "text_changed": {ids["retexted"]: "train"},
    }


def split_as(items, split: str) -> None:
    Item.objects.filter(pk__in=[i.pk for i in items]).update(split=split)


@pytest.fixture
def planted(make_project, make_user, tmp_path):
    manager = make_user(can_create=True)
    project = make_project("tc", manager=manager)
    items = load_records(project, sample_records("tc", 40))
    split_as(items[:20], "train")
    split_as(items[20:30], "dev")
    split_as(items[30:40], "test")
    # Near duplicates inside one release's test split only: no earlier training data, no hit.
    for member in (items[31], items[32]):
        NearDuplicate.objects.create(project=project, item=member, group=items[31].pk, similarity=0.9,
                                     duplicate_of=None if member == items[31] else items[31])
    first = build_kept(project, "1.0.0", tmp_path, agreement=False)

    moved = items[0]  # the same item, from train in 1.0.0 to test
    split_as([moved], "test")
    records = sample_records("tc", 3, prefix="x")
    for n, record in enumerate(records):
        record["title"] = f"새로 들어온 {n}번 기사"
    copy, near, unrelated = load_records(project, records)
    Item.objects.filter(pk=copy.pk).update(content_hash=items[1].content_hash, split="dev")  # 1.0.0 train's text
    split_as([near, unrelated], "test")
    for member in (items[2], near):  # a near copy of a 1.0.0 training item, as the import groups them
        NearDuplicate.objects.create(project=project, item=member, group=items[2].pk, similarity=0.85,
                                     duplicate_of=None if member == items[2] else items[2])
    # The originals leave the release (else the release's own leakage check, train against dev and test, fails
    # it): only 1.0.0's train split still holds them.
    Item.objects.filter(pk__in=[items[1].pk, items[2].pk]).update(screening_status="needs_review")
    second = build_kept(project, "1.1.0", tmp_path, agreement=False)
    return {"project": project, "manager": manager, "first": first, "second": second, "moved": moved.pk,
            "copy": copy.pk, "near": near.pk, "unrelated": unrelated.pk}


def data_files(folder: Path) -> dict[str, bytes]:
    """Every data file (not the manifest, card or sums, which name the version, nor the changelog, which the
    project's first release has not) by path."""
    skip = {"manifest.json", "README.md", "SHA256SUMS", "CHANGES.md", "changes.jsonl"}
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name not in skip}
