"""Soft labels in a release (``build_release --soft-labels``, the API's ``soft_labels``): each record's label votes
and, where the gold rule is an annotator model, its posteriors, in JSONL, CSV and Parquet only."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.core.management import CommandError

from annotation import services as annotation_services
from annotation.models import Annotation, GoldLabel
from exports.models import Release
from tests.builders import build_release as build
from tests.exports.release_history import data_files
from tests.gold.simulated import simulated

pytestmark = pytest.mark.django_db

NAMES = ["정치", "경제", "사회"]


def annotated_project(make_project, make_user, *, slug: str, gold_rule: str | None):
    """A news-topic project whose 80 items were labelled by five of eight simulated annotators each."""
    project = make_project("tc", k=5, slug=slug)
    if gold_rule:
        project.options = {"gold_rule": gold_rule}
        project.save()
    labels, _truth = simulated(13, n_items=80)
    users = [make_user(f"{slug}-u{j}") for j in range(labels.shape[1])]
    votes = {}
    for i, row in enumerate(labels):
        item = annotation_services.item_create(project=project, payload={"title": f"기사 제목 {i}"},
                                               external_id=f"{slug}-{i:03d}")
        given = [NAMES[v] for v in row if v >= 0]
        for user, value in zip(users, row, strict=True):
            if value >= 0:
                Annotation.objects.create(item=item, annotator=user, stage="label", payload={"label": NAMES[value]})
        votes[item.external_id] = {name: given.count(name) for name in NAMES}
    return project, votes


def jsonl_rows(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted((folder / "jsonl").glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines()]




@pytest.mark.parametrize("rule", ["mace", "dawid_skene"])
def test_a_model_rule_release_carries_votes_and_posteriors(rule, make_project, make_user, tmp_path):
    project, votes = annotated_project(make_project, make_user, slug=f"soft-{rule.replace('_', '-')}",
                                       gold_rule=rule)
    result = build(project, tmp_path / "a", "--version", "1.0.0", "--soft-labels")
    folder = Path(result["out"])
    rows = jsonl_rows(folder)
    assert len(rows) == sum(result["splits"].values()) >= 60
    gold = {g.item.external_id: g for g in GoldLabel.objects.filter(item__project=project).select_related("item")}
    all_labels = list(project.label_schema["labels"])
    for row in rows:
        assert list(row)[-3:] == ["label_votes", "label_posteriors", "split"]
        assert list(row["label_votes"]) == all_labels  # every label of the schema, in its order
        assert {k: v for k, v in row["label_votes"].items() if k in NAMES} == votes[row["guid"]]
        assert sum(row["label_votes"].values()) == 5
        posteriors = row["label_posteriors"]
        assert sum(posteriors.values()) == pytest.approx(1, abs=1e-5)
        assert max(posteriors, key=posteriors.get) == row["label"] == gold[row["guid"]].payload["label"]
        assert gold[row["guid"]].rule == rule

    # Parquet holds the same values as structs.
    table = pq.read_table(folder / "parquet" / "train.parquet")
    assert str(table.schema.field("label_votes").type) == "struct<" + ", ".join(f"{n}: int64" for n in all_labels) + ">"
    train = [r for r in rows if r["split"] == "train"]
    assert table.column("label_votes").to_pylist() == [r["label_votes"] for r in train]
    assert table.column("label_posteriors").to_pylist() == [r["label_posteriors"] for r in train]
    # KLUE's own files keep their layout: no soft-label field.
    klue = next(p for p in folder.glob("*.json") if "train" in p.name)
    assert "label_votes" not in klue.read_text(encoding="utf-8")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["soft_labels"]["votes"] == "label_votes"
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "### Soft labels" in card and "`label_posteriors`" in card and "MACE (Hovy et al. 2013)" in card

    # Built again (a new version, the same seed): the same data files, byte for byte.
    again = build(project, tmp_path / "b", "--version", "1.0.1", "--soft-labels")
    assert data_files(Path(again["out"])) == data_files(folder)


def test_the_default_release_has_no_soft_labels_and_stays_as_it_was(make_project, make_user, tmp_path):
    project, votes = annotated_project(make_project, make_user, slug="soft-default", gold_rule=None)
    plain = Path(build(project, tmp_path / "plain", "--version", "1.0.0")["out"])
    soft = Path(build(project, tmp_path / "soft", "--version", "1.0.1", "--soft-labels")["out"])
    manifest = json.loads((plain / "manifest.json").read_text(encoding="utf-8"))
    assert "soft_labels" not in manifest
    assert "Soft labels" not in (plain / "README.md").read_text(encoding="utf-8")
    plain_files, soft_files = data_files(plain), data_files(soft)
    # The KLUE files are the same bytes; the flat files differ only by the two columns.
    assert {p: b for p, b in plain_files.items() if p.endswith(".json")} == \
        {p: b for p, b in soft_files.items() if p.endswith(".json")}
    plain_rows, soft_rows = jsonl_rows(plain), jsonl_rows(soft)
    assert all("label_votes" not in row for row in plain_rows)
    stripped = [{k: v for k, v in row.items() if k not in ("label_votes", "label_posteriors")} for row in soft_rows]
    assert stripped == plain_rows
    assert pq.read_table(plain / "parquet" / "train.parquet").column_names[-1] == "split"
    # Majority vote decided the gold: votes, and no posteriors.
    for row in soft_rows:
        assert {k: v for k, v in row["label_votes"].items() if k in NAMES} == votes[row["guid"]]
        assert row["label_posteriors"] is None
    csv_header = (soft / "csv" / "train.csv").read_text(encoding="utf-8").splitlines()[0]
    assert csv_header.endswith("label_votes,label_posteriors,split")


def test_soft_labels_are_refused_where_gold_is_not_one_label(make_project, tmp_path):
    from tests.builders import load_records, sample_records

    ner = make_project("ner", k=3)
    load_records(ner, sample_records("ner", 10))
    with pytest.raises(CommandError, match="soft labels apply to the categorical tasks"):
        build(ner, tmp_path, "--version", "1.0.0", "--soft-labels")
    assert not Release.objects.filter(project=ner).exists()


def test_the_api_builds_a_release_with_soft_labels(make_project, make_user, api, release_root,
                                                   django_capture_on_commit_callbacks):
    project, _votes = annotated_project(make_project, make_user, slug="soft-api", gold_rule="mace")
    base = f"/api/projects/{project.pk}/releases/"
    with django_capture_on_commit_callbacks(execute=True):
        response = api(project.created_by).post(base, {"version": "1.0.0", "formats": ["jsonl"],
                                                       "soft_labels": True}, format="json")
    assert response.status_code == 202, response.content
    release_id = response.json()["id"]
    assert Release.objects.get(pk=release_id).options["soft_labels"] is True
    files = {f["path"]: f for f in api(project.created_by).get(f"{base}{release_id}/files/").data}
    download = api(project.created_by).get(f"{base}{release_id}/files/{files['jsonl/train.jsonl']['id']}/")
    assert download.status_code == 200
    first = json.loads(b"".join(download.streaming_content).splitlines()[0])
    assert sum(first["label_posteriors"].values()) == pytest.approx(1, abs=1e-5)
    assert sum(first["label_votes"].values()) == 5
    # Off unless asked for.
    with django_capture_on_commit_callbacks(execute=True):
        plain = api(project.created_by).post(base, {"version": "1.0.1", "formats": ["jsonl"]}, format="json")
    assert Release.objects.get(pk=plain.json()["id"]).options["soft_labels"] is False
