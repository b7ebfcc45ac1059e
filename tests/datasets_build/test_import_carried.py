"""Import refuses a record whose carried fields — the ones a release writes back as they came (NLI
``gold_label``, STS ``labels``, YNAT ``label``, RE entity types and spans, MRC answer lists, WoS domains
and states) — break the task's rules, with the field path and the record's line, and imports nothing."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotation, Item

DEMO = Path(__file__).resolve().parents[2] / "demo" / "corpus"

pytestmark = pytest.mark.django_db


def demo_record(task: str, n: int = 0) -> dict[str, Any]:
    return json.loads((DEMO / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()[n])


def refused(make_project: Callable, tmp_path: Path, task: str, records: list[dict[str, Any]]) -> str:
    """Import ``records`` with ``import_items``; return the command's one-line error after checking that
    nothing of the project was written."""
    project = make_project(task)
    path = tmp_path / f"{task}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(CommandError) as info:
        call_command("import_items", project.slug, str(path), "--format", "jsonl", "--pii", "off")
    assert not Item.objects.filter(project=project).exists()
    assert not Annotation.objects.filter(item__project=project).exists()
    return str(info.value)


def test_nli_gold_label_outside_the_schema(make_project, tmp_path):
    good = demo_record("nli")
    maybe = {**demo_record("nli", 1), "guid": "klue-nli-v1_dev_00009", "gold_label": "maybe", "author": "neutral",
             "label2": "neutral", "label3": "entailment", "label4": "neutral", "label5": "neutral"}
    message = refused(make_project, tmp_path, "nli", [good, maybe])
    assert message.endswith("first at record 2 gold_label: unknown label 'maybe'; expected one of entailment, "
                            "neutral, contradiction")


@pytest.mark.parametrize(("labels", "expected"), [
    ({"label": 5.5, "real-label": 5.5, "binary-label": 1}, "labels.real-label: 5.5 is outside 0..5"),
    ({"label": 4.1, "real-label": 4.857142857142857, "binary-label": 1},
     "labels.label: 4.1 is not labels.real-label 4.857142857142857 rounded to one decimal (4.9)"),
    ({"label": 2.9, "real-label": 2.857142857142857, "binary-label": 1},
     "labels.binary-label: is 1 but labels.real-label 2.857142857142857 is below the threshold 3 (expected 0)"),
    ({"label": 3.0, "real-label": 3.0, "binary-label": 2}, "labels.binary-label: must be 0 or 1, got 2"),
])
def test_sts_labels_out_of_range_or_inconsistent(make_project, tmp_path, labels, expected):
    bad = {**demo_record("sts", 1), "labels": labels}
    message = refused(make_project, tmp_path, "sts", [demo_record("sts"), bad])
    assert message.endswith(f"first at record 2 {expected}")


def test_ynat_gold_label_outside_the_schema(make_project, tmp_path):
    ynat = {"guid": "ynat-v1_dev_00001", "title": "가상전자, 새 스마트폰 공개", "predefined_news_category": "IT과학",
            "label": "연예", "annotations": {"annotators": ["01", "02", "03"], "annotations": {
                "first-scope": ["IT과학", "IT과학", "경제"], "second-scope": ["해당없음", "경제", "해당없음"],
                "third-scope": ["해당없음", "해당없음", "해당없음"]}}}
    message = refused(make_project, tmp_path, "tc", [demo_record("tc"), ynat])
    assert message.endswith("first at record 2 label: unknown topic '연예'; expected one of IT과학, 경제, 사회, "
                            "생활문화, 세계, 스포츠, 정치")


@pytest.mark.parametrize(("change", "expected"), [
    (lambda r: r.update(label="org:best_friend"), "annotations[0].label: unknown relation 'org:best_friend'"),
    (lambda r: r["object_entity"].update(type="PERSON"),
     "object_entity.type: unknown entity type 'PERSON'; expected one of PER, ORG, LOC, DAT, POH, NOH"),
    (lambda r: r["subject_entity"].update(end_idx=4),
     "subject_entity.end_idx: span [0, 4] (inclusive) is 5 characters but word '가상전자' has 4"),
])
def test_re_label_entity_type_and_offsets(make_project, tmp_path, change, expected):
    bad = copy.deepcopy(demo_record("re"))
    bad["guid"] = "goldset-demo-re-bad"
    change(bad)
    message = refused(make_project, tmp_path, "re", [demo_record("re", 1), bad])
    assert f"first at record 2 {expected}" in message


def _mrc(question_type: int) -> dict[str, Any]:
    records = [json.loads(line) for line in (DEMO / "mrc.jsonl").read_text(encoding="utf-8").splitlines()]
    return copy.deepcopy(next(r for r in records if r.get("question_type") == question_type))


def test_mrc_answers_must_quote_the_context_and_agree_with_the_type(make_project, tmp_path):
    answerable = _mrc(1)
    first = answerable["answers"][0]
    wrong_second = copy.deepcopy(answerable)
    wrong_second["answers"].append({"text": first["text"], "answer_start": first["answer_start"] + 1})
    message = refused(make_project, tmp_path, "mrc", [_mrc(2), wrong_second])
    assert "first at record 2 answers[1].text: " in message and "does not match the context, which holds" in message

    impossible = _mrc(3)
    plausible = impossible["plausible_answers"][0]
    contradicting = {**impossible, "is_impossible": False}
    assert refused(make_project, tmp_path, "mrc", [contradicting]).endswith(
        "first at record 1 is_impossible: is false but question_type is 3; only type 3 questions are unanswerable")
    second_plausible = copy.deepcopy(impossible)
    second_plausible["plausible_answers"].append({"text": "없는 말", "answer_start": plausible["answer_start"]})
    assert "first at record 1 plausible_answers[1].text: '없는 말' does not match the context" in refused(
        make_project, tmp_path, "mrc", [second_plausible])
    # Without a question type only is_impossible tells; an answerable question has no plausible answers.
    untyped = {k: v for k, v in answerable.items() if k != "question_type"}
    untyped["plausible_answers"] = [{"text": answerable["context"][:4], "answer_start": 0}]
    assert refused(make_project, tmp_path, "mrc", [untyped]).endswith(
        "first at record 1 plausible_answers: only unanswerable questions (type 3) have plausible answers")


def test_wos_domains_and_slot_names_in_the_ontology(make_project, tmp_path):
    bad_domain = {**demo_record("dst"), "domains": ["식당", "병원"]}
    assert refused(make_project, tmp_path, "dst", [bad_domain]).endswith(
        "first at record 1 domains[1]: unknown domain '병원'; expected one of 관광, 숙소, 식당, 택시, 지하철")
    bad_slot = copy.deepcopy(demo_record("dst"))
    bad_slot["dialogue"][0]["state"] = ["식당-분위기-조용한"]
    message = refused(make_project, tmp_path, "dst", [demo_record("dst", 1), bad_slot])
    assert "first at record 2 annotations[0].states[0][0]: unknown slot '식당-분위기'" in message
    no_value = copy.deepcopy(demo_record("dst"))
    no_value["dialogue"][0]["state"] = ["식당-지역"]
    assert "annotations[0].states[0][0]: '식당-지역' is not 'domain-slot-value'" in refused(
        make_project, tmp_path, "dst", [no_value])
