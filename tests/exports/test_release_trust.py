"""Releases you can trust: only releasable items, release states with their reasons, the check's evidence
rule, remembered splits and reproducible bytes, opaque rater ids, the archive, and ``datasets`` loading."""

from __future__ import annotations

import io
import json
import tarfile
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.gold.selectors import releasable_items
from annotation.models import Annotation, AuditEvent, Item, Project, Role
from annotation.selectors import project_progress
from annotation.task_types import JSON_ARRAY, get_task_type, slugs
from datasets_build.klue_formats import write_klue_file
from exports import services
from exports.baselines import BaselineResult
from exports.metrics import get_task_metrics, score
from exports.models import RaterId, Release, ReleaseStatus
from exports.release_check import check_result
from tests.builders import build_release as build
from tests.builders import load_records, sample_records


def resampled_scores(task_slug, dev, predicted, counts: np.ndarray) -> np.ndarray:
    """The primary metric of ``predicted`` on each resample, a row of ``counts`` (draws per dev record)."""
    stats, finish = get_task_metrics(task_slug).primary_stats(dev, predicted)
    return finish(counts @ stats)


pytestmark = pytest.mark.django_db

ALL_FORMATS = "klue,jsonl,csv,parquet"


def all_text(folder: Path) -> str:
    """Every file of a release as text (Parquet through pyarrow: its strings are compressed on disk)."""
    import pyarrow.parquet as pq

    parts = []
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".parquet":
            parts.append(json.dumps(pq.read_table(path).to_pylist(), ensure_ascii=False))
        elif path.is_file():
            parts.append(path.read_text(encoding="utf-8"))
    return "\n".join(parts)


# -- 1. releasable ------------------------------------------------------------------------------------


FLAGGED = {
    "pii-name": "공상민 씨가 어제 회의에서 예산안을 발표했다",
    "pii-phone": "문의는 010-2345-6789 번호로 받는다는 공지",
    "toxic": "이 씨 발 놈들 다 필요 없다",
}


def test_items_awaiting_review_or_flagged_never_reach_any_release_file(make_project, tmp_path):
    records = sample_records("tc", 60, prefix="ynat")
    for n, (key, title) in enumerate(FLAGGED.items()):
        records[n] = {**records[n], "guid": f"ynat-v1_dev_{key}", "title": title}
    source = tmp_path / "ynat.json"
    write_klue_file(source, "tc", records)
    call_command("import_items", "trust-tc", str(source), "--format", "klue", "--task-type", "tc",
                 "--pii", "detect", stdout=StringIO())
    project = Project.objects.get(slug="trust-tc")
    held = set(Item.objects.filter(project=project).exclude(screening_status="clear")
               .values_list("external_id", flat=True))
    assert held == {f"ynat-v1_dev_{key}" for key in FLAGGED}
    # A manager's open flag keeps an otherwise clear item out as well.
    flagged_by_hand = Item.objects.get(project=project, external_id=records[10]["guid"])
    flagged_by_hand.flags.create(kind="other", note="출처 확인")

    result = build(project, tmp_path / "out", "--version", "1.0.0", "--format", ALL_FORMATS)
    text = all_text(Path(result["out"]))
    for guid in [*held, flagged_by_hand.external_id]:
        assert guid not in text
    for title in FLAGGED.values():
        assert title not in text
    assert sum(result["splits"].values()) == 60 - 4
    assert result["excluded"] == {"open_flag": 1, "screening_needs_review": 3}
    # The progress page counts the same items with the same rule.
    assert project_progress(project)["releasable"] == 56 == releasable_items(project).count()
    card = (Path(result["out"]) / "README.md").read_text(encoding="utf-8")
    assert "Only releasable items are released" in card and "screening_needs_review: 3" in card


# -- 2. states ------------------------------------------------------------------------------------------


def test_a_release_of_nothing_is_refused_and_leaves_nothing(make_project, tmp_path, api, add_member, make_user):
    project = make_project("tc")
    load_records(project, [{**r, "guid": f"x-{n}"} for n, r in enumerate(sample_records("tc", 10))])  # no split
    out = tmp_path / "out"
    with pytest.raises(CommandError, match=r"nothing to release: .* with a split"):
        build(project, out, "--version", "0.4.0", "--keep-splits")
    assert not Release.objects.filter(project=project).exists()
    assert not out.exists() or not any(out.iterdir())

    manager = project.created_by
    response = api(manager).post(f"/api/projects/{project.pk}/releases/",
                                 {"version": "0.4.0", "keep_splits": True}, format="json")
    assert response.status_code == 400 and response.data["detail"].startswith("nothing to release")
    assert not Release.objects.filter(project=project).exists()


def test_a_release_whose_build_finds_nothing_is_refused_too(make_project, tmp_path, monkeypatch):
    """The request's check only bounds what the build may find; the build itself refuses an empty result."""
    project = make_project("tc")
    load_records(project, sample_records("tc", 10))
    monkeypatch.setattr(services.gold_selectors, "release_exclusion", lambda **kwargs: "unlabelled")
    with pytest.raises(CommandError, match="nothing to release"):
        build(project, tmp_path, "--version", "1.0.0")
    assert not Release.objects.filter(project=project).exists()
    assert list(tmp_path.iterdir()) == []


def test_unchecked_and_inconclusive_releases_and_how_they_may_be_published(make_project, make_user, add_member,
                                                                           tmp_path, api):
    project = make_project("tc")
    load_records(project, sample_records("tc", 30))
    maintainer = add_member(project, make_user(), Role.MAINTAINER)
    unchecked = build(project, tmp_path, "--version", "1.0.0", "--format", "jsonl")
    assert unchecked["status"] == "unchecked" and unchecked["check"]["passed"] is None
    inconclusive = build(project, tmp_path, "--version", "1.1.0", "--format", "klue")
    assert inconclusive["status"] == "inconclusive", inconclusive["check"]
    assert inconclusive["check"]["n_dev"] == 3 and inconclusive["check"]["min_dev"] == 20

    base = f"/api/projects/{project.pk}/releases/"
    first, second = (Release.objects.get(project=project, version=v) for v in ("1.0.0", "1.1.0"))
    assert api(maintainer).post(f"{base}{first.pk}/publish/", {"override_reason": "x"}).status_code == 409
    refused = api(maintainer).post(f"{base}{second.pk}/publish/")
    assert refused.status_code == 409 and refused.data["field"] == "override_reason"
    detail = api(maintainer).get(f"{base}{second.pk}/").data
    assert "Dev has 3 records; a verdict needs at least 20." in detail["reasons"]

    # The page: a colour-coded badge, the reasons in words (Korean too); the override checkbox is on the
    # publish confirmation.
    client = Client()
    client.force_login(maintainer)
    page = client.get(f"/projects/{project.pk}/releases/{second.pk}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'class="badge status-inconclusive"' in page
    assert "Dev has 3 records; a verdict needs at least 20." in page
    assert "95% interval" in page
    confirm = client.get(f"/projects/{project.pk}/releases/{second.pk}/publish/", HTTP_ACCEPT_LANGUAGE="en")
    assert 'id="publish-override"' in confirm.content.decode()
    client.cookies["django_language"] = "ko"
    korean = client.get(f"/projects/{project.pk}/releases/{first.pk}/").content.decode()
    assert 'class="badge status-unchecked"' in korean and "기준 모델 점검이 실행되지 않았" in korean
    # Publishing without ticking the override is refused; with it, the reason goes to the audit trail.
    client.post(f"/projects/{project.pk}/releases/{second.pk}/publish/", {"confirm": "publish",
                                                                           "override_reason": "파일럿"})
    assert Release.objects.get(pk=second.pk).status == ReleaseStatus.INCONCLUSIVE
    client.post(f"/projects/{project.pk}/releases/{second.pk}/publish/", {"confirm": "publish", "override": "on",
                                                                           "override_reason": "파일럿 공개"})
    second.refresh_from_db()
    assert second.status == ReleaseStatus.PUBLISHED and second.publish_override == "파일럿 공개"
    event = AuditEvent.objects.get(object_type="release", object_id=second.pk, action="publish")
    assert event.after["override_reason"] == "파일럿 공개" and event.actor == maintainer


def test_publish_release_command_takes_an_override_reason(make_project, tmp_path):
    project = make_project("tc")
    with pytest.raises(CommandError, match="no project with slug 'nope'"):
        call_command("publish_release", "nope", "--version", "1.0.0", stdout=StringIO())
    with pytest.raises(CommandError, match=f"{project.slug} has no release 1.0.0"):
        call_command("publish_release", project.slug, "--version", "1.0.0", stdout=StringIO())
    load_records(project, sample_records("tc", 30))
    build(project, tmp_path, "--version", "1.0.0", "--format", "klue")
    with pytest.raises(CommandError, match="no user 'nobody'"):
        call_command("publish_release", project.slug, "--version", "1.0.0", "--user", "nobody", stdout=StringIO())
    with pytest.raises(CommandError, match="needs an override reason"):
        call_command("publish_release", project.slug, "--version", "1.0.0", stdout=StringIO())
    call_command("publish_release", project.slug, "--version", "1.0.0", "--override-reason", "demo", stdout=StringIO())
    assert Release.objects.get(project=project).status == ReleaseStatus.PUBLISHED


def test_the_archive_holds_every_file_and_its_checksums(make_project, make_user, add_member, tmp_path):
    project = make_project("nli")
    load_records(project, sample_records("nli", 30))
    result = build(project, tmp_path, "--version", "1.0.0", "--format", ALL_FORMATS)
    release = Release.objects.get(project=project)
    client = Client()
    client.force_login(add_member(project, make_user(), Role.MAINTAINER))
    response = client.get(f"/projects/{project.pk}/releases/{release.pk}/archive/")
    assert response.status_code == 200 and response["Content-Type"] == "application/gzip"
    assert response["Content-Disposition"].endswith(f'filename="{project.slug}-1.0.0.tar.gz"')
    with tarfile.open(fileobj=io.BytesIO(b"".join(response.streaming_content)), mode="r:gz") as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    unpacked = tmp_path / "unpacked" / f"{project.slug}-1.0.0"
    assert sorted(p.relative_to(unpacked).as_posix() for p in unpacked.rglob("*") if p.is_file()) == result["files"]
    assert (unpacked / "SHA256SUMS").read_bytes() == (Path(result["out"]) / "SHA256SUMS").read_bytes()
    from exports.integrity import verify_folder

    assert verify_folder(unpacked)["ok"]


# -- 3. the evidence rule --------------------------------------------------------------------------------


def _result(n_dev: int, interval: tuple[float, float], baseline: float, trivial: float) -> BaselineResult:
    return BaselineResult(task="nli", metrics={"accuracy": baseline}, trivial={"accuracy": trivial}, seconds=0.1,
                          seed=0, primary="accuracy", n_train=100, n_dev=n_dev, description="", trivial_description="",
                          interval={"low": interval[0], "high": interval[1]})


@pytest.mark.parametrize(("n_dev", "interval", "baseline", "verdict"), [
    (40, (8.0, 30.0), 60.0, "passed"),
    (19, (8.0, 30.0), 60.0, "inconclusive"),  # too few dev records, however clear the signal
    (40, (-2.0, 30.0), 60.0, "inconclusive"),  # the interval includes 0
    (40, (0.5, 6.0), 41.0, "inconclusive"),  # beats trivial, but by less than the margin
    (40, (-20.0, 0.0), 30.0, "failed"),  # no better than trivial
    (4, (-20.0, -1.0), 30.0, "inconclusive"),  # too few dev records for a verdict either way
])
def test_the_verdict_follows_the_evidence_rule(n_dev, interval, baseline, verdict):
    result = check_result(_result(n_dev, interval, baseline, 40.0), margin=2.0, leakage_clean=True, min_dev=20)
    assert result["verdict"] == verdict and result["passed"] == (verdict == "passed")
    assert check_result(_result(40, (8.0, 30.0), 60.0, 40.0), margin=2.0, leakage_clean=False,
                        min_dev=20)["verdict"] == "failed"


@pytest.mark.parametrize("slug", slugs())
def test_the_bootstrap_scores_each_resample_as_the_official_scorer(slug):
    """Per-record statistics summed with resample weights give the task's metric: on the whole dev (every
    record once) and on a resample (records repeated), equal to ``score`` on the same records."""
    from exports.baselines import get_baseline
    from exports.baselines.synthetic import synthetic_records

    records = synthetic_records(slug, 160, seed=7)
    train, dev = records[:120], records[120:]
    predicted = get_baseline(slug).train(train, 0, None)(dev)
    primary = get_task_metrics(slug).primary
    ones = np.ones((1, len(dev)))
    assert resampled_scores(slug, dev, predicted, ones)[0] == pytest.approx(score(slug, dev, predicted)[primary])
    draw = np.random.default_rng(3).integers(0, len(dev), len(dev))
    counts = np.bincount(draw, minlength=len(dev))[None, :].astype(float)
    resample = [dev[i] for i in draw]
    preds = predicted if slug == "mrc" else [predicted[i] for i in draw]
    expected = score(slug, resample, preds)[primary]
    assert resampled_scores(slug, dev, predicted, counts)[0] == pytest.approx(np.nan_to_num(expected, nan=0.0))


def test_train_baseline_reproduces_the_stored_verdict_and_figures(make_project, tmp_path):
    project = make_project("tc")
    load_records(project, sample_records("tc", 60))
    result = build(project, tmp_path, "--version", "1.0.0", "--splits", "0.5,0.5", "--seed", "7",
                   "--format", "klue")
    stored = Release.objects.get(project=project).baseline_check
    assert result["status"] == "passed" and stored["seed"] == 7 and stored["n_dev"] == 30
    stdout = StringIO()
    call_command("train_baseline", result["out"], "--json", stdout=stdout)
    again = json.loads(stdout.getvalue())
    for key in ("verdict", "metrics", "trivial", "interval", "improvement", "seed", "n_train", "n_dev", "margin",
                "min_dev", "reasons"):
        assert again[key] == stored[key], key
    other = StringIO()
    call_command("train_baseline", result["out"], "--seed", "8", "--json", stdout=other)
    assert again["seed"] == 7 and json.loads(other.getvalue())["seed"] == 8


# -- 4. splits remembered, bytes reproducible ----------------------------------------------------------


def test_keep_splits_after_a_ratio_release_reproduces_it(make_project, tmp_path, make_user, add_member):
    project = make_project("tc")
    load_records(project, [{**r, "guid": f"x-{n}"} for n, r in enumerate(sample_records("tc", 50))])  # unassigned
    page = Client()
    page.force_login(project.created_by)
    assert page.get(f"/projects/{project.pk}/items/").content.decode().count("<td>Unassigned</td>") == 50
    first = build(project, tmp_path, "--version", "1.0.0", "--seed", "4", "--format", "jsonl")
    release = Release.objects.get(project=project, version="1.0.0")
    external = dict(Item.objects.filter(project=project).values_list("id", "external_id"))
    chosen = {external[item]: split for item, split in release.chosen_splits.as_dict().items()}
    assert len(chosen) == 50 and set(chosen.values()) == {"train", "dev", "test"}
    assert dict(Item.objects.filter(project=project).values_list("external_id", "split")) == chosen
    kept = build(project, tmp_path, "--version", "1.1.0", "--keep-splits", "--format", "jsonl")
    assert kept["splits"] == first["splits"]

    def assignment(folder: str) -> dict[str, str]:
        rows = [json.loads(line) for path in sorted(Path(folder, "jsonl").glob("*.jsonl"))
                for line in path.read_text(encoding="utf-8").splitlines()]
        return {row["guid"]: row["split"] for row in rows}

    assert assignment(kept["out"]) == assignment(first["out"]) == chosen
    # The Items tab shows the stored split.
    items = page.get(f"/projects/{project.pk}/items/").content.decode()
    assert "<td>Unassigned</td>" not in items
    assert items.count("<td>Dev</td>") == list(chosen.values()).count("dev")


def test_two_builds_of_the_same_state_give_the_same_bytes(make_project, tmp_path):
    project = make_project("nli")
    load_records(project, sample_records("nli", 60))
    first = Path(build(project, tmp_path / "a", "--version", "1.0.0", "--seed", "3", "--format", ALL_FORMATS)["out"])
    sums = (first / "SHA256SUMS").read_bytes()
    services.release_delete(release=Release.objects.get(project=project))
    second = Path(build(project, tmp_path / "b", "--version", "1.0.0", "--seed", "3", "--format", ALL_FORMATS)["out"])
    assert (second / "SHA256SUMS").read_bytes() == sums  # manifest and card included: no time in any file


# -- 5. opaque rater ids ---------------------------------------------------------------------------------


def test_released_files_carry_stable_opaque_rater_ids_never_usernames(make_project, make_user, add_member, api,
                                                                      tmp_path):
    project = make_project("tc", k=2)
    people = [add_member(project, make_user(name), Role.ANNOTATOR) for name in ("sim-gaeun", "annotator1")]
    items = load_records(project, [{k: v for k, v in r.items() if k != "annotations"}
                                   for r in sample_records("tc", 30)])
    for item in items:
        for person in people:
            Annotation.objects.create(item=item, annotator=person, stage="label", payload={"label": "사회"})
    result = build(project, tmp_path, "--version", "1.0.0", "--format", ALL_FORMATS)
    text = all_text(Path(result["out"]))
    assert "sim-gaeun" not in text and "annotator1" not in text
    rows = [json.loads(line) for line in (Path(result["out"]) / "jsonl" / "train.jsonl").read_text().splitlines()]
    assert {tuple(row["annotators"]) for row in rows} == {("r01", "r02")}
    card = (Path(result["out"]) / "README.md").read_text(encoding="utf-8")
    assert "opaque ids" in card

    # A later annotator gets the next id; the first two keep theirs.
    late = add_member(project, make_user("late-comer"), Role.ANNOTATOR)
    Annotation.objects.create(item=items[0], annotator=late, stage="label", payload={"label": "경제"})
    build(project, tmp_path, "--version", "1.1.0", "--format", "jsonl")
    assert list(RaterId.objects.filter(project=project).order_by("number")
                .values_list("user__username", "number")) == [("sim-gaeun", 1), ("annotator1", 2), ("late-comer", 3)]

    # The mapping: managers only (the page and the API).
    maintainer = add_member(project, make_user(), Role.MAINTAINER)
    mapping = api(project.created_by).get(f"/api/projects/{project.pk}/raters/")
    assert mapping.status_code == 200
    assert [(r["rater"], r["username"]) for r in mapping.data] == [("r01", "sim-gaeun"), ("r02", "annotator1"),
                                                                    ("r03", "late-comer")]
    assert api(maintainer).get(f"/api/projects/{project.pk}/raters/").status_code == 403
    client = Client()
    client.force_login(project.created_by)
    assert 'id="rater-ids"' in client.get(f"/projects/{project.pk}/releases/").content.decode()
    client.force_login(maintainer)
    assert "sim-gaeun" not in client.get(f"/projects/{project.pk}/releases/").content.decode()


def test_imported_corpus_raters_get_opaque_ids_too(make_project, tmp_path):
    project = make_project("sts")
    load_records(project, sample_records("sts", 30))  # KLUE-style rater ids "01", "02", "03"
    result = build(project, tmp_path, "--version", "1.0.0", "--format", "klue,jsonl")
    rows = [json.loads(line) for line in (Path(result["out"]) / "jsonl" / "train.jsonl").read_text().splitlines()]
    assert {tuple(row["annotators"]) for row in rows} == {("r01", "r02", "r03")}
    assert all(code.startswith("r") for code in selectors_rater_codes(project))


def selectors_rater_codes(project: Project) -> list[str]:
    from exports.selectors import rater_ids

    return [row["rater"] for row in rater_ids(project)]


# -- 8. datasets.load_dataset -------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", slugs())
def test_datasets_loads_every_format_of_every_task_even_with_an_empty_split(slug, make_project, tmp_path):
    import datasets

    project = make_project(slug)
    load_records(project, sample_records(slug, 12))
    # Ratios that leave test empty: the card's configs list only the splits that have records.
    result = build(project, tmp_path / "out", "--version", "1.0.0", "--splits", "0.7,0.3,0", "--format",
                   ALL_FORMATS)
    assert result["splits"].get("test", 0) == 0
    folder = Path(result["out"])
    present = {split: n for split, n in result["splits"].items() if n}
    cache = str(tmp_path / "cache")

    # As the Hugging Face Hub reads it: the card is README.md, its configs choose the files
    # (tests/exports/test_release_loads.py loads every layout).
    loaded = datasets.load_dataset(str(folder), cache_dir=cache)
    assert {split: len(rows) for split, rows in loaded.items()} == present

    for builder, kind in (("json", "jsonl"), ("csv", "csv"), ("parquet", "parquet")):
        files = {split: str(folder / kind / f"{split}.{kind}") for split in present}
        loaded = datasets.load_dataset(builder, data_files=files, cache_dir=cache)
        assert {split: len(rows) for split, rows in loaded.items()} == present, kind
        assert "guid" in loaded[next(iter(present))].column_names
    if get_task_type(slug).klue_file.layout == JSON_ARRAY:
        klue = {split: str(next(folder.glob(f"*_{split}.json"))) for split in present}
        loaded = datasets.load_dataset("json", data_files=klue, cache_dir=cache)
        assert {split: len(rows) for split, rows in loaded.items()} == present
