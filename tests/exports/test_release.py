"""Releases through the ``build_release`` command: files, manifest, card, checksums, splits, immutability."""

from __future__ import annotations

import json
import stat
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from annotation.models import Annotation
from annotation.task_types import slugs
from datasets_build.klue_formats import write_klue_file
from datasets_build.models import NearDuplicate
from datasets_build.selectors import near_duplicate_links
from exports import services
from exports.models import ImmutableReleaseError, Release, ReleaseFile, ReleaseStatus
from tests.builders import build_release as build
from tests.builders import load_records, sample_records
from tests.exports.release_history import data_files

pytestmark = pytest.mark.django_db




@pytest.mark.parametrize("slug", slugs())
def test_every_task_type_builds_all_formats(slug, make_project, tmp_path):
    project = make_project(slug)
    load_records(project, sample_records(slug, 40))
    result = build(project, tmp_path, "--version", "1.0.0", "--splits", "0.8,0.1,0.1", "--seed", "5")

    assert set(result) >= {"project", "version", "status", "out", "files", "splits", "check"}
    # Nothing leaks, so the status is the baseline check's verdict (unchecked when it could not run).
    assert result["leakage"]["clean"]
    assert result["status"] == result["check"]["verdict"], result["check"]
    assert set(result["check"]) >= {"passed", "metrics", "trivial"}
    assert sum(result["splits"].values()) == 40
    folder = Path(result["out"])
    assert folder == tmp_path / f"{project.slug}-1.0.0"
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert {"task_type", "version", "project", "splits", "files", "seed"} <= set(manifest)
    assert manifest["task_type"] == slug and manifest["seed"] == 5
    for entry in manifest["files"]:
        assert (folder / entry["path"]).is_file(), entry
    kinds = {entry["kind"] for entry in manifest["files"]}
    assert kinds >= {"klue", "jsonl", "csv", "parquet", "card"}
    # KLUE file names as the originals, one per split.
    klue = [e["path"] for e in manifest["files"] if e["kind"] == "klue" and e["split"]]
    assert len(klue) == 3 and all("-v1.1_" in name for name in klue)
    # Korean stays Korean (no \u escapes) in every text format.
    for path in [*klue, "jsonl/train.jsonl", "csv/train.csv"]:
        assert "\\u" not in (folder / path).read_text(encoding="utf-8")
    # Checksums cover every file, and the recorded files match them.
    sums = (folder / "SHA256SUMS").read_text().splitlines()
    listed = {line.split("  ", 1)[1] for line in sums}
    on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    assert listed == on_disk
    release = Release.objects.get(project=project, version="1.0.0")
    assert services.release_verify(release)["ok"]
    assert set(ReleaseFile.objects.filter(release=release).values_list("path", flat=True)) == on_disk | {"SHA256SUMS"}
    # No temporary folder or work file is left next to the release.
    assert [p.name for p in tmp_path.iterdir()] == [folder.name]


def test_side_files_of_re_and_dst(make_project, tmp_path):
    re_project = make_project("re")
    load_records(re_project, sample_records("re", 10))
    folder = Path(build(re_project, tmp_path, "--version", "1.0.0", "--format", "klue")["out"])
    relations = json.loads((folder / "klue-re-v1.1_relation_list.json").read_text(encoding="utf-8"))
    assert relations["relations"] == re_project.label_schema["labels"]

    dst_project = make_project("dst")
    load_records(dst_project, sample_records("dst", 10))
    folder = Path(build(dst_project, tmp_path, "--version", "1.0.0", "--format", "klue")["out"])
    ontology = json.loads((folder / "wos-v1.1_ontology.json").read_text(encoding="utf-8"))
    assert set(ontology) == set(dst_project.label_schema["ontology"])
    assert all(values[:2] == ["none", "dontcare"] for values in ontology.values())


def test_keep_splits_gives_back_the_klue_file(make_project, tmp_path):
    records = sample_records("nli", 12, prefix="klue-nli")
    project = make_project("nli")
    load_records(project, records)
    original = tmp_path / "original.json"
    write_klue_file(original, "nli", records)
    result = build(project, tmp_path / "out", "--version", "1.0.0", "--keep-splits", "--format", "klue")
    assert result["splits"] == {"dev": 12}
    assert result["files"] == sorted(["SHA256SUMS", "README.md", "manifest.json", "klue-nli-v1.1_dev.json"])
    written = Path(result["out"]) / "klue-nli-v1.1_dev.json"
    assert written.read_bytes() == original.read_bytes()


def test_same_seed_same_bytes_other_seed_other_assignment(make_project, tmp_path):
    project = make_project("tc")
    load_records(project, sample_records("tc", 120))
    a = Path(build(project, tmp_path, "--version", "1.0.0", "--seed", "3")["out"])
    b = Path(build(project, tmp_path, "--version", "1.0.1", "--seed", "3")["out"])
    c = Path(build(project, tmp_path, "--version", "1.0.2", "--seed", "4")["out"])
    files_a, files_b = data_files(a), data_files(b)
    assert files_a.keys() == files_b.keys() and len(files_a) == 12
    assert all(files_a[name] == files_b[name] for name in files_a)

    def assignment(folder: Path) -> dict[str, str]:
        rows = [json.loads(line) for split in ("train", "dev", "test")
                for line in (folder / "jsonl" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]
        return {row["guid"]: row["split"] for row in rows}

    assert assignment(a) == assignment(b)
    assert assignment(a) != assignment(c)


def test_planted_duplicates_and_near_duplicates_stay_together(make_project, tmp_path):
    project = make_project("tc")
    records = sample_records("tc", 200)
    # Exact duplicates: three headlines repeated word for word under other guids.
    for i, j in ((10, 150), (20, 160), (30, 170)):
        records[j]["title"] = records[i]["title"]
    items = load_records(project, records)
    # Near duplicates, as the import's MinHash index records them: a group of three and a group of two.
    for group, members in ((40, (40, 120, 190)), (50, (50, 60))):
        for member in members:
            NearDuplicate.objects.create(project=project, item=items[member], group=items[group].pk,
                                         duplicate_of=None if member == group else items[group], similarity=0.9)
    guid_of = {i: records[i]["guid"] for i in range(200)}
    for seed in range(6):
        result = build(project, tmp_path, "--version", f"1.0.{seed}", "--seed", str(seed), "--format", "jsonl")
        assert result["leakage"]["clean"], result["leakage"]
        assert result["leakage"]["near_duplicate_pairs_checked"] == 3
        folder = Path(result["out"])
        split_of = {}
        for split in result["splits"]:
            for line in (folder / "jsonl" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
                split_of[json.loads(line)["guid"]] = split
        for group in ((10, 150), (20, 160), (30, 170), (40, 120, 190), (50, 60)):
            assert len({split_of[guid_of[i]] for i in group}) == 1, (seed, group)


def test_near_duplicate_links_are_read_whole(make_project):
    project, other = make_project("tc"), make_project("tc")
    items, others = load_records(project, sample_records("tc", 6)), load_records(other, sample_records("tc", 2))
    links = [(items[1].pk, items[0].pk), (items[2].pk, items[0].pk), (items[4].pk, items[3].pk),
             (items[5].pk, items[3].pk), (items[0].pk, items[0].pk)]
    for item, group in links:
        NearDuplicate.objects.create(project=project, item_id=item, group=group)
    NearDuplicate.objects.create(project=other, item=others[1], group=others[0].pk)
    read = near_duplicate_links(project, chunk=2)  # PostgreSQL reads them at once, SQLite 2 at a time
    assert read.dtype == np.int64 and sorted(map(tuple, read.tolist())) == sorted(links)
    assert near_duplicate_links(make_project("tc")).shape == (0, 2)


def test_keep_splits_reports_leaks(make_project, tmp_path):
    project = make_project("tc")
    records = sample_records("tc", 20)
    train = sample_records("tc", 20, prefix="t")
    for record in train:
        record["guid"] = record["guid"].replace("_dev_", "_train_")
    train[0]["title"] = records[0]["title"]  # the same headline in train and dev
    load_records(project, records + train)
    result = build(project, tmp_path, "--version", "1.0.0", "--keep-splits", "--format", "jsonl")
    assert result["splits"] == {"train": 20, "dev": 20}
    assert not result["leakage"]["clean"]
    assert result["leakage"]["exact_duplicates_across_splits"] >= 1
    assert result["status"] == "failed"


def test_bad_input_is_refused(make_project, tmp_path):
    project = make_project("tc")
    load_records(project, sample_records("tc", 5))
    build(project, tmp_path, "--version", "1.0.0", "--format", "jsonl")
    for args, message in (
        (["--version", "1.0.0"], "already has a release 1.0.0"),
        (["--version", "v1"], "not a semantic version"),
        (["--version", "1.1.0", "--format", "xml"], "formats must be"),
        (["--version", "1.1.0", "--splits", "0.5,0.2"], "sum to 1"),
        (["--version", "1.1.0", "--keep-splits", "--seed", "3"], "--seed applies"),
    ):
        with pytest.raises(CommandError, match=message):
            build(project, tmp_path, *args)
    with pytest.raises(CommandError, match="no project"):
        call_command("build_release", "nope", "--version", "1.0.0")


def test_a_crash_leaves_no_release_folder(make_project, tmp_path, monkeypatch):
    project = make_project("tc")
    load_records(project, sample_records("tc", 30))

    def explode(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(services, "write_split", explode)
    with pytest.raises(CommandError, match="disk full"):
        build(project, tmp_path, "--version", "1.0.0")
    assert list(tmp_path.iterdir()) == []
    release = Release.objects.get(project=project)
    assert release.status == ReleaseStatus.ERROR and "disk full" in release.error


def test_published_release_is_immutable(make_project, make_user, tmp_path):
    project = make_project("tc")
    load_records(project, sample_records("tc", 40))  # 20 dev records: enough for the check's verdict
    folder = Path(build(project, tmp_path, "--version", "1.0.0", "--splits", "0.5,0.5")["out"])
    release = Release.objects.get(project=project)
    assert release.status == ReleaseStatus.PASSED, release.baseline_check
    services.release_publish(release=release, user=make_user())
    release.refresh_from_db()
    assert release.status == ReleaseStatus.PUBLISHED and release.published_at

    release.version = "9.9.9"
    with pytest.raises(ImmutableReleaseError):
        release.save()
    with pytest.raises(ImmutableReleaseError):
        Release.objects.filter(pk=release.pk).update(version="9.9.9")
    with pytest.raises(ImmutableReleaseError):
        release.delete()
    with pytest.raises(ImmutableReleaseError):
        Release.objects.filter(pk=release.pk).delete()
    file = release.files.first()
    file.sha256 = "0" * 64
    with pytest.raises(ImmutableReleaseError):
        file.save()
    with pytest.raises(ImmutableReleaseError):
        file.delete()
    with pytest.raises(ImmutableReleaseError):
        ReleaseFile.objects.create(release=release, path="extra.txt", kind="other", size=0, sha256="0" * 64)
    with pytest.raises(ImmutableReleaseError), transaction.atomic():
        project.delete()  # the cascade would delete the release
    with pytest.raises(services.ServiceError, match="already published"):
        services.release_publish(release=release, user=None)
    with pytest.raises(services.ServiceError, match="published"):
        services.release_delete(release=release)
    assert Release.objects.get(pk=release.pk).version == "1.0.0"
    # The folder and its files are read-only.
    for path in [folder, *folder.rglob("*")]:
        mode = path.stat().st_mode
        assert not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), path


def test_only_a_passed_release_can_be_published(make_project, tmp_path):
    project = make_project("tc")
    records = sample_records("tc", 10)
    other = sample_records("tc", 10, prefix="t")
    for record in other:
        record["guid"] = record["guid"].replace("_dev_", "_train_")
    other[0]["title"] = records[0]["title"]
    load_records(project, records + other)
    build(project, tmp_path, "--version", "1.0.0", "--keep-splits", "--format", "jsonl")
    release = Release.objects.get(project=project)
    assert release.status == ReleaseStatus.FAILED
    with pytest.raises(services.ServiceError, match="passed its checks"):
        services.release_publish(release=release, user=None)
    # An unpublished release can be removed, freeing its version.
    services.release_delete(release=release)
    assert not Release.objects.filter(project=project).exists()
    assert list(tmp_path.iterdir()) == []


def test_verify_command_finds_tampering(make_project, tmp_path):
    project = make_project("sts")
    load_records(project, sample_records("sts", 20))
    folder = Path(build(project, tmp_path, "--version", "1.0.0", "--format", "jsonl,csv")["out"])
    stdout = StringIO()
    call_command("verify_release", str(folder), "--json", stdout=stdout)
    assert json.loads(stdout.getvalue())["ok"]
    target = folder / "csv" / "train.csv"
    target.chmod(0o644)
    target.write_text(target.read_text(encoding="utf-8") + "x\n", encoding="utf-8")
    (folder / "csv").chmod(0o755)
    (folder / "csv" / "added.csv").write_text("a\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"changed: csv/train\.csv; unlisted: csv/added\.csv"):
        call_command("verify_release", str(folder), stdout=StringIO())
    release = Release.objects.get(project=project)
    assert not services.release_verify(release)["ok"]


def test_card_is_generated_from_the_release(make_project, tmp_path):
    project = make_project("nli")
    load_records(project, sample_records("nli", 60))
    folder = Path(build(project, tmp_path, "--version", "2.0.0", "--seed", "1")["out"])
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\nlicense: ")
    assert "- \"ko\"" in card and "natural-language-inference" in card and "size_categories" in card
    for section in ("## Motivation", "## Dataset structure", "### Splits and label distribution",
                    "### Leakage check", "## Sources and licences", "## Collection and annotation process",
                    "## Agreement", "## Personal information and screening", "## Baseline check",
                    "## Known limitations", "## Reproducing and verifying"):
        assert section in card, section
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    for split, n in manifest["splits"].items():
        assert f"| {split} | {n} |" in card
    # The template guideline's ethics and PII sections are quoted.
    assert "윤리 지침" in card and "개인정보 지침" in card


def test_a_sampled_baseline_check_is_recorded_and_noted_in_the_card(make_project, tmp_path, monkeypatch):
    monkeypatch.setattr("exports.baselines.release_files.MAX_SPLIT_RECORDS", 30)
    project = make_project("nli")
    load_records(project, sample_records("nli", 60))
    folder = Path(build(project, tmp_path, "--version", "2.0.0", "--seed", "1")["out"])
    check = Release.objects.get(project=project).baseline_check
    assert check["n_train"] == 30 and check["sampled_from"]["train"] > 30
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert f"seeded sample of 30 train and {check['n_dev']} dev records (of train: {check['sampled_from']['train']})" \
        in card


def test_gold_comes_from_the_gold_rule_and_imported_labels_fill_in(make_project, annotator_in, tmp_path):
    from annotation import services as annotation_services

    project = make_project("tc", k=3)
    load_records(project, sample_records("tc", 21))
    # A Goldset item annotated by one of its three annotators: its gold is incomplete, so it stays out.
    item = annotation_services.item_create(project=project, payload={"title": "새로 올라온 기사 제목"},
                                           external_id="new-1")
    Annotation.objects.create(item=item, annotator=annotator_in(project), stage="label",
                              payload={"label": "사회", "second": None, "third": None})
    result = build(project, tmp_path, "--version", "1.0.0", "--format", "jsonl")
    assert result["gold"]["source"] == "gold_labels" and result["gold"]["refreshed"]
    assert result["gold"]["items_by_source"] == {"gold_labels": 21}
    assert result["excluded"] == {"gold_incomplete": 1}
    assert sum(result["splits"].values()) == 21

    # NER corpus labels are one "annotation" per sentence: the gold rule waits for k, the corpus label is used.
    ner = make_project("ner", k=3)
    load_records(ner, sample_records("ner", 10))
    result = build(ner, tmp_path, "--version", "1.0.0", "--format", "klue")
    assert result["gold"]["items_by_source"] == {"corpus": 10} and result["excluded"] == {}


def test_a_release_without_klue_files_is_unchecked_without_loading_the_check(make_project, tmp_path, monkeypatch):
    """The baseline check trains on KLUE records: a build without KLUE files cannot be checked, and says so
    without importing the check (scikit-learn and its models' memory stay out of the worker)."""
    import sys

    project = make_project("tc")
    load_records(project, sample_records("tc", 30))
    for module in ("exports.release_check", "exports.baselines"):
        monkeypatch.setitem(sys.modules, module, None)  # importing it now raises ImportError
    result = build(project, tmp_path, "--version", "1.0.0", "--format", "jsonl,csv")

    assert result["status"] == "unchecked" and result["check"]["passed"] is None
    release = Release.objects.get(project=project, version="1.0.0")
    assert "no KLUE files" in release.baseline_check["reason"]
    assert sum(result["splits"].values()) == 30
