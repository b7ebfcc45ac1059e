"""One home per task type: every registered task type declares every layer, nothing outside the registry
compares a task slug, and a task type defined only here, in the tests, goes through import, the queue,
agreement, gold, a release in every format it fits, the metrics and the baseline check without a change to
the application's files."""

from __future__ import annotations

import csv
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from django.contrib.staticfiles import finders
from django.core.management import call_command

from annotation.agreement import services as agreement_services
from annotation.agreement.measures import measure_for
from annotation.agreement.measures.categorical import CategoricalMeasure
from annotation.gold import services as gold_services
from annotation.gold.rules import RESOLVED, MajorityRule, rule_for
from annotation.models import GoldLabel, Item
from annotation.task_types import (
    CHAR_TSV,
    EOJEOL_TSV,
    JSON_ARRAY,
    LABEL_STAGE,
    SQUAD,
    GuidelineTemplate,
    KlueFile,
    MissingLayer,
    ParsedRecord,
    PayloadError,
    RecordAnnotation,
    SpanField,
    TaskType,
    get_task_type,
    register,
    slugs,
    unregister,
)
from annotation.workspace_strings import workspace_strings
from datasets_build.klue_formats import klue_spec
from datasets_build.services import items_import
from exports.baselines import get_baseline, train_and_evaluate
from exports.baselines._base import TaskBaseline
from exports.baselines.synthetic import write_synthetic_release
from exports.metrics import TaskMetrics, get_task_metrics
from exports.writers import DEFAULT_FORMATS, STANDARD_FORMATS
from exports.writers.flat import INT, STRING, FlatSchema, column, flat_schema

ROOT = Path(__file__).resolve().parents[2]

# -- the layers, as the application finds them ---------------------------------------------------------------


def _text_fields(task: TaskType) -> None:
    fields = task.declared("text_fields", "text fields")
    assert fields and all(isinstance(f, str) for f in fields), fields


def _span_fields(task: TaskType) -> None:
    text_fields = task.declared("text_fields", "text fields")
    for span in task.declared("span_fields", "span fields"):
        assert isinstance(span, SpanField) and span.text_field in text_fields, span
        assert span.where in ("payload", "meta", "annotation"), span


def _csv_columns(task: TaskType) -> None:
    assert task.declared("csv_columns", "CSV columns")


def _klue_file(task: TaskType) -> None:
    assert klue_spec(task.slug).layout in (JSON_ARRAY, CHAR_TSV, EOJEOL_TSV, SQUAD)


def _flat_schema(task: TaskType) -> None:
    assert "guid" in flat_schema(task.slug).names


def _agreement(task: TaskType) -> None:
    assert measure_for(task.slug).fields


def _gold(task: TaskType) -> None:
    assert rule_for(task.slug).name


def _metrics(task: TaskType) -> None:
    metrics = get_task_metrics(task.slug)
    assert metrics.primary in (*metrics.official, *metrics.extra) and callable(metrics.primary_stats)


def _baseline(task: TaskType) -> None:
    baseline = get_baseline(task.slug)
    assert callable(baseline.train) and callable(baseline.trivial)


def _suggestion(task: TaskType) -> None:
    assert type(task).suggestion_payload is not TaskType.suggestion_payload, "declares no suggestion payload"


def _widget(task: TaskType) -> None:
    widget = task.declared("widget", "widget")
    assert finders.find(widget), f"no static file {widget}"
    assert task.widget_styles is None or finders.find(task.widget_styles), f"no static file {task.widget_styles}"


def _synthetic(task: TaskType) -> None:
    rng = random.Random(0)
    for n in range(3):
        parsed = task.parse_record(task.complete_record(task.synthetic_record(rng, n)))
        task.validate_item(parsed.payload)
        assert parsed.annotations, "a synthetic record carries its label"
    assert (task.synthetic_ontology() is not None) == klue_spec(task.slug).ontology


LAYERS: dict[str, Callable[[TaskType], None]] = {
    "text fields": _text_fields, "span fields": _span_fields, "CSV columns": _csv_columns,
    "KLUE file layout": _klue_file, "flat export schema": _flat_schema, "agreement measure": _agreement,
    "gold rule": _gold, "metrics": _metrics, "baseline": _baseline, "suggestion payload": _suggestion,
    "widget": _widget, "synthetic records": _synthetic,
}


def missing_layers(task: TaskType) -> dict[str, str]:
    """``{layer: why}`` for every layer the application cannot find (or finds malformed) for the task type."""
    missing = {}
    for layer, check in LAYERS.items():
        try:
            check(task)
        except Exception as exc:  # any failure of a layer's lookup is that layer missing
            missing[layer] = f"{type(exc).__name__}: {exc}"
    return missing


@pytest.mark.parametrize("slug", slugs())
def test_every_registered_task_type_declares_every_layer(slug: str) -> None:
    assert missing_layers(get_task_type(slug)) == {}


@pytest.mark.parametrize("slug", slugs())
def test_the_workspace_hands_each_widget_every_string_it_shows(slug: str) -> None:
    """The widget's strings come from its task type (``widget_strings``) beside the workspace's own."""
    task = get_task_type(slug)
    source = (ROOT / "annotation" / "static" / task.widget).read_text(encoding="utf-8")
    shown = set(re.findall(r"\bT\.(\w+)", source))
    strings = workspace_strings(task)
    assert shown and shown <= set(strings), sorted(shown - set(strings))
    assert all(isinstance(text, str) and text for text in strings.values())


class _Bare(TaskType):
    """A task type that declares nothing past the registry's basics."""

    slug = "bare"
    klue_name = "Bare"
    title = "Bare"
    text_fields = ("text",)


def test_the_walk_names_each_missing_layer() -> None:
    register(_Bare())
    try:
        missing = missing_layers(get_task_type("bare"))
    finally:
        unregister("bare")
    assert set(missing) == set(LAYERS) - {"text fields"}
    assert "declares no span fields" in missing["span fields"]
    assert "declares no KLUE file layout" in missing["KLUE file layout"]
    assert "declares no synthetic records" in missing["synthetic records"]


def test_a_task_type_whose_klue_file_has_an_ontology_declares_a_synthetic_one() -> None:
    class WithOntology(_Bare):
        klue_file = KlueFile("bare", "json", ontology=True)

    with pytest.raises(MissingLayer, match="declares no synthetic ontology"):
        WithOntology().synthetic_ontology()

    class WithoutOntology(_Bare):
        klue_file = KlueFile("bare", "json")

    assert WithoutOntology().synthetic_ontology() is None


# -- nothing else compares a task slug --------------------------------------------------------------------

SCANNED = ("annotation", "datasets_build", "exports", "config", "demo", "bench")
SUFFIXES = (".py", ".html", ".js", ".txt")


def slug_comparisons(root: Path, names: Sequence[str]) -> Iterator[str]:
    """``file:line: text`` of every comparison of an expression with a task slug's literal (``== "ner"``,
    ``"ner" !==``, ``in ("tc", "nli")``, ``case "re":``) outside ``annotation/task_types/``."""
    slug = "|".join(re.escape(n) for n in names)
    literal = rf"""(?:"(?:{slug})"|'(?:{slug})')"""
    pattern = re.compile(
        rf"""[=!]==?\s*{literal}|{literal}\s*[=!]==?|\bnot\s+in\s*[(\[{{][^)\]}}]*{literal}"""
        rf"""|\bin\s*[(\[{{][^)\]}}]*{literal}|\bcase\s+{literal}\s*:|\.includes\(\s*{literal}""")
    for top in SCANNED:
        for path in sorted((root / top).rglob("*")):
            relative = path.relative_to(root).as_posix()
            skipped = relative.startswith("annotation/task_types/") or "/migrations/" in relative
            if path.suffix not in SUFFIXES or skipped:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if pattern.search(line):
                    yield f"{relative}:{number}: {line.strip()}"


def test_nothing_outside_the_registry_compares_a_task_slug() -> None:
    found = list(slug_comparisons(ROOT, slugs()))
    assert found == [], "declare the behaviour on the task type instead:\n" + "\n".join(found)


def test_the_slug_grep_finds_each_kind_of_comparison(tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "a.py").write_text('x = 1\nif task.slug == "ner":\n    pass\nok = kind in ("mrc", "other")\n',
                                 encoding="utf-8")
    (folder / "b.js").write_text('if (task !== "dp") {}\nswitch (t) { case "re": break; }\n', encoding="utf-8")
    (folder / "c.html").write_text('{% if project.task_type == "sts" %}x{% endif %}\n', encoding="utf-8")
    assert list(slug_comparisons(tmp_path, slugs())) == [
        'exports/a.py:2: if task.slug == "ner":', 'exports/a.py:4: ok = kind in ("mrc", "other")',
        'exports/b.js:1: if (task !== "dp") {}', 'exports/b.js:2: switch (t) { case "re": break; }',
        'exports/c.html:1: {% if project.task_type == "sts" %}x{% endif %}']


# -- a ninth task type, defined only here ----------------------------------------------------------------------

YES, NO = "yes", "no"


def _yes_no_label(text: str) -> str:
    return YES if "맞다" in text else NO


def score_yes_no(gold: Sequence[Mapping[str, Any]], pred: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    hits = [g["label"] == p["label"] for g, p in zip(gold, pred, strict=True)]
    return {"accuracy": 100.0 * sum(hits) / len(hits) if hits else 0.0}


def yes_no_stats(dev: Sequence[Mapping[str, Any]], predicted: Any) -> tuple[Any, Callable[[Any], Any]]:
    stats = np.array([[float(g["label"] == p["label"]), 1.0] for g, p in zip(dev, predicted, strict=True)])
    return stats, lambda s: 100.0 * s[:, 0] / np.maximum(s[:, 1], 1.0)


def train_yes_no(train: Sequence[dict[str, Any]], seed: int, ontology: Any) -> Callable[[Any], Any]:
    """The label each eojeol was seen with most; a text takes the vote of its eojeol."""
    seen: dict[str, Counter[str]] = {}
    for record in train:
        for word in record["text"].split():
            seen.setdefault(word, Counter())[record["label"]] += 1

    def predict(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for record in records:
            votes: Counter[str] = Counter()
            for word in record["text"].split():
                if word in seen and len(seen[word]) == 1:
                    votes.update(seen[word])
            out.append({**record, "label": votes.most_common(1)[0][0] if votes else NO})
        return out

    return predict


def trivial_yes_no(train: Sequence[dict[str, Any]]) -> Callable[[Any], Any]:
    label = Counter(r["label"] for r in train).most_common(1)[0][0]
    return lambda records: [{**r, "label": label} for r in records]


class YesNo(TaskType):
    """Is the statement about the marked phrase true? One span (the phrase) in the item, yes or no as label."""

    slug = "yesno"
    klue_name = "Yes/No"
    title = "Yes/no question"
    order = 900
    text_fields = ("text",)
    span_fields = (SpanField("payload", "target", "text", "start_idx", "end_idx", quote="word"),)
    csv_columns = ("text", "target")
    klue_file = KlueFile("yesno", "json")
    widget = "annotation/widgets/nli.js"

    def default_schema(self) -> dict[str, Any]:
        return {"labels": [YES, NO]}

    def guideline_template(self) -> GuidelineTemplate:
        return GuidelineTemplate(instructions="Answer yes or no about the marked phrase.", ethics="Be fair.",
                                 pii="Personal data is replaced by pseudonyms.")

    def validate_item(self, payload: Any) -> dict[str, Any]:
        if not isinstance(payload, dict) or not isinstance(payload.get("text"), str) or not payload["text"]:
            raise PayloadError("text", "is required")
        target = payload.get("target")
        if not isinstance(target, dict):
            raise PayloadError("target", "must be an object")
        start, end = target.get("start_idx"), target.get("end_idx")
        if not isinstance(start, int) or not isinstance(end, int) or payload["text"][start:end] != target.get("word"):
            raise PayloadError("target", "start_idx and end_idx must mark the word in the text")
        return {"text": payload["text"], "target": {"word": target["word"], "start_idx": start, "end_idx": end}}

    def validate_annotation(self, payload: Any, *, item: dict[str, Any], schema: dict[str, Any],
                            stage: str) -> dict[str, Any]:
        self.stage(stage)
        label = payload.get("label") if isinstance(payload, dict) else None
        if label not in schema.get("labels", []):
            raise PayloadError("label", f"must be one of {schema.get('labels')}")
        return {"label": label}

    def parse_record(self, record: dict[str, Any]) -> ParsedRecord:
        if not isinstance(record.get("guid"), str):
            raise PayloadError("guid", "is required")
        annotations = ([RecordAnnotation("", LABEL_STAGE, {"label": record["label"]})]
                       if record.get("label") is not None else [])
        return ParsedRecord(external_id=record["guid"],
                            payload={"text": record.get("text"), "target": record.get("target")},
                            meta={k: v for k, v in record.items() if k not in ("guid", "text", "target", "label")},
                            annotations=annotations)

    def build_record(self, *, external_id: str, payload: dict[str, Any], meta: dict[str, Any],
                     annotations: list[RecordAnnotation], gold: dict[str, Any] | None) -> dict[str, Any]:
        label = (gold or {}).get("label") or next((a.payload["label"] for a in annotations), None)
        record = {"guid": external_id, "text": payload["text"], "target": payload["target"], **meta}
        return {**record, "label": label} if label is not None else record

    def agreement_measure(self) -> Any:
        return CategoricalMeasure()

    def gold_rule(self) -> Any:
        return MajorityRule("label")

    def flat_schema(self) -> Any:
        return FlatSchema((column("guid"), column("text"), column("target_word", STRING, "target.word"),
                           column("target_start", INT, "target.start_idx"), column("target_end", INT, "target.end_idx"),
                           column("label")), stratify="label")

    def metrics(self) -> Any:
        return TaskMetrics(self.slug, score_yes_no, ("accuracy",), (), "accuracy", yes_no_stats)

    def baseline(self) -> Any:
        return TaskBaseline(train_yes_no, trivial_yes_no, "eojeol vote", "majority label")

    def suggestion_payload(self, record: dict[str, Any], item: dict[str, Any], schema: dict[str, Any]
                           ) -> dict[str, Any]:
        return {"label": record["label"]}

    def synthetic_record(self, rng: random.Random, n: int) -> dict[str, Any]:
        lead, word = rng.choice(("오늘 ", "어제 들은 ")), rng.choice(SUBJECTS)
        text = f"{lead}{word} 이야기는 {rng.choice(('맞다', '아니다'))}"
        return {"guid": f"yesno-v1_train_{n:05d}", "text": text, "label": _yes_no_label(text),
                "target": {"word": word, "start_idx": len(lead), "end_idx": len(lead) + len(word)}}


@pytest.fixture
def yes_no() -> Iterator[TaskType]:
    task = YesNo()
    register(task)
    yield task
    unregister(task.slug)


PHONE = "010-2345-6789"
SUBJECTS = ["사과", "바다", "하늘", "기차", "도서관", "커피", "고양이", "운동장"]


def yes_no_records(n: int, prefix: str, *, labelled: bool = True) -> list[dict[str, Any]]:
    """Records whose label the text gives away (``맞다`` / ``아니다``); every third one quotes a phone number
    before the marked phrase, so pseudonymizing it moves the phrase's offsets."""
    records = []
    for i in range(n):
        lead = f"문의 {PHONE} 이후 " if i % 3 == 0 else "오늘 "
        word = SUBJECTS[i % len(SUBJECTS)]
        verdict = "맞다" if i % 2 == 0 else "아니다"
        text = f"{lead}{word} 이야기는 {verdict} {prefix}{i}번"
        record = {"guid": f"{prefix}-{i:03d}", "text": text,
                  "target": {"word": word, "start_idx": len(lead), "end_idx": len(lead) + len(word)}}
        if labelled:
            record["label"] = _yes_no_label(text)
        records.append(record)
    return records


def write_csv(path: Path, records: list[dict[str, Any]], columns: Sequence[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(columns)
        for r in records:
            flat = {"guid": r["guid"], "text": r["text"], "target.word": r["target"]["word"],
                    "target.start_idx": r["target"]["start_idx"], "target.end_idx": r["target"]["end_idx"],
                    "label": r.get("label", "")}
            writer.writerow([flat[c] for c in columns])


def assert_spans_follow_the_pseudonyms(items: list[Item]) -> None:
    moved = 0
    for item in items:
        text, target = item.payload["text"], item.payload["target"]
        assert PHONE not in json.dumps([item.payload, item.meta], ensure_ascii=False)
        assert text[target["start_idx"]:target["end_idx"]] == target["word"] in SUBJECTS, item.payload
        moved += item.pii_findings != [] and target["start_idx"] != len(f"문의 {PHONE} 이후 ")
    assert moved >= 1  # the phone number was replaced by a pseudonym of another length, and the span moved


@pytest.mark.django_db
def test_a_task_type_defined_in_the_tests_goes_through_every_layer(
        yes_no, make_project, annotator_in, api, tmp_path, settings) -> None:
    assert missing_layers(yes_no) == {}
    project = make_project(yes_no.slug, k=2)

    # Import: JSONL (labelled) and CSV (unlabelled), PII pseudonymized, the marked phrase's offsets remapped.
    jsonl = tmp_path / "yesno.jsonl"
    jsonl.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in yes_no_records(24, "j")),
                     encoding="utf-8")
    result = items_import(project, jsonl, "jsonl", pii="pseudonymize")
    assert result.errors == [] and result.items == 24
    rows = tmp_path / "yesno.csv"
    write_csv(rows, yes_no_records(6, "c", labelled=False), ("guid", "text", "target.word", "target.start_idx",
                                                             "target.end_idx"))
    result = items_import(project, rows, "csv", pii="pseudonymize")
    assert result.errors == [] and result.items == 6
    assert_spans_follow_the_pseudonyms(list(Item.objects.filter(project=project)))
    # The declared CSV columns are required.
    broken = tmp_path / "broken.csv"
    write_csv(broken, yes_no_records(2, "b"), ("guid", "text", "label"))
    refused = items_import(project, broken, "csv")
    assert refused.items == 0 and [e["field"] for e in refused.errors] == ["target"]

    # The queue: two annotators through the API until nothing is left (k=2, the corpus label counts as one).
    submitted = 0
    for name in ("yn-a", "yn-b"):
        client = api(annotator_in(project, name))
        while (response := client.get(f"/api/projects/{project.id}/next/")).status_code == 200:
            item = response.json()["item"]
            answer = {"item": item["id"], "payload": {"label": _yes_no_label(item["payload"]["text"])}}
            assert client.post(f"/api/projects/{project.id}/annotations/", answer, format="json").status_code == 201
            submitted += 1
        assert response.status_code == 204
    assert submitted == 24 + 2 * 6

    # Agreement and gold.
    report = agreement_services.report_now(project)
    assert report["items_counted"] == 30
    assert report["coefficients"][0]["value"] == pytest.approx(1.0)
    gold_services.gold_compute(project)
    golds = GoldLabel.objects.filter(item__project=project)
    assert golds.count() == 30 and {g.status for g in golds} == {RESOLVED}
    assert all(g.payload["label"] == _yes_no_label(g.item.payload["text"]) for g in golds)

    # A release in every format the task type fits (the standard formats are each for other task types).
    settings.GOLDSET_RELEASE_CHECK_MIN_DEV = 5
    stdout = StringIO()
    call_command("build_release", project.slug, "--version", "1.0.0", "--splits", "0.5,0.5", "--seed", "3",
                 "--format", ",".join(DEFAULT_FORMATS), "--out", str(tmp_path / "out"), "--json", stdout=stdout)
    built = json.loads(stdout.getvalue())
    folder = Path(built["out"])
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["task_type"] == "yesno"
    assert {e["kind"] for e in manifest["files"]} >= {*DEFAULT_FORMATS, "card"}
    dev = json.loads((folder / "yesno-v1.1_dev.json").read_text(encoding="utf-8"))
    train = json.loads((folder / "yesno-v1.1_train.json").read_text(encoding="utf-8"))
    assert len(dev) + len(train) == 30 and all(r["label"] == _yes_no_label(r["text"]) for r in dev + train)
    parquet = pq.read_table(folder / "parquet" / "dev.parquet").to_pylist()
    assert [row["target_word"] for row in parquet] == [r["target"]["word"] for r in dev]
    assert (folder / "csv" / "train.csv").read_text(encoding="utf-8").splitlines()[0] == (
        "guid,text,target_word,target_start,target_end,label,split")
    assert len((folder / "jsonl" / "dev.jsonl").read_text(encoding="utf-8").splitlines()) == len(dev)
    unfit = StringIO()
    with pytest.raises(Exception, match="conll"):
        call_command("build_release", project.slug, "--version", "1.0.1", "--format", "klue,conll",
                     "--out", str(tmp_path / "out"), stdout=unfit)
    assert not yes_no.standard_formats and "conll" in STANDARD_FORMATS  # it declares none of them

    # The metric: the official-scorer command on the released dev file against itself.
    scored = StringIO()
    dev_file = folder / "yesno-v1.1_dev.json"
    call_command("klue_score", "yesno", str(dev_file), str(dev_file), "--json", stdout=scored)
    assert json.loads(scored.getvalue())["metrics"] == {"accuracy": 100.0}

    # The baseline check: recorded with the release, and run again on its folder.
    assert built["check"]["primary"] == "accuracy" and built["check"]["verdict"] == "passed", built["check"]
    checked = train_and_evaluate(folder, "yesno")
    assert checked.metrics["accuracy"] > checked.trivial["accuracy"] and checked.interval is not None

    # Its synthetic records make a release the baseline learns (the benchmarks' and self-tests' input).
    synthetic = train_and_evaluate(write_synthetic_release(tmp_path / "synthetic", "yesno", 200), "yesno")
    assert synthetic.metrics["accuracy"] > synthetic.trivial["accuracy"]
