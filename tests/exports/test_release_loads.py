"""Issue 35, finding 9: a release folder loads as users load it. ``datasets.load_dataset(<folder>)`` reads the
card (``README.md``) and its ``configs``; each layout ``datasets`` reads with the folder's builder is a config of
its own, the others load with the call the card gives; an empty split has no file in any format, so neither
``datasets`` nor the official SQuAD v2.0 scorer meets an empty one."""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

import pytest
import yaml

from annotation.task_types import get_task_type, slugs
from exports.card import CARD_NAME
from tests.builders import build_release as build
from tests.builders import load_records, sample_records

pytestmark = pytest.mark.django_db

datasets = pytest.importorskip("datasets")


def card_header(folder: Path) -> dict:
    text = (folder / CARD_NAME).read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text[4:text.index("\n---\n", 4)])


def rows_by_split(loaded) -> dict[str, int]:
    return {split: len(rows) for split, rows in loaded.items()}


@pytest.mark.parametrize("slug", slugs())
def test_a_release_of_every_format_loads_as_a_folder_and_by_config_even_with_an_empty_split(
        slug, make_project, tmp_path, monkeypatch):
    project = make_project(slug)
    load_records(project, sample_records(slug, 12))
    formats = ",".join(["klue", "jsonl", "csv", "parquet", *get_task_type(slug).standard_formats])
    result = build(project, tmp_path / "out", "--version", "1.0.0", "--splits", "0.7,0.3,0", "--format", formats)
    folder = Path(result["out"])
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    splits = manifest["splits"]
    # 8.4 and 3.6 of 12 exactly; grouped tasks (a premise's hypotheses, a passage's questions) may overshoot.
    assert splits["test"] == 0 and splits["train"] + splits["dev"] == 12 and min(splits["train"], splits["dev"]) > 0
    # The empty split has no file in any format; the card is README.md (listed and checksummed), nothing else.
    assert not [f for f in manifest["files"] if f["split"] == "test"]
    assert not list(folder.rglob("*test*"))
    assert "README.md" in {f["path"] for f in manifest["files"]}
    assert "  README.md" in (folder / "SHA256SUMS").read_text() and not (folder / "dataset_card.md").exists()

    present = {"train": splits["train"], "dev": splits["dev"]}
    configs = loads_as_the_card_says(folder, slug, formats.split(","), present, tmp_path, monkeypatch)
    assert configs[0] == "jsonl"


def loads_as_the_card_says(folder: Path, slug: str, layouts: list[str], present: dict[str, int], tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Load the folder as is (its default config), each config by name and each other layout with the card's
    call, and check every split's size → the card's configs."""
    cache = str(tmp_path / "cache")
    header = card_header(folder)
    configs = [c["config_name"] for c in header.get("configs", [])]
    card = (folder / CARD_NAME).read_text(encoding="utf-8")
    # Every release folder loads as is: its default config.
    assert configs and header["configs"][0]["default"] is True
    assert rows_by_split(datasets.load_dataset(str(folder), cache_dir=cache)) == rows_by_split(
        datasets.load_dataset(str(folder), configs[0], cache_dir=cache))
    calls = dict(re.findall(r"^- (\w+): `(load_dataset\(.*\))`$", card, flags=re.MULTILINE))
    # Every layout loads: by config name from the folder, or with the call the card gives for it.
    assert sorted([*configs, *calls]) == sorted(layouts)
    monkeypatch.chdir(folder)  # the card's calls name files relative to the release folder
    for kind in layouts:
        if kind in configs:
            loaded = datasets.load_dataset(str(folder), kind, cache_dir=cache)
        else:
            loaded = eval(calls[kind], {"load_dataset": partial(datasets.load_dataset, cache_dir=cache)})
        assert set(loaded) == set(present), kind
        if kind not in ("squad",) and not (kind == "klue" and slug == "mrc"):  # those are rows of passages
            assert rows_by_split(loaded) == present, kind
            if kind in ("conll", "conllu") or (kind == "klue" and slug in ("ner", "dp")):
                # A sentence per row, a list per column, the tags beside the tokens.
                for rows in loaded.values():
                    assert len(rows.column_names) > 1, (kind, rows.column_names)
                    assert all(len({len(v) for v in row.values()}) == 1 for row in rows)
    return configs


#: Each layout alone, and KLUE's TSVs beside CoNLL's (no builder ``datasets`` infers reads either).
ALONE = [(slug, kind) for slug in slugs()
         for kind in ["klue", "jsonl", "csv", "parquet", *get_task_type(slug).standard_formats]]


@pytest.mark.parametrize(("slug", "formats"), [*ALONE, ("ner", "klue,conll"), ("dp", "klue,conllu")])
def test_a_release_of_one_layout_or_of_klue_and_conll_loads_by_its_config_or_the_cards_call(
        slug, formats, make_project, tmp_path, monkeypatch):
    project = make_project(slug)
    load_records(project, sample_records(slug, 12))
    folder = Path(build(project, tmp_path / "out", "--version", "1.0.0", "--splits", "0.7,0.3,0", "--format",
                        formats)["out"])
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    present = {"train": manifest["splits"]["train"], "dev": manifest["splits"]["dev"]}
    # KLUE's .tsv names the CSV builder, CoNLL-2003's .txt the text one, and a config of CoNLL-U loses its columns:
    # with none of the chosen layouts a folder's builder reads, the records come in JSONL beside them, so the
    # folder still loads as is.
    no_config = formats in ("conll", "conllu", "klue,conll", "klue,conllu") or (slug in ("ner", "dp")
                                                                               and formats == "klue")
    layouts = [*formats.split(","), "jsonl"] if no_config else formats.split(",")
    assert sorted(manifest["formats"]) == sorted(layouts)
    configs = loads_as_the_card_says(folder, slug, layouts, present, tmp_path, monkeypatch)
    assert configs == (["jsonl"] if no_config else [formats])


def test_an_empty_squad_split_has_no_file_so_the_squad_v2_scorer_never_divides_by_zero(make_project, tmp_path):
    from tests.exports.squad_v2 import squad_v2_scores  # the official evaluate-v2.0.py's scores

    project = make_project("mrc")
    load_records(project, sample_records("mrc", 12))
    result = build(project, tmp_path / "out", "--version", "1.0.0", "--splits", "0.7,0.3,0", "--format",
                   "klue,squad")
    folder = Path(result["out"])
    assert sorted(path.name for path in (folder / "squad").iterdir()) == ["dev.json", "train.json"]
    for split in ("train", "dev"):
        dataset = json.loads((folder / "squad" / f"{split}.json").read_text(encoding="utf-8"))["data"]
        answers = {qa["id"]: (qa["answers"][0]["text"] if qa["answers"] else "")
                   for doc in dataset for p in doc["paragraphs"] for qa in p["qas"]}
        assert answers and squad_v2_scores(dataset, answers) == (100.0, 100.0, len(answers))
    with pytest.raises(ZeroDivisionError):  # what an empty split's file made the scorer do
        squad_v2_scores([], {})


def test_a_jsonl_only_release_writes_no_file_for_an_empty_split_and_loads(make_project, tmp_path):
    # A JSONL-only release streams its records' line heads (exports.writers.write_jsonl_heads), another path.
    project = make_project("nli")
    load_records(project, sample_records("nli", 12))
    folder = Path(build(project, tmp_path / "out", "--version", "1.0.0", "--splits", "0.7,0.3,0", "--format",
                        "jsonl")["out"])
    assert sorted(p.name for p in (folder / "jsonl").iterdir()) == ["dev.jsonl", "train.jsonl"]
    loaded = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "cache"))
    assert sum(map(len, loaded.values())) == 12 and set(loaded) == {"train", "dev"}
