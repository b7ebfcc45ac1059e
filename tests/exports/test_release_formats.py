"""The JSONL, CSV and Parquet files of every task type: readable by Hugging Face ``datasets`` and by
pyarrow/csv, with the documented flat schema, and the same rows in all three."""

from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from annotation.task_types import slugs
from exports.writers.flat import flat_schema
from tests.builders import load_records, sample_records

pytestmark = pytest.mark.django_db


@pytest.fixture
def hf_offline(tmp_path, monkeypatch):
    """Keep every Hugging Face cache inside the test's folder, and never reach the network."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf" / "datasets"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf" / "datasets")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    datasets.disable_progress_bars()
    return datasets


@pytest.mark.parametrize("slug", slugs())
def test_datasets_loads_jsonl_and_parquet(slug, make_project, tmp_path, hf_offline):
    project = make_project(slug)
    load_records(project, sample_records(slug, 30))
    stdout = StringIO()
    call_command("build_release", project.slug, "--version", "1.0.0", "--format", "jsonl,csv,parquet",
                 "--out", str(tmp_path / "out"), "--seed", "2", "--json", stdout=stdout)
    result = json.loads(stdout.getvalue())
    folder = Path(result["out"])
    schema = flat_schema(slug)
    splits = {split: n for split, n in result["splits"].items() if n}
    cache = str(tmp_path / "hf" / "datasets")
    for kind in ("jsonl", "parquet"):
        files = {split: str(folder / kind / f"{split}.{kind}") for split in splits}
        loaded = hf_offline.load_dataset("json" if kind == "jsonl" else "parquet", data_files=files, cache_dir=cache)
        for split, n in splits.items():
            assert loaded[split].num_rows == n, (kind, split)
            assert loaded[split].column_names == schema.names, kind
            assert set(loaded[split]["split"]) == {split}
    # The three files of a split hold the same rows (CSV cells are JSON text for lists).
    for split in splits:
        jsonl = [json.loads(line) for line in (folder / "jsonl" / f"{split}.jsonl").read_text("utf-8").splitlines()]
        parquet = pq.read_table(folder / "parquet" / f"{split}.parquet").to_pylist()
        assert parquet == jsonl
        with open(folder / "csv" / f"{split}.csv", encoding="utf-8", newline="") as stream:
            rows = list(csv.DictReader(stream))
        assert [row["guid"] for row in rows] == [row["guid"] for row in jsonl]
        assert list(rows[0]) == schema.names
        for row, expected in zip(rows, jsonl, strict=True):
            for name, value in expected.items():
                if isinstance(value, list):
                    assert json.loads(row[name]) == value
                elif value is None:
                    assert row[name] == ""
    # Labels survive: the stratification field of labelled tasks is filled on every row.
    if schema.stratify:
        assert all(row[schema.stratify.split(".")[0].replace("labels", "binary_label")] is not None
                   for row in jsonl)
