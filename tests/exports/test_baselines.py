"""The CPU baselines: each beats its trivial baseline on a small synthetic release, deterministically;
the release folder is read by its manifest; on real KLUE dev data NER/DP/NLI/STS beat theirs widely."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from annotation.task_types import slugs
from exports.baselines import ReleaseError, get_baseline, train_and_evaluate
from exports.baselines.release_files import load_release, split_file
from exports.baselines.synthetic import synthetic_records, write_synthetic_release
from exports.metrics import finite_or_zero, get_task_metrics

TASKS = sorted(slugs())


def halves(task: str, n: int = 400) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    records = synthetic_records(task, n, seed=7)
    return records[: n * 3 // 4], records[n * 3 // 4:]


def test_every_task_type_has_a_baseline_and_metrics() -> None:
    assert set(TASKS) == {"tc", "sts", "nli", "ner", "re", "dp", "mrc", "dst"}
    for task in TASKS:
        assert get_baseline(task).train and get_task_metrics(task).primary


@pytest.mark.parametrize("task", TASKS)
def test_baseline_beats_trivial_on_synthetic_data(task: str) -> None:
    result = train_and_evaluate(halves(task), task, seed=13)
    primary = result.primary
    assert finite_or_zero(result.metrics[primary]) >= finite_or_zero(result.trivial[primary]) + 20, result
    assert set(result.metrics) == set(result.trivial)
    assert result.seconds > 0 and result.n_train == 300 and result.n_dev == 100
    assert result.environment["packages"]["scikit-learn"]


@pytest.mark.parametrize("task", ["tc", "dp", "dst"])
def test_baseline_is_deterministic_given_the_seed(task: str) -> None:
    first = train_and_evaluate(halves(task), task, seed=5)
    second = train_and_evaluate(halves(task), task, seed=5)
    assert first.metrics == second.metrics and first.trivial == second.trivial


def test_trivial_baselines() -> None:
    _, dev = halves("dp")
    predicted = get_baseline("dp").trivial(dev)(dev)
    for record in predicted:
        n = len(record["head"])
        assert record["head"] == [*range(2, n + 1), 0]
    _, dev = halves("ner")
    assert all(set(r["tags"]) == {"O"} for r in get_baseline("ner").trivial(dev)(dev))
    assert set(get_baseline("mrc").trivial(dev)([{"guid": "q"}]).values()) == {""}
    train, dev = halves("sts")
    values = {r["labels"]["real-label"] for r in get_baseline("sts").trivial(train)(dev)}
    assert len(values) == 1
    train, dev = halves("re")
    probs = get_baseline("re").trivial(train)(dev)[0]["probs"]
    assert len(probs) == 30 and sum(probs) == pytest.approx(1.0)


def test_release_folder_is_read_by_its_manifest(tmp_path: Path) -> None:
    release = write_synthetic_release(tmp_path / "nli", "nli", 300)
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    assert manifest == {"task_type": "nli", "version": "1.1", "splits": {"train": 240, "dev": 30, "test": 30}}
    assert split_file(release, "nli", "1.1", "dev") == release / "klue-nli-v1.1_dev.json"
    data = load_release(release)
    assert {k: len(v) for k, v in data.splits.items()} == manifest["splits"]
    result = train_and_evaluate(release, "nli", seed=13)
    assert result.test_metrics is not None and result.test_metrics["accuracy"] > result.test_trivial["accuracy"]


def test_split_file_falls_back_to_any_klue_version(tmp_path: Path) -> None:
    release = write_synthetic_release(tmp_path / "tc", "tc", 100)
    assert split_file(release, "tc", "2.0.0", "train") == release / "ynat-v1.1_train.json"


def test_dst_uses_the_release_ontology(tmp_path: Path) -> None:
    release = write_synthetic_release(tmp_path / "dst", "dst", 200)
    data = load_release(release)
    assert data.ontology and "숙소-지역" in data.ontology


def test_release_errors(tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="no manifest"):
        train_and_evaluate(tmp_path, "tc")
    release = write_synthetic_release(tmp_path / "tc", "tc", 100)
    with pytest.raises(ReleaseError, match="not nli"):
        train_and_evaluate(release, "nli")
    (release / "ynat-v1.1_dev.json").unlink()
    with pytest.raises(ReleaseError, match="no dev file"):
        train_and_evaluate(release, "tc")
    with pytest.raises(ReleaseError, match="no baseline"):
        train_and_evaluate(halves("tc"), "pos")


# --- real KLUE dev data (re-split; subsets sized to run well under a minute each) -------------------

def resplit(records: list[dict[str, Any]], n: int, group: str | None = None) -> tuple[list, list]:
    """A seeded 80/10 split of the first ``n`` records, keeping records that share ``group`` together."""
    records = records[:n]
    keys = sorted({r[group] if group else r["guid"] for r in records})
    random.Random(13).shuffle(keys)
    dev_keys = set(keys[: len(keys) // 10])
    train = [r for r in records if (r[group] if group else r["guid"]) not in dev_keys]
    dev = [r for r in records if (r[group] if group else r["guid"]) in dev_keys]
    return train, dev


def real(klue_dir: Path, name: str, task: str) -> list[dict[str, Any]]:
    from datasets_build.klue_formats import iter_klue_records

    return [r for _, r in iter_klue_records(klue_dir / name, task)]


@pytest.mark.klue
def test_ner_baseline_beats_all_o_widely_on_klue_dev(klue_dir: Path) -> None:
    result = train_and_evaluate(resplit(real(klue_dir, "klue-ner-v1.1_dev.tsv", "ner"), 1000), "ner", seed=13)
    assert result.trivial["entity_macro_f1"] == 0.0
    assert result.metrics["entity_macro_f1"] >= 30.0, result.metrics


@pytest.mark.klue
def test_dp_baseline_beats_attach_to_next_on_klue_dev(klue_dir: Path) -> None:
    result = train_and_evaluate(resplit(real(klue_dir, "klue-dp-v1.1_dev.tsv", "dp"), 800), "dp", seed=13)
    assert result.metrics["uas"] >= result.trivial["uas"] + 10, (result.metrics, result.trivial)
    assert result.metrics["las"] >= result.trivial["las"] + 30


@pytest.mark.klue
def test_nli_and_sts_baselines_beat_trivial_on_klue_dev(klue_dir: Path) -> None:
    nli = train_and_evaluate(resplit(real(klue_dir, "klue-nli-v1.1_dev.json", "nli"), 3000, "premise"), "nli", 13)
    assert nli.metrics["accuracy"] >= nli.trivial["accuracy"] + 5, (nli.metrics, nli.trivial)
    sts = train_and_evaluate(resplit(real(klue_dir, "klue-sts-v1.1_dev.json", "sts"), 519), "sts", 13)
    assert sts.metrics["pearsonr"] >= 40 and sts.metrics["f1"] > sts.trivial["f1"] + 20, sts.metrics
