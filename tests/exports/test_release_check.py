"""The release check (baseline vs trivial on dev, plus leakage) and the ``train_baseline`` command."""

from __future__ import annotations

import json
import random
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from exports.baselines.synthetic import synthetic_records, write_release, write_synthetic_release
from exports.release_check import release_check


def run(release: Path, *extra: str) -> dict[str, Any]:
    out = StringIO()
    call_command("train_baseline", str(release), "--json", *extra, stdout=out)
    return json.loads(out.getvalue())


def test_a_learnable_release_passes(tmp_path: Path) -> None:
    release = write_synthetic_release(tmp_path / "tc", "tc", 400)
    check = release_check(release, "tc", margin=10.0, leakage_clean=True, seed=13)
    assert check["passed"] is True and check["reasons"] == []
    assert check["primary"] == "macro_f1" and check["improvement"] >= 10.0
    assert set(check) >= {"passed", "metrics", "trivial", "seconds", "environment", "test_metrics"}


def test_leakage_or_a_margin_out_of_reach_fails(tmp_path: Path) -> None:
    release = write_synthetic_release(tmp_path / "ner", "ner", 200)
    leaky = release_check(release, "ner", margin=5.0, leakage_clean=False, seed=13)
    assert leaky["passed"] is False and leaky["reasons"] == ["the leakage check is not clean"]
    strict = release_check(release, "ner", margin=150.0, leakage_clean=True, seed=13)
    assert strict["passed"] is False and "does not beat the trivial baseline" in strict["reasons"][0]


def test_a_broken_label_mapping_fails(tmp_path: Path) -> None:
    """Labels shuffled against the text (a broken mapping) leave nothing to learn: the check fails."""
    records = synthetic_records("nli", 400, seed=3)
    labels = [r["gold_label"] for r in records]
    random.Random(1).shuffle(labels)
    shuffled = [{**r, "gold_label": label} for r, label in zip(records, labels, strict=True)]
    release = write_release(tmp_path / "nli", "nli", {"train": shuffled[:320], "dev": shuffled[320:]})
    check = release_check(release, "nli", margin=10.0, leakage_clean=True, seed=13)
    assert check["passed"] is False, check["metrics"]


def test_train_baseline_command(tmp_path: Path) -> None:
    release = write_synthetic_release(tmp_path / "dp", "dp", 300)
    result = run(release)
    assert {"task", "metrics", "trivial", "passed", "seconds"} <= set(result)
    assert result["task"] == "dp" and result["passed"] is True
    assert result["metrics"]["uas"] > result["trivial"]["uas"]

    sts = run(write_synthetic_release(tmp_path / "sts", "sts", 200))
    assert sts["trivial"]["pearsonr"] is None and sts["passed"] is True

    out = StringIO()
    call_command("train_baseline", str(release), stdout=out)
    assert "PASSED" in out.getvalue() and "uas" in out.getvalue()


def test_a_split_over_the_cap_is_sampled_and_the_sample_is_reported(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    release = write_synthetic_release(tmp_path / "tc", "tc", 400)
    whole = run(release)
    assert whole["sampled_from"] is None
    monkeypatch.setattr("exports.baselines.release_files.MAX_SPLIT_RECORDS", 150)
    sampled = run(release)
    assert sampled["n_train"] == 150 and sampled["sampled_from"]["train"] == whole["n_train"] > 150
    assert sampled["n_dev"] == whole["n_dev"] and "dev" not in sampled["sampled_from"]
    assert sampled["passed"] is True
    assert run(release)["metrics"] == sampled["metrics"]  # same seed, same sample
    assert run(release, "--seed", "7")["metrics"] != sampled["metrics"]


def test_train_baseline_reads_the_manifest_leakage_verdict(tmp_path: Path) -> None:
    release = write_synthetic_release(tmp_path / "tc", "tc", 200)
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    (release / "manifest.json").write_text(json.dumps({**manifest, "leakage": {"clean": False}}), encoding="utf-8")
    result = run(release)
    assert result["passed"] is False and result["reasons"] == ["the leakage check is not clean"]


def test_train_baseline_bad_input(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such directory"):
        call_command("train_baseline", str(tmp_path / "missing"))
    with pytest.raises(CommandError, match="no manifest"):
        call_command("train_baseline", str(tmp_path))
    (tmp_path / "manifest.json").write_text('{"task_type": "pos"}', encoding="utf-8")
    with pytest.raises(CommandError, match="task_type"):
        call_command("train_baseline", str(tmp_path))


def test_the_verdict_is_json_ready(tmp_path: Path) -> None:
    """Undefined metrics (the constant STS prediction's Pearson r) are None, so JSON columns accept it."""
    release = write_synthetic_release(tmp_path / "sts", "sts", 200)
    check = release_check(release, "sts", margin=5.0, leakage_clean=True, seed=13)
    assert check["trivial"]["pearsonr"] is None
    json.dumps(check, allow_nan=False)
