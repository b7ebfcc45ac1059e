"""Projects with release histories for the release diff, changelog and contamination tests (and their pages
in the browser): the releases built, and what each test expects to find between them."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from annotation.gold.services import adjudicate
from annotation.models import Flag, GoldLabel, Item, Project, Role
from datasets_build.models import NearDuplicate
from exports import contamination_services, services
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
    # The sample records added to the test split below repeat the titles of 1.0.0's first training items: the
    # contamination check finds them (tests/exports/test_release_contamination.py), and only warns here.
    Project.objects.filter(pk=project.pk).update(options={**project.options, "contamination_policy": "warn"})
    project.refresh_from_db()
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


#: Words of the planted texts: thirty drawn for each, so two texts share few of their five-character shingles.
_WORDS = ("하늘", "바다", "산길", "도시", "시장", "학교", "기차", "버스", "공원", "도서관", "병원", "극장", "축구",
          "야구", "농구", "경제", "정치", "문화", "과학", "기술", "음악", "미술", "역사", "철학", "날씨", "여름",
          "겨울", "가을", "봄날", "아침", "저녁", "주말", "회의", "보고서", "계약", "투자", "주식", "환율", "수출",
          "수입", "선거", "국회", "법원", "경찰", "소방", "의료", "교육", "연구", "대학", "기업")


def planted_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"{seed}-{i}: " + " ".join(rng.choice(_WORDS) for _ in range(30)) for i in range(n)]


def near_copy(text: str) -> str:
    """A near duplicate: the same text with two characters more (estimated Jaccard above 0.9)."""
    return text + " 끝"


def records_of(texts: list[str], prefix: str) -> list[dict]:
    records = sample_records("tc", len(texts), prefix=prefix)
    for record, text in zip(records, texts, strict=True):
        record["title"] = text
    return records


def write_reference(path: Path, texts: list[str], *, broken: bool = False) -> Path:
    """A KLUE-style JSONL reference file of ``texts`` (and, with ``broken``, one record a tc item cannot be)."""
    lines = [orjson.dumps(r).decode() for r in records_of(texts, "ref")]
    if broken:
        lines.insert(1, '{"guid": "ref-broken", "label": "정치"}')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def planted(make_project, make_user, add_member, tmp_path, media):
    """Release 1.0.0 of a tc project, then 1.1.0 whose dev and test splits hold planted copies: exact and near
    copies of 1.0.0's training data, of another project's items and of an external file's records. Every other
    text is drawn at random and matches nothing."""
    manager = make_user(can_create=True)
    project = make_project("tc", manager=manager)
    items = load_records(project, records_of(planted_texts(40, 1), "s"))
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
    copy, near, unrelated = load_records(project, records_of(planted_texts(3, 2), "x"))
    Item.objects.filter(pk=copy.pk).update(content_hash=items[1].content_hash, split="dev")  # 1.0.0 train's text
    split_as([near, unrelated], "test")
    for member in (items[2], near):  # a near copy of a 1.0.0 training item, as the import groups them
        NearDuplicate.objects.create(project=project, item=member, group=items[2].pk, similarity=0.85,
                                     duplicate_of=None if member == items[2] else items[2])
    # The originals leave the release (else the release's own leakage check, train against dev and test, fails
    # it): only 1.0.0's train split still holds them.
    Item.objects.filter(pk__in=[items[1].pk, items[2].pk]).update(screening_status="needs_review")

    # Another project the manager runs: an exact copy of a test item, a near copy of a dev item, and ten others.
    other = make_project("tc", manager=manager, slug="other-corpus")
    texts = {i.pk: i.payload["title"] for i in items}
    in_other = load_records(other, records_of([texts[items[33].pk], near_copy(texts[items[24].pk]),
                                               *planted_texts(10, 3)], "o"))
    # An external file: an exact and a near copy of two test items, four others, and a record no tc item can be.
    reference_file = write_reference(tmp_path / "benchmark_test.jsonl",
                                     [*planted_texts(2, 4), texts[items[35].pk], near_copy(texts[items[36].pk]),
                                      *planted_texts(2, 5)], broken=True)
    project_reference = contamination_services.reference_add_project(project=project, other=other, by=manager)
    with reference_file.open("rb") as upload:
        file_reference = contamination_services.reference_add_file(
            project=project, upload=upload, file_name=reference_file.name, fmt="jsonl", by=manager,
            name="benchmark", training=False)
    second = services.release_build(project, version="1.1.0", keep_splits=True, formats="jsonl", out=tmp_path,
                                    refresh_gold=False, agreement=False)
    maintainer = add_member(project, make_user(), Role.MAINTAINER)
    return {"project": project, "manager": manager, "maintainer": maintainer, "first": first, "second": second,
            "other": other, "out": tmp_path, "file": reference_file,
            "references": {"project": project_reference, "file": file_reference},
            "moved": moved.pk, "copy": copy.pk, "near": near.pk, "unrelated": unrelated.pk,
            "in_other": [i.pk for i in in_other],
            "expected": {
                (moved.pk, "test", "exact", "1.0.0"), (copy.pk, "dev", "exact", "1.0.0"),
                (near.pk, "test", "near", "1.0.0"),
                (items[33].pk, "test", "exact", "other-corpus"), (items[24].pk, "dev", "near", "other-corpus"),
                (items[35].pk, "test", "exact", "benchmark"), (items[36].pk, "test", "near", "benchmark")},
            # Test items found in training data (1.0.0's train split, the other project): the default policy
            # fails the release for these; the dev hits and the file's (not training data) only warn.
            "failing": {moved.pk, near.pk, items[33].pk}}


def found_hits(result: dict) -> set[tuple]:
    return {(h["item"], h["split"], h["kind"], h["reference"] or h["release"]) for h in result["hits"]}


def data_files(folder: Path) -> dict[str, bytes]:
    """Every data file (not the manifest, card or sums, which name the version, nor the changelog, which the
    project's first release has not) by path."""
    skip = {"manifest.json", "README.md", "SHA256SUMS", "CHANGES.md", "changes.jsonl"}
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name not in skip}
