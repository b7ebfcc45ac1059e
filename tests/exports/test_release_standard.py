"""The standard release formats beside KLUE's, each read back by the field's own reader: CoNLL-U (DP) by the
``conllu`` package, CoNLL-2003 BIO (NER) by the conll2003 loader's parsing and seqeval, SQuAD v2.0 (MRC)
scored by the official evaluation's logic, doccano JSONL (NER, RE) by the doccano import. A format that
does not fit the task type is refused by the command, the API and the form."""

from __future__ import annotations

import itertools
import json
from io import StringIO
from pathlib import Path
from typing import Any

import conllu
import datasets
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from seqeval.metrics import f1_score
from seqeval.metrics.sequence_labeling import get_entities

from annotation.models import Annotation, Item
from datasets_build.klue_formats import iter_klue_records
from exports.models import BUILT
from exports.writers.standard import conll_tokens
from tests.builders import load_records, sample_records
from tests.exports.squad_v2 import squad_v2_scores

pytestmark = pytest.mark.django_db


def _klue_sample(klue_dir: Path, name: str, slug: str, n: int, tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """The first ``n`` records of a KLUE dev file, as a JSONL file to import."""
    records = [r for _, r in itertools.islice(iter_klue_records(klue_dir / name, slug), n)]
    path = tmp_path / f"{slug}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path, records


def _import(project_slug: str, path: Path, fmt: str, task: str) -> dict[str, Any]:
    out = StringIO()
    call_command("import_items", project_slug, str(path), "--format", fmt, "--task-type", task, "--pii", "off",
                 "--json", stdout=out)
    return json.loads(out.getvalue())


def _release(project_slug: str, formats: str, out: Path, *extra: str) -> dict[str, Any]:
    stdout = StringIO()
    call_command("build_release", project_slug, "--version", "1.0.0", "--format", formats, "--out", str(out),
                 "--json", *(extra or ("--keep-splits",)), stdout=stdout)
    return json.loads(stdout.getvalue())


@pytest.mark.klue
def test_dp_conllu_is_read_back_by_the_conllu_package_with_klue_columns(klue_dir, tmp_path):
    path, records = _klue_sample(klue_dir, "klue-dp-v1.1_dev.tsv", "dp", 150, tmp_path)
    assert _import("dp-std", path, "jsonl", "dp")["created"]["items"] == 150
    result = _release("dp-std", "klue,conllu", tmp_path / "out")
    written = Path(result["out"]) / "conllu" / "dev.conllu"
    assert "conllu/dev.conllu" in result["files"]
    with written.open(encoding="utf-8") as handle:
        sentences = list(conllu.parse_incr(handle))
    assert len(sentences) == 150
    for sentence, record in zip(sentences, records, strict=True):
        assert sentence.metadata == {"sent_id": record["guid"], "text": record["sentence"]}
        assert [t["form"] for t in sentence] == record["word_form"]
        assert [t["lemma"] for t in sentence] == ["+".join(lemma.split()) for lemma in record["lemma"]]
        assert [t["xpos"] for t in sentence] == record["pos"]
        assert [t["head"] for t in sentence] == record["head"]
        assert [t["deprel"] for t in sentence] == record["deprel"]
        assert {t["upos"] for t in sentence} == {"_"}  # KLUE-DP has no universal tags
        # One tree per sentence: conllu's own tree builder accepts it (exactly one root, every head inside).
        assert sentence.to_tree().token["head"] == 0


def _read_conll2003(path: Path) -> tuple[list[list[str]], list[list[str]]]:
    """The parsing of the Hugging Face ``conll2003`` loading script: ``-DOCSTART-`` and blank lines end a
    sentence, every other line is split on spaces, the token is column 1 and the NER tag column 4."""
    sentences: list[list[str]] = []
    tags: list[list[str]] = []
    tokens: list[str] = []
    ner: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("-DOCSTART-") or line in ("", "\n"):
                if tokens:
                    sentences.append(tokens)
                    tags.append(ner)
                    tokens, ner = [], []
            else:
                splits = line.split(" ")
                assert len(splits) == 4, line
                tokens.append(splits[0])
                ner.append(splits[3].rstrip())
    if tokens:
        sentences.append(tokens)
        tags.append(ner)
    return sentences, tags


def _entities(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(type, text without spaces) of a KLUE NER record's entities, in order."""
    found = [(kind, start, end) for kind, start, end in get_entities(record["tags"])]
    return [(kind, "".join(record["chars"][start:end + 1]).replace(" ", "")) for kind, start, end in found]


@pytest.mark.klue
def test_ner_conll_keeps_every_entity_and_reads_back(klue_dir, tmp_path):
    path, records = _klue_sample(klue_dir, "klue-ner-v1.1_dev.tsv", "ner", 200, tmp_path)
    _import("ner-std", path, "jsonl", "ner")
    result = _release("ner-std", "klue,conll,doccano", tmp_path / "out")
    folder = Path(result["out"])
    sentences, tags = _read_conll2003(folder / "conll" / "dev.txt")
    assert len(sentences) == 200
    for tokens, sentence_tags, record in zip(sentences, tags, records, strict=True):
        assert "".join(tokens) == record["sentence"].replace(" ", "")
        got = [(kind, "".join(tokens[start:end + 1])) for kind, start, end in get_entities(sentence_tags)]
        assert got == _entities(record), record["guid"]
    assert f1_score(tags, tags) == 1.0
    assert sum(len(get_entities(t)) for t in tags) == sum(len(_entities(r)) for r in records) > 100

    # doccano JSONL: every span, as character offsets of the sentence.
    lines = [json.loads(line) for line in (folder / "doccano" / "dev.jsonl").read_text("utf-8").splitlines()]
    for line, record in zip(lines, records, strict=True):
        assert line["text"] == record["sentence"] and line["guid"] == record["guid"]
        assert [(t, line["text"][s:e].replace(" ", "")) for s, e, t in line["label"]] == _entities(record)


def test_conll_tokens_split_particles_from_entities_and_keep_multi_word_entities():
    sentence = "경찰은 홍 길동 씨를 만났다"
    assert conll_tokens(sentence, [(0, 2, "OG"), (4, 8, "PS")]) == [
        ("경찰", "B-OG"), ("은", "O"), ("홍", "B-PS"), ("길동", "I-PS"), ("씨를", "O"), ("만났다", "O")]


def test_mrc_squad_v2_scores_100_against_itself(make_project, tmp_path):
    project = make_project("mrc")
    records = sample_records("mrc", 12)
    load_records(project, records)
    result = _release(project.slug, "klue,squad", tmp_path / "out", "--splits", "1.0,0.0")
    squad = json.loads((Path(result["out"]) / "squad" / "train.json").read_text("utf-8"))
    assert squad["version"] == "v2.0"
    qas = [qa for article in squad["data"] for p in article["paragraphs"] for qa in p["qas"]]
    assert len(qas) == 12
    # Questions of one passage share its paragraph; each answer is where its offset says.
    assert len(squad["data"]) == len({(r["title"], r["context"]) for r in records})
    for article in squad["data"]:
        for p in article["paragraphs"]:
            for qa in p["qas"]:
                for answer in qa["answers"]:
                    assert p["context"][answer["answer_start"]:].startswith(answer["text"])
                assert qa["is_impossible"] == (not qa["answers"])
    by_guid = {r["guid"]: r for r in records}
    assert {qa["id"]: qa["is_impossible"] for qa in qas} == {g: r["is_impossible"] for g, r in by_guid.items()}
    predictions = {qa["id"]: qa["answers"][0]["text"] if qa["answers"] else "" for qa in qas}
    assert squad_v2_scores(squad["data"], predictions) == (100.0, 100.0, 12)
    # The check can fail: answering an unanswerable question costs exact match.
    wrong = {**predictions, next(i for i, r in by_guid.items() if r["is_impossible"]): "장마"}
    assert squad_v2_scores(squad["data"], wrong)[0] < 100.0
    # The `datasets` library reads it as the card says (the articles under "data").
    loaded = datasets.load_dataset("json", data_files=str(Path(result["out"]) / "squad" / "train.json"),
                                   field="data", split="train", cache_dir=str(tmp_path / "hf"))
    assert sum(len(p["qas"]) for article in loaded for p in article["paragraphs"]) == 12


def test_re_doccano_round_trip_through_the_doccano_reader(make_project, tmp_path):
    project = make_project("re")
    records = sample_records("re", 6)
    load_records(project, records)
    result = _release(project.slug, "doccano", tmp_path / "out", "--splits", "1.0,0.0")
    written = Path(result["out"]) / "doccano" / "train.jsonl"
    line = json.loads(written.read_text("utf-8").splitlines()[0])
    assert set(line) == {"text", "entities", "relations", "guid"}
    assert [e["label"] for e in line["entities"]] == ["PER", "ORG"]
    assert len(datasets.load_dataset("json", data_files=str(written), split="train",
                                     cache_dir=str(tmp_path / "hf"))) == 6
    back = _import("re-back", written, "doccano", "re")
    assert back["created"] == {"items": 6, "annotations": 6}
    again = {i.external_id: i for i in Item.objects.filter(project__slug="re-back")}
    for record in records:
        item = again[record["guid"]]
        assert item.payload["subject_entity"] == record["subject_entity"]
        assert item.payload["object_entity"] == record["object_entity"]
        assert Annotation.objects.get(item=item).payload["label"] == record["label"]


def test_ner_doccano_round_trip_keeps_every_span(make_project, tmp_path):
    project = make_project("ner")
    records = sample_records("ner", 8)
    load_records(project, records)
    result = _release(project.slug, "doccano", tmp_path / "out", "--splits", "1.0,0.0")
    written = Path(result["out"]) / "doccano" / "train.jsonl"
    _import("ner-back", written, "doccano", "ner")
    before = {i.external_id: Annotation.objects.get(item=i).payload["entities"] for i in project.items.all()}
    after = {i.external_id: Annotation.objects.get(item=i).payload["entities"]
             for i in Item.objects.filter(project__slug="ner-back")}
    assert after == before and sum(map(len, before.values())) >= 8


@pytest.mark.parametrize(("task", "fmt", "fits"), [("tc", "conllu", "dp"), ("ner", "squad", "mrc"),
                                                    ("dp", "conll", "ner"), ("mrc", "doccano", "ner, re")])
def test_a_format_for_another_task_type_is_refused_by_the_command(task, fmt, fits, make_project, tmp_path):
    project = make_project(task)
    load_records(project, sample_records(task, 4))
    with pytest.raises(CommandError, match=f"format {fmt} is for {fits} projects, not {task}"):
        _release(project.slug, f"klue,{fmt}", tmp_path / "out")
    assert not project.releases.exists()


def test_api_and_form_offer_the_formats_that_fit(make_project, api, tmp_path, settings, client,
                                                 django_capture_on_commit_callbacks):
    settings.GOLDSET_RELEASE_ROOT = str(tmp_path / "releases")
    project = make_project("dp")
    load_records(project, sample_records("dp", 6))
    manager = project.created_by
    refused = api(manager).post(f"/api/projects/{project.pk}/releases/", {"version": "1.0.0", "formats": ["squad"]},
                                format="json")
    assert refused.status_code == 400 and "format squad is for mrc projects, not dp" in json.dumps(refused.json())
    with django_capture_on_commit_callbacks(execute=True):
        made = api(manager).post(f"/api/projects/{project.pk}/releases/",
                                 {"version": "1.0.0", "formats": ["klue", "conllu"], "splits": "1.0,0.0"},
                                 format="json")
    assert made.status_code == 202, made.content
    # Neither KLUE's TSVs nor CoNLL-U is a layout the folder's builder reads: the records come in JSONL too.
    assert made.json()["formats"] == ["klue", "jsonl", "conllu"]
    release = project.releases.get(version="1.0.0")
    assert release.status in BUILT, release.error
    card = (Path(release.out_dir) / "README.md").read_text("utf-8")
    assert "| `conllu/train.conllu` | CoNLL-U (Universal Dependencies) | train | 6 | `conllu.parse_incr(" in card
    client.force_login(manager)
    page = client.get(f"/projects/{project.pk}/releases/").content.decode()
    assert 'value="conllu"' in page and 'value="squad"' not in page and 'value="conll"' not in page


INTEROP = Path(__file__).parents[1] / "data" / "interop"


def test_re_round_trip_through_a_real_doccano(make_project, tmp_path):
    """Goldset's doccano release (compared byte for byte with the file that was uploaded to doccano 1.8.4),
    doccano's export of it (committed; tests/data/interop/README.md), imported back: every span is kept."""
    project = make_project("re", slug="re-rt")
    load_records(project, sample_records("re", 6))
    rel = Path(_release("re-rt", "doccano", tmp_path / "re", "--splits", "1.0,0.0")["out"]) / "doccano" / "train.jsonl"
    assert rel.read_bytes() == (INTEROP / "goldset_release_re.jsonl").read_bytes()
    _import("re-rt-back", INTEROP / "doccano_roundtrip_re.zip", "doccano", "re")
    for line in map(json.loads, rel.read_text("utf-8").splitlines()):
        item = Item.objects.get(project__slug="re-rt-back", external_id=line["guid"])
        subject, obj = line["entities"]
        assert (item.payload["subject_entity"]["start_idx"], item.payload["subject_entity"]["end_idx"] + 1) == (
            subject["start_offset"], subject["end_offset"])
        assert (item.payload["object_entity"]["start_idx"], item.payload["object_entity"]["end_idx"] + 1) == (
            obj["start_offset"], obj["end_offset"])
        assert Annotation.objects.get(item=item).payload == {"label": line["relations"][0]["type"]}
