"""The release build's fast paths give exactly what the plain code gives: the orjson KLUE writer the bytes of
``write_klue_file``, a JSONL-only release's line heads the bytes of the JSONL writer, the numpy character
n-gram counter scikit-learn's matrices, and the baseline check's sample drawn while the files are written the
sample it would read from them."""

from __future__ import annotations

import json
import random
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from sklearn.feature_extraction.text import TfidfVectorizer

from annotation.task_types import JSON_ARRAY, all_task_types
from datasets_build.klue_formats import klue_spec, write_klue_file
from exports.baselines import char_ngrams
from exports.baselines.char_ngrams import CharTfidf
from exports.models import Release
from exports.release_check import release_check
from exports.writers import flat_schema, klue
from exports.writers.flat import _coerce, _lookup
from exports.writers.jsonl import JsonlWriter, line_head
from tests.builders import build_release, load_records, sample_records

#: Values orjson spells differently from ``json`` (the fast path must hand their batch to ``json``) and
#: values it spells the same, in the shapes records have.
AWKWARD = [
    {"guid": "a", "labels": {"label": 1e-05, "real-label": 1e16, "binary-label": 0}},
    {"guid": "b", "values": [float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 0.0001, 9999999999999998.0]},
    {"guid": "c", "text": "제어 문자 \x00\x01\x1f\x7f \u2028 \"인용\" \\ 탭\t줄\n끝", "none": None, "yes": True},
    {"guid": "d", "text": "두  칸   띄어쓰기", "empty": [], "nested": {"empty": {}, "list": [[], [{}]]}},
    {"guid": "e", "big": 2**70, "keys": {1: "int key"}},
    {"guid": "f", "score": 3.7142857142857144, "scores": [4, 4.5, 0.1], "minus": -2.5, "text": "e-mail e+1 null"},
]


@pytest.mark.parametrize("slug", [t.slug for t in all_task_types() if t.klue_file.layout == JSON_ARRAY])
@pytest.mark.parametrize("batch", [1, 3, 1000])
def test_klue_json_fast_path_writes_the_bytes_of_write_klue_file(slug, batch, tmp_path, monkeypatch):
    monkeypatch.setattr(klue, "BATCH", batch)
    records = [*sample_records(slug, 7), *AWKWARD, *sample_records(slug, 5, prefix="t")]
    for name, chosen in (("all", records), ("none", []), ("one", records[:1]), ("plain", records[:7])):
        fast, plain = tmp_path / f"{name}-fast.json", tmp_path / f"{name}-plain.json"
        assert klue.write_json_array(fast, chosen, klue_spec(slug).newline) == len(chosen)
        assert write_klue_file(plain, slug, chosen) == len(chosen)
        assert fast.read_bytes() == plain.read_bytes(), (slug, name)


@pytest.mark.parametrize("slug", [t.slug for t in all_task_types()])
def test_a_records_row_fields_and_label_are_what_the_generic_walk_reads(slug):
    schema = flat_schema(slug)
    shapes = [{}, {"annotations": None}, {"annotations": {"annotations": None}}, {"annotations": []}, {"labels": []}]
    for record in [*sample_records(slug, 7), *AWKWARD, *shapes]:
        row = schema.row(record, "train")
        # Each column as the generic walk of its paths reads it (the row's getters spell the usual ones out).
        assert row == (*(_coerce(column.value(record), column.type) for column in schema.columns), "train")
        assert schema.fields(record) == dict(zip(schema.names[:-1], row[:-1], strict=True))
        assert list(schema.fields(record)) == schema.names[:-1]
        found, label = _lookup(record, schema.stratify.split(".")) if schema.stratify else (False, None)
        assert schema.label(record) == (str(label) if found and label is not None else None)


def test_jsonl_line_heads_end_as_the_jsonl_writer_writes_the_row(tmp_path):
    rows = [(record.get("guid"), record) for record in AWKWARD if record["guid"] != "e"]
    for columns, split in ((["guid", "record"], "train"), ([], "dev"), (["단어"], "t\"e\u00e9st")):
        whole, heads, bulk = (JsonlWriter(tmp_path / name, split, [*columns, "split"])
                              for name in ("whole", "heads", "bulk"))
        lines = []
        for row in rows:
            values = row[:len(columns)]
            whole.write((*values, split))
            head = line_head(dict(zip(columns, values, strict=True)))
            heads.write_head(head)
            lines.append(head + b"\n")
        # Many heads at once, as a JSONL-only release writes a chunk of its work file's lines.
        half = len(lines) // 2
        bulk.write_heads(b"".join(lines[:half]), half)
        bulk.write_heads(b"".join(lines[half:]), len(lines) - half)
        assert whole.close() == heads.close() == bulk.close()
        assert (tmp_path / "whole" / "jsonl" / f"{split}.jsonl").read_bytes() == \
            (tmp_path / "heads" / "jsonl" / f"{split}.jsonl").read_bytes() == \
            (tmp_path / "bulk" / "jsonl" / f"{split}.jsonl").read_bytes()


@pytest.mark.parametrize("slug", [t.slug for t in all_task_types()])
def test_a_jsonl_only_release_writes_the_jsonl_files_of_a_release_with_more_formats(slug, make_project, tmp_path):
    assert "split" not in flat_schema(slug).names[:-1]  # else the build takes the plain path
    project = make_project(slug)
    load_records(project, sample_records(slug, 30))
    alone = Path(build_release(project, tmp_path / "a", "--version", "1.0.0", "--seed", "5", "--format",
                               "jsonl")["out"])
    more = Path(build_release(project, tmp_path / "b", "--version", "1.0.1", "--seed", "5", "--format",
                              "jsonl,csv")["out"])
    names = sorted(path.name for path in (alone / "jsonl").glob("*.jsonl"))
    assert names and names == sorted(path.name for path in (more / "jsonl").glob("*.jsonl"))
    for name in names:
        assert (alone / "jsonl" / name).read_bytes() == (more / "jsonl" / name).read_bytes(), (slug, name)


def _corpus(rng: random.Random, n: int) -> list[str]:
    pieces = [*"가나다라마바사아자하abcXYZ0129.,!?", " ", "  ", "\t", "\u3000", "\n", "İ", "ß", "\ud800", "ǅ"]
    return [*("".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(n)), "", "   "]


def _same(a, b) -> bool:
    return (type(a) is type(b) and a.shape == b.shape and a.dtype == b.dtype and a.indices.dtype == b.indices.dtype
            and np.array_equal(a.data, b.data) and np.array_equal(a.indices, b.indices)
            and np.array_equal(a.indptr, b.indptr))


@pytest.mark.parametrize("options", [
    {"max_features": 200_000}, {"max_features": 40}, {"max_features": 9, "ngram_range": (2, 3)},
    {"ngram_range": (1, 1), "min_df": 1}, {"max_features": 500, "lowercase": False},
])
@pytest.mark.parametrize("chunk", [2, 10_000])  # counted in many chunks (the last all empty documents), or one
def test_char_tfidf_gives_scikit_learns_matrices(options, chunk, monkeypatch):
    monkeypatch.setattr(char_ngrams, "_CHUNK", chunk)
    rng = random.Random(7)
    train, test = _corpus(rng, 1500), _corpus(rng, 300)
    params = {"analyzer": "char_wb", "ngram_range": (1, 3), "min_df": 2, "sublinear_tf": True, "dtype": np.float32,
              **options}
    theirs, ours = TfidfVectorizer(**params), CharTfidf(**params)
    assert _same(ours.fit_transform(train), theirs.fit_transform(train))
    assert _same(ours.transform(test), theirs.transform(test))
    assert np.array_equal(ours.idf_, theirs.idf_) and len(ours.vocabulary_) == len(theirs.vocabulary_)


def test_char_tfidf_refuses_what_scikit_learn_refuses():
    for documents in (["", "  "], ["a"]):
        with pytest.raises(ValueError) as theirs:
            TfidfVectorizer(analyzer="char_wb", min_df=2).fit(documents)
        with pytest.raises(ValueError, match=str(theirs.value)):
            CharTfidf(analyzer="char_wb", min_df=2).fit(documents)
    # Beyond trigrams (RE's 2-4-grams) it is scikit-learn's own counting.
    documents = _corpus(random.Random(3), 200)
    assert _same(CharTfidf(analyzer="char_wb", ngram_range=(2, 4)).fit_transform(documents),
                 TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4)).fit_transform(documents))


@pytest.mark.django_db
@pytest.mark.parametrize("slug", ["tc", "nli"])
def test_the_check_samples_while_writing_what_it_would_read_back(slug, make_project, tmp_path, monkeypatch):
    monkeypatch.setattr("exports.baselines.release_files.MAX_SPLIT_RECORDS", 25)
    project = make_project(slug)
    load_records(project, sample_records(slug, 90))
    stdout = StringIO()
    call_command("build_release", project.slug, "--version", "1.0.0", "--seed", "4", "--out", str(tmp_path), "--json",
                 stdout=stdout)
    folder = Path(json.loads(stdout.getvalue())["out"])
    built = Release.objects.get(project=project).baseline_check
    assert built["n_train"] == 25 and built["sampled_from"]["train"] > 25
    read_back = json.loads(json.dumps(release_check(folder, slug, leakage_clean=True, seed=4)))
    for key in ("passed", "metrics", "trivial", "n_train", "n_dev", "sampled_from", "test_metrics"):
        assert built[key] == read_back[key], key
