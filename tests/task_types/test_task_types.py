"""Unit tests of the task-type registry: pure Python, no Django, no database.

The KLUE round-trip tests read the real dev files from ``KLUE_DATA_DIR`` and skip when it is unset.
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from annotation.task_types import (
    LABEL_STAGE,
    GuidelineTemplate,
    PayloadError,
    TaskType,
    all_task_types,
    get_task_type,
    slugs,
)

SLUGS = ["tc", "sts", "nli", "ner", "re", "dp", "mrc", "dst"]


def schema_of(slug: str, **overrides: Any) -> dict[str, Any]:
    return {**get_task_type(slug).default_schema(), **overrides}


def annotate(slug: str, payload: Any, item: dict[str, Any], *, stage: str = LABEL_STAGE,
             schema: dict[str, Any] | None = None) -> dict[str, Any]:
    task = get_task_type(slug)
    schema = task.default_schema() if schema is None else schema
    return task.validate_annotation(payload, item=item, schema=schema, stage=stage)


def assert_rejects(call: Any, field: str, message: str) -> PayloadError:
    with pytest.raises(PayloadError) as info:
        call()
    assert info.value.field == field, info.value
    assert message in info.value.message, info.value
    return info.value


# -- registry ---------------------------------------------------------------------------------------------


def test_registry_lists_the_eight_slugs_in_klue_order() -> None:
    assert slugs() == SLUGS
    assert [t.order for t in all_task_types()] == list(range(1, 9))


def test_unknown_task_type_is_a_payload_error() -> None:
    assert_rejects(lambda: get_task_type("pos"), "task_type", "unknown task type 'pos'")


@pytest.mark.parametrize("slug", SLUGS)
def test_every_task_type_is_complete_and_json_safe(slug: str) -> None:
    task = get_task_type(slug)
    assert isinstance(task, TaskType)
    assert task.klue_name and task.title and task.text_fields and task.stages
    described = task.describe()
    # Schemas are stored as JSON; a default that changes on a round trip would drift after saving.
    assert json.loads(json.dumps(described, ensure_ascii=False)) == described
    assert task.default_schema() is not task.default_schema()


@pytest.mark.parametrize("slug", SLUGS)
def test_guideline_templates_are_korean_markdown_of_the_right_length(slug: str) -> None:
    template = get_task_type(slug).guideline_template()
    assert isinstance(template, GuidelineTemplate)
    assert 150 <= len(template.instructions.split()) <= 400
    for section in (template.instructions, template.ethics, template.pii):
        assert section.lstrip().startswith("## ")
        assert sum("가" <= ch <= "힣" for ch in section) > 100
    assert "자리표시자" in template.pii and "공인" in template.pii
    assert "신고" in template.ethics


@pytest.mark.parametrize("slug", SLUGS)
def test_guideline_templates_name_the_flags_as_the_workspace_does(slug: str) -> None:
    """A template tells annotators which flag to raise by the name the workspace's flag menu shows (신고, and
    "유해·혐오 표현" rather than a "유해 콘텐츠" the menu does not have)."""
    from django.utils import translation

    from annotation.models import FlagKind

    template = get_task_type(slug).guideline_template()
    text = "\n".join((template.instructions, template.ethics, template.pii))
    with translation.override("ko"):
        kinds = {str(label) for label in FlagKind.labels}
    named = re.findall(r'"([^"]+)" 신고', text)
    assert named and set(named) <= kinds, (set(named) - kinds)
    assert "플래그" not in text  # the glossary's word is 신고


def test_stages() -> None:
    for slug in ("tc", "sts", "ner", "re", "dp", "dst"):
        assert [s.name for s in get_task_type(slug).stages] == [LABEL_STAGE]
    nli, mrc = get_task_type("nli"), get_task_type("mrc")
    assert [(s.name, s.annotators) for s in nli.stages] == [("writing", 1), ("validation", None)]
    assert [(s.name, s.annotators) for s in mrc.stages] == [("writing", 1), ("validation", None)]
    assert nli.stages[1].title == "Validate" and mrc.stages[1].title == "Answer the question"
    assert_rejects(lambda: annotate("tc", {"label": "경제"}, {"title": "x"}, stage="writing"),
                   "stage", "unknown stage 'writing'")


def test_default_schemas_match_klue() -> None:
    assert schema_of("tc")["labels"] == ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]
    assert schema_of("tc")["none_label"] == "해당없음"
    assert {k: v for k, v in schema_of("sts").items() if k != "label_names"} == {"min": 0, "max": 5, "step": 1}
    assert {k: v for k, v in schema_of("nli").items() if k != "label_names"} == {
        "labels": ["entailment", "neutral", "contradiction"], "gold_min_votes": 3}
    assert schema_of("ner")["labels"] == ["PS", "LC", "OG", "DT", "TI", "QT"]
    assert schema_of("ner")["allow_overlap"] is False
    re_schema = schema_of("re")
    assert len(re_schema["labels"]) == 30 and re_schema["labels"][0] == "no_relation"
    assert re_schema["labels"][-1] == "per:title"
    assert re_schema["entity_types"] == ["PER", "ORG", "LOC", "DAT", "POH", "NOH"]
    deprels = schema_of("dp")["deprels"]
    assert len(deprels) == 38 == len(set(deprels)) and deprels[:3] == ["NP", "NP_AJT", "VP"]
    assert deprels[-1] == "NP_SVJ"
    assert set(schema_of("mrc")["question_types"]) == {"1", "2", "3"}
    dst = schema_of("dst")
    assert len(dst["ontology"]) == 45
    assert {slot.split("-")[0] for slot in dst["ontology"]} == {"관광", "숙소", "식당", "지하철", "택시"}
    assert dst["special_values"] == ["none", "dontcare"]
    assert set(dst["free_value_slots"]) <= set(dst["ontology"])
    assert "관광-이름" in dst["free_value_slots"] and "숙소-가격대" not in dst["free_value_slots"]


@pytest.mark.klue
def test_re_relations_are_the_official_list() -> None:
    path = klue_dir() / "klue-re-v1.1_relation_list.json"
    assert schema_of("re")["labels"] == json.loads(path.read_text(encoding="utf-8"))["relations"]


@pytest.mark.klue
def test_dst_default_ontology_has_the_wos_slots() -> None:
    ontology = json.loads((klue_dir() / "wos-v1.1_ontology.json").read_text(encoding="utf-8"))
    assert set(schema_of("dst")["ontology"]) == set(ontology)


# -- shared type checks -----------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", SLUGS)
def test_payloads_must_be_objects(slug: str) -> None:
    task = get_task_type(slug)
    assert_rejects(lambda: task.validate_item(["not", "a", "dict"]), "", "must be an object, got list")
    stage = task.stages[-1].name
    assert_rejects(lambda: annotate(slug, "label", {}, stage=stage), "", "must be an object, got str")


def test_schema_without_labels_is_reported_as_a_schema_problem() -> None:
    assert_rejects(lambda: annotate("tc", {"label": "경제"}, {"title": "x"}, schema={}), "schema.labels",
                   "no list")


# -- tc ---------------------------------------------------------------------------------------------------

TC_ITEM = {"title": "5억원 무이자 융자는 되고 7천만원 이사비는 안된다"}


def test_tc_item() -> None:
    tc = get_task_type("tc")
    item = {**TC_ITEM, "predefined_news_category": "경제", "url": "https://example.org/1", "guid": "g1"}
    assert tc.validate_item(item) == item
    assert tc.item_text(item) == TC_ITEM["title"]
    assert_rejects(lambda: tc.validate_item({}), "title", "is required")
    assert_rejects(lambda: tc.validate_item({"title": "  "}), "title", "must not be empty")
    assert_rejects(lambda: tc.validate_item({"title": 3}), "title", "must be a string, got int")
    assert_rejects(lambda: tc.validate_item({**TC_ITEM, "date": 2017}), "date", "must be a string")


def test_tc_annotation_accepts_ranked_topics() -> None:
    assert annotate("tc", {"label": "사회"}, TC_ITEM) == {"label": "사회", "second": None, "third": None}
    full = {"label": "사회", "second": "경제", "third": "생활문화"}
    assert annotate("tc", full, TC_ITEM) == full


@pytest.mark.parametrize(("payload", "field", "message"), [
    ({}, "label", "is required"),
    ({"label": "연예"}, "label", "unknown topic '연예'"),
    ({"label": 1}, "label", "must be a string"),
    ({"label": "해당없음"}, "label", "send null"),
    ({"label": "사회", "second": "해당없음"}, "second", "is not a topic"),
    ({"label": "사회", "second": "사회"}, "second", "repeats the first topic '사회'"),
    ({"label": "사회", "second": "경제", "third": "경제"}, "third", "repeats an earlier topic '경제'"),
    ({"label": "사회", "second": "경제", "third": "사회"}, "third", "repeats an earlier topic '사회'"),
    ({"label": "사회", "third": "경제"}, "third", "needs a second topic"),
])
def test_tc_annotation_rejects(payload: dict[str, Any], field: str, message: str) -> None:
    assert_rejects(lambda: annotate("tc", payload, TC_ITEM), field, message)


# -- sts --------------------------------------------------------------------------------------------------

STS_ITEM = {"sentence1": "호스트분들이 친절하셨습니다.", "sentence2": "호스트들은 매우 친절했습니다."}


def test_sts_item() -> None:
    sts = get_task_type("sts")
    assert sts.validate_item({**STS_ITEM, "source": "airbnb-rtt"})["source"] == "airbnb-rtt"
    assert sts.item_text(STS_ITEM) == "호스트분들이 친절하셨습니다.\n호스트들은 매우 친절했습니다."
    assert_rejects(lambda: sts.validate_item({"sentence1": "a"}), "sentence2", "is required")


def test_sts_scores_on_the_grid() -> None:
    for score in (0, 3, 5, 4.0):
        assert annotate("sts", {"score": score}, STS_ITEM) == {"score": score}
    half = schema_of("sts", step=0.5)
    assert annotate("sts", {"score": 3.5}, STS_ITEM, schema=half) == {"score": 3.5}
    tenth = schema_of("sts", step=0.1)
    assert annotate("sts", {"score": 0.3}, STS_ITEM, schema=tenth) == {"score": 0.3}


@pytest.mark.parametrize(("payload", "schema", "message"), [
    ({"score": 6}, {}, "6 is outside 0..5"),
    ({"score": -1}, {}, "outside"),
    ({"score": 3.5}, {}, "not on the 1-point grid"),
    ({"score": 3.25}, {"step": 0.5}, "not on the 0.5-point grid"),
    ({"score": True}, {}, "must be a number, got bool"),
    ({"score": "4"}, {}, "must be a number, got str"),
    ({"score": float("nan")}, {}, "finite"),
    ({}, {}, "is required"),
])
def test_sts_rejects(payload: dict[str, Any], schema: dict[str, Any], message: str) -> None:
    assert_rejects(lambda: annotate("sts", payload, STS_ITEM, schema=schema_of("sts", **schema)), "score",
                   message)


# -- nli --------------------------------------------------------------------------------------------------

PREMISE = {"premise": "10명이 함께 사용하기 불편함없이 만족했다."}
PAIR = {**PREMISE, "hypothesis": "10명이 함께 사용하기 불편함이 많았다."}


def test_nli_item() -> None:
    nli = get_task_type("nli")
    assert nli.validate_item(PREMISE) == PREMISE
    assert nli.validate_item({**PAIR, "target_label": "neutral"})["target_label"] == "neutral"
    assert_rejects(lambda: nli.validate_item({**PREMISE, "target_label": "maybe"}), "target_label",
                   "unknown label 'maybe'")
    assert_rejects(lambda: nli.validate_item({**PREMISE, "hypothesis": ""}), "hypothesis",
                   "must not be empty")
    assert_rejects(lambda: nli.validate_item({"hypothesis": "x"}), "premise", "is required")


def test_nli_writing_and_validation() -> None:
    written = annotate("nli", {"hypothesis": " 불편함이 많았다. ", "label": "contradiction"}, PREMISE,
                       stage="writing")
    assert written == {"hypothesis": "불편함이 많았다.", "label": "contradiction"}
    assert annotate("nli", {"label": "neutral"}, PAIR, stage="validation") == {"label": "neutral"}
    nli = get_task_type("nli")
    # Only the hypothesis moves into the item; the writer's label stays hidden from validators.
    after = nli.apply_stage_output(PREMISE, "writing", written)
    assert after == {**PREMISE, "hypothesis": written["hypothesis"]}


@pytest.mark.parametrize(("payload", "item", "stage", "field", "message"), [
    ({"label": "neutral"}, PREMISE, "validation", "item.hypothesis", "no hypothesis yet"),
    ({"label": "unknown"}, PAIR, "validation", "label", "unknown label 'unknown'"),
    ({}, PAIR, "validation", "label", "is required"),
    ({"label": "neutral"}, PREMISE, "writing", "hypothesis", "is required"),
    ({"hypothesis": "  ", "label": "neutral"}, PREMISE, "writing", "hypothesis", "must not be empty"),
    ({"hypothesis": "다르다.", "label": "yes"}, PREMISE, "writing", "label", "unknown label 'yes'"),
    ({"hypothesis": PREMISE["premise"], "label": "entailment"}, PREMISE, "writing", "hypothesis",
     "copies the premise"),
    ({"hypothesis": "다르다.", "label": "neutral"}, {**PREMISE, "target_label": "entailment"}, "writing",
     "label", "requested as 'entailment'"),
])
def test_nli_rejects(payload: dict[str, Any], item: dict[str, Any], stage: str, field: str,
                     message: str) -> None:
    assert_rejects(lambda: annotate("nli", payload, item, stage=stage), field, message)


# -- ner --------------------------------------------------------------------------------------------------

NER_ITEM = {"sentence": "경찰은 박씨의 딸(32)과 16명을 입건했다."}


def test_ner_item() -> None:
    ner = get_task_type("ner")
    assert ner.validate_item(NER_ITEM) == NER_ITEM
    assert_rejects(lambda: ner.validate_item({"sentence": None}), "sentence", "must be a string, got null")


def test_ner_accepts_and_sorts_spans() -> None:
    payload = {"entities": [{"start": 15, "end": 18, "type": "QT"}, {"start": 0, "end": 2, "type": "OG"},
                            {"start": 4, "end": 5, "type": "PS"}, {"start": 10, "end": 12, "type": "QT"}]}
    result = annotate("ner", payload, NER_ITEM)
    spans = [(e["start"], e["end"], e["type"]) for e in result["entities"]]
    assert spans == [(0, 2, "OG"), (4, 5, "PS"), (10, 12, "QT"), (15, 18, "QT")]
    assert annotate("ner", {"entities": []}, NER_ITEM) == {"entities": []}
    # Spans on whitespace are allowed: KLUE has them.
    assert annotate("ner", {"entities": [{"start": 2, "end": 4, "type": "PS"}]}, NER_ITEM)


def test_ner_overlap_allowed_by_schema() -> None:
    nested = {"entities": [{"start": 0, "end": 5, "type": "OG"}, {"start": 4, "end": 5, "type": "PS"}]}
    allowed = schema_of("ner", allow_overlap=True)
    assert len(annotate("ner", nested, NER_ITEM, schema=allowed)["entities"]) == 2
    assert_rejects(lambda: annotate("ner", nested, NER_ITEM), "entities[1]", "overlaps entities[0] [0, 5)")


@pytest.mark.parametrize(("entities", "field", "message"), [
    ([{"start": 0, "end": 2, "type": "XX"}], "entities[0].type", "unknown entity type 'XX'"),
    ([{"start": -1, "end": 2, "type": "OG"}], "entities[0].start", "-1 is negative"),
    ([{"start": 0, "end": 99, "type": "OG"}], "entities[0].end", "past the end of the sentence (length 25)"),
    ([{"start": 3, "end": 3, "type": "OG"}], "entities[0].end", "span [3, 3) is empty"),
    ([{"start": 5, "end": 3, "type": "OG"}], "entities[0].end", "is empty"),
    ([{"start": 0.0, "end": 2, "type": "OG"}], "entities[0].start", "must be an integer, got float"),
    ([{"start": "0", "end": 2, "type": "OG"}], "entities[0].start", "must be an integer, got str"),
    ([{"start": False, "end": 2, "type": "OG"}], "entities[0].start", "got bool"),
    ([{"start": 0, "type": "OG"}], "entities[0].end", "is required"),
    ([{"start": 0, "end": 2, "type": "OG"}, "OG"], "entities[1]", "must be an object"),
    ([{"start": 4, "end": 6, "type": "PS"}, {"start": 0, "end": 5, "type": "OG"}], "entities[0]",
     "overlaps entities[1]"),
    ([{"start": 0, "end": 2, "type": "OG"}, {"start": 0, "end": 2, "type": "OG"}], "entities[1]",
     "duplicates entities[0]"),
])
def test_ner_rejects(entities: list[Any], field: str, message: str) -> None:
    assert_rejects(lambda: annotate("ner", {"entities": entities}, NER_ITEM), field, message)


def test_ner_duplicates_rejected_even_with_overlap_allowed() -> None:
    twice = {"entities": [{"start": 0, "end": 2, "type": "OG"}] * 2}
    assert_rejects(lambda: annotate("ner", twice, NER_ITEM, schema=schema_of("ner", allow_overlap=True)),
                   "entities[1]", "duplicates")
    assert_rejects(lambda: annotate("ner", {"entities": "OG"}, NER_ITEM), "entities", "must be a list")


# -- re ---------------------------------------------------------------------------------------------------

RE_SENTENCE = "〈Something〉는 조지 해리슨이 쓰고 비틀즈가 1969년 앨범 《Abbey Road》에 담은 노래다."
RE_ITEM = {
    "sentence": RE_SENTENCE,
    "subject_entity": {"word": "비틀즈", "start_idx": 24, "end_idx": 26, "type": "ORG"},
    "object_entity": {"word": "조지 해리슨", "start_idx": 13, "end_idx": 18, "type": "PER"},
}


def test_re_item() -> None:
    re_task = get_task_type("re")
    assert re_task.validate_item({**RE_ITEM, "source": "wikipedia"})["source"] == "wikipedia"


@pytest.mark.parametrize(("entity", "field", "message"), [
    ({"start_idx": 23, "end_idx": 25}, "subject_entity.word",
     "the sentence, which holds ' 비틀' at [23, 26)"),
    ({"end_idx": 27}, "subject_entity.end_idx", "is 4 characters but word '비틀즈' has 3"),
    ({"end_idx": 200}, "subject_entity.end_idx", "above the maximum"),
    ({"start_idx": -1}, "subject_entity.start_idx", "below the minimum 0"),
    ({"start_idx": "24"}, "subject_entity.start_idx", "must be an integer"),
    ({"word": ""}, "subject_entity.word", "must not be empty"),
    ({"type": None}, "subject_entity.type", "must be a string, got null"),
])
def test_re_item_rejects(entity: dict[str, Any], field: str, message: str) -> None:
    item = copy.deepcopy(RE_ITEM)
    item["subject_entity"].update(entity)
    assert_rejects(lambda: get_task_type("re").validate_item(item), field, message)


def test_re_item_needs_both_entities() -> None:
    item = {k: v for k, v in RE_ITEM.items() if k != "object_entity"}
    assert_rejects(lambda: get_task_type("re").validate_item(item), "object_entity", "is required")
    assert_rejects(lambda: get_task_type("re").validate_item({**RE_ITEM, "object_entity": "조지"}),
                   "object_entity", "must be an object")


def test_re_annotation() -> None:
    assert annotate("re", {"label": "org:members"}, RE_ITEM) == {"label": "org:members"}
    assert_rejects(lambda: annotate("re", {"label": "org:fans"}, RE_ITEM), "label",
                   "unknown relation 'org:fans'")
    assert_rejects(lambda: annotate("re", {"label": ["no_relation"]}, RE_ITEM), "label", "must be a string")


# -- dp ---------------------------------------------------------------------------------------------------

DP_FORMS = ["'K팝스타3’", "유희열이", "홍정희의", "탈락에", "눈물을", "흘렸다."]
DP_ITEM = {
    "sentence": " ".join(DP_FORMS),
    "tokens": [{"index": i, "form": f, "lemma": f, "pos": "NNG"} for i, f in enumerate(DP_FORMS, 1)],
}
DP_GOLD = {"heads": [2, 6, 4, 6, 6, 0], "deprels": ["NP", "NP_SBJ", "NP_MOD", "NP_AJT", "NP_OBJ", "VP"]}


def test_dp_item() -> None:
    dp = get_task_type("dp")
    assert dp.validate_item(DP_ITEM) == DP_ITEM
    skipped = copy.deepcopy(DP_ITEM)
    skipped["tokens"][2]["index"] = 4
    assert_rejects(lambda: dp.validate_item(skipped), "tokens[2].index", "is 4; token indices must run")
    no_pos = copy.deepcopy(DP_ITEM)
    del no_pos["tokens"][1]["pos"]
    assert_rejects(lambda: dp.validate_item(no_pos), "tokens[1].pos", "is required")
    assert_rejects(lambda: dp.validate_item({**DP_ITEM, "tokens": []}), "tokens", "must not be empty")


def test_dp_annotation_accepts_a_tree() -> None:
    assert annotate("dp", DP_GOLD, DP_ITEM) == DP_GOLD
    # Non-projective and leftward arcs are legal trees, even if rare in Korean.
    assert annotate("dp", {**DP_GOLD, "heads": [0, 1, 1, 1, 1, 1]}, DP_ITEM)


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"heads": [2, 6, 4, 6, 0]}, "heads", "has 5 entries but the sentence has 6 eojeol"),
    ({"deprels": ["NP"] * 7}, "deprels", "has 7 entries"),
    ({"heads": [2, 6, 4, 6, 6, 7]}, "heads[5]", "7 is above the maximum 6"),
    ({"heads": [2, 6, 4, 6, -1, 0]}, "heads[4]", "below the minimum 0"),
    ({"heads": [2, 6, 3, 6, 6, 0]}, "heads[2]", "token 3 cannot be its own head"),
    ({"heads": [2, 6, 4, 6, 6, 1]}, "heads", "no root"),
    ({"heads": [2, 6, 0, 6, 0, 0]}, "heads", "3 roots (tokens 3, 5, 6)"),
    ({"heads": [2, 6, 5, 6, 3, 0]}, "heads", "cycle through tokens 3 → 5 → 3"),
    ({"heads": [2, 6, "4", 6, 6, 0]}, "heads[2]", "must be an integer"),
    ({"deprels": ["NP", "NP_SBJ", "NP_MOD", "NP_AJT", "NP_OBJ", "VP_ROOT"]}, "deprels[5]",
     "unknown DEPREL 'VP_ROOT'"),
    ({"heads": None}, "heads", "must be a list, got null"),
])
def test_dp_rejects(change: dict[str, Any], field: str, message: str) -> None:
    assert_rejects(lambda: annotate("dp", {**DP_GOLD, **change}, DP_ITEM), field, message)


def test_dp_cycle_not_through_the_first_token() -> None:
    # 1 → 2 → 3 → 2: the cycle is 2 ↔ 3 and must be named as such, not with the path into it.
    item = {**DP_ITEM, "tokens": DP_ITEM["tokens"][:4]}
    payload = {"heads": [2, 3, 2, 0], "deprels": ["NP"] * 4}
    assert_rejects(lambda: annotate("dp", payload, item), "heads", "cycle through tokens 2 → 3 → 2")


# -- mrc --------------------------------------------------------------------------------------------------

CONTEXT = "올여름 장마가 17일 제주도에서 시작됐다. 두 기단이 만나 국내에 머무르는 기간은 한 달가량이다."
MRC_ITEM = {"title": "제주도 장마 시작", "context": CONTEXT, "news_category": "종합", "source": "hankyung"}
ANSWER = {"text": "한 달가량", "start": CONTEXT.index("한 달가량")}
ASKED = {**MRC_ITEM, "question": "두 기단이 국내에 머무는 기간은?"}


def test_mrc_item() -> None:
    mrc = get_task_type("mrc")
    assert mrc.validate_item(MRC_ITEM) == MRC_ITEM
    assert mrc.validate_item({**ASKED, "question_type": 1})["question_type"] == 1
    assert_rejects(lambda: mrc.validate_item({**MRC_ITEM, "question_type": 4}), "question_type",
                   "unknown question type 4")
    assert_rejects(lambda: mrc.validate_item({"title": "x"}), "context", "is required")


def test_mrc_writing_accepts() -> None:
    q = {"question": "기단이 머무는 기간은?", "question_type": 1, "answer": ANSWER, "plausible": None}
    assert annotate("mrc", q, MRC_ITEM, stage="writing") == q
    two = {**q, "question_type": 2}
    assert annotate("mrc", two, MRC_ITEM, stage="writing")["question_type"] == 2
    plausible = {"text": "17일", "start": CONTEXT.index("17일")}
    impossible = {"question": "장마가 끝나는 날은?", "question_type": 3, "answer": None,
                  "plausible": plausible}
    assert annotate("mrc", impossible, MRC_ITEM, stage="writing") == impossible
    without_plausible = {"question": "장마가 끝나는 날은?", "question_type": 3}
    assert annotate("mrc", without_plausible, MRC_ITEM, stage="writing")["plausible"] is None
    result = get_task_type("mrc").apply_stage_output(MRC_ITEM, "writing", q)
    assert result == {**MRC_ITEM, "question": q["question"]}


def test_mrc_validation() -> None:
    assert annotate("mrc", {"answer": ANSWER}, ASKED, stage="validation") == {"answer": ANSWER}
    assert annotate("mrc", {"answer": None}, ASKED, stage="validation") == {"answer": None}
    assert_rejects(lambda: annotate("mrc", {"answer": None}, MRC_ITEM, stage="validation"), "item.question",
                   "no question yet")
    assert_rejects(lambda: annotate("mrc", {}, ASKED, stage="validation"), "answer", "is required")
    wrong = {"text": "한 달가량", "start": 0}
    assert_rejects(lambda: annotate("mrc", {"answer": wrong}, ASKED, stage="validation"), "answer.text",
                   "the context, which holds '올여름 장' at [0, 5)")


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"question": ""}, "question", "must not be empty"),
    ({"question_type": 4}, "question_type", "unknown question type 4; expected one of 1, 2, 3"),
    ({"question_type": "1"}, "question_type", "must be an integer, got str"),
    ({"question_type": True}, "question_type", "got bool"),
    ({"answer": None}, "answer", "a type 1 question needs an answer"),
    ({"question_type": 3}, "answer", "must have answer null"),
    ({"plausible": {"text": "17일", "start": 8}}, "plausible", "only unanswerable"),
    ({"answer": {"text": "한 달가량", "start": 10}}, "answer.text", "which holds '일 제주도' at [10, 15)"),
    ({"answer": {"text": "한 달가량", "start": len(CONTEXT) - 2}}, "answer.start", "runs past the end"),
    ({"answer": {"text": "", "start": 0}}, "answer.text", "must not be empty"),
    ({"answer": {"text": "한 달가량"}}, "answer.start", "is required"),
    ({"answer": "한 달가량"}, "answer", "must be an object"),
])
def test_mrc_writing_rejects(change: dict[str, Any], field: str, message: str) -> None:
    payload = {"question": "기단이 머무는 기간은?", "question_type": 1, "answer": ANSWER, "plausible": None,
               **change}
    assert_rejects(lambda: annotate("mrc", payload, MRC_ITEM, stage="writing"), field, message)


def test_mrc_schema_question_types_restrict_the_choice() -> None:
    schema = {"question_types": {"1": "paraphrase"}}
    payload = {"question": "기간은?", "question_type": 2, "answer": ANSWER}
    assert_rejects(lambda: annotate("mrc", payload, MRC_ITEM, stage="writing", schema=schema),
                   "question_type", "expected one of 1")


# -- dst --------------------------------------------------------------------------------------------------

DST_ITEM = {
    "domains": ["숙소", "택시"],
    "dialogue": [
        {"role": "user", "text": "서울 동쪽에 저렴한 숙소를 알려주세요."},
        {"role": "sys", "text": "게스트 하우스는 어떠세요?"},
        {"role": "user", "text": "좋아요. 택시도 불러 주세요. 아무 종류나 괜찮아요."},
        {"role": "sys", "text": "네."},
    ],
}
DST_STATES = [
    ["숙소-지역-서울 동쪽", "숙소-가격대-저렴"],
    ["숙소-지역-서울 동쪽", "숙소-가격대-저렴", "숙소-종류-게스트 하우스", "택시-종류-dontcare",
     "택시-도착지-N-서울 타워"],
]


def test_dst_item() -> None:
    dst = get_task_type("dst")
    assert dst.validate_item(DST_ITEM) == DST_ITEM
    assert dst.item_text(DST_ITEM).splitlines()[0] == "서울 동쪽에 저렴한 숙소를 알려주세요."
    bad_role = copy.deepcopy(DST_ITEM)
    bad_role["dialogue"][1]["role"] = "system"
    assert_rejects(lambda: dst.validate_item(bad_role), "dialogue[1].role", "unknown role 'system'")
    no_text = copy.deepcopy(DST_ITEM)
    del no_text["dialogue"][2]["text"]
    assert_rejects(lambda: dst.validate_item(no_text), "dialogue[2].text", "is required")
    only_sys = {"domains": [], "dialogue": [{"role": "sys", "text": "안녕하세요."}]}
    assert_rejects(lambda: dst.validate_item(only_sys), "dialogue", "has no user turn")
    assert_rejects(lambda: dst.validate_item({**DST_ITEM, "domains": "숙소"}), "domains", "must be a list")
    assert_rejects(lambda: dst.validate_item({**DST_ITEM, "domains": [1]}), "domains[0]", "must be a string")


def test_dst_annotation_accepts_states() -> None:
    assert annotate("dst", {"states": DST_STATES}, DST_ITEM) == {"states": DST_STATES}
    assert annotate("dst", {"states": [[], ["숙소-이름-none"]]}, DST_ITEM)


@pytest.mark.parametrize(("states", "field", "message"), [
    ([[]], "states", "has 1 states but the dialogue has 2 user turns"),
    ([[], [], []], "states", "has 3 states"),
    ([[], "숙소-지역-서울 동쪽"], "states[1]", "must be a list"),
    ([[], [3]], "states[1][0]", "must be a string, got int"),
    ([["숙소-서울 동쪽"], []], "states[0][0]", "'숙소-서울 동쪽' is not 'domain-slot-value'"),
    ([["숙소-지역-"], []], "states[0][0]", "is not 'domain-slot-value'"),
    ([["숙소-전망-좋음"], []], "states[0][0]", "unknown slot '숙소-전망'"),
    ([["숙소-가격대-공짜"], []], "states[0][0]",
     "'공짜' is not a value of '숙소-가격대'; expected one of 저렴"),
    ([[], ["숙소-가격대-저렴", "숙소-지역-서울 동쪽", "숙소-가격대-비싼"]], "states[1][2]",
     "slot '숙소-가격대' appears twice in one state (also at states[1][0])"),
])
def test_dst_rejects(states: list[Any], field: str, message: str) -> None:
    assert_rejects(lambda: annotate("dst", {"states": states}, DST_ITEM), field, message)


def test_dst_free_value_slots_follow_the_schema() -> None:
    payload = {"states": [["숙소-이름-어디든 호텔"], []]}
    assert annotate("dst", payload, DST_ITEM)
    closed = schema_of("dst", free_value_slots=[])
    assert_rejects(lambda: annotate("dst", payload, DST_ITEM, schema=closed), "states[0][0]",
                   "'어디든 호텔' is not a value of '숙소-이름'")


# -- real KLUE records ------------------------------------------------------------------------------------


def klue_dir() -> Path:
    root = os.environ.get("KLUE_DATA_DIR")
    if not root:
        pytest.skip("KLUE_DATA_DIR not set")
    return Path(root)


def load_json(name: str) -> Any:
    return json.loads((klue_dir() / name).read_text(encoding="utf-8"))


def read_tsv_blocks(name: str) -> list[tuple[str, list[list[str]]]]:
    """KLUE NER/DP TSV: ``## guid\\ttext`` header then one tab-separated row per unit, blank line between."""
    blocks: list[tuple[str, list[list[str]]]] = []
    for line in (klue_dir() / name).read_text(encoding="utf-8").split("\n"):
        if line.startswith("## klue-"):
            blocks.append((line[3:].split("\t", 1)[1], []))
        elif line.startswith("##") or not line:
            continue  # the five format-description header lines, and sentence separators
        else:
            blocks[-1][1].append(line.split("\t"))
    return blocks


def bio_to_spans(tags: list[str]) -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = []
    for i, tag in enumerate(tags):
        if tag.startswith("B-") or (tag.startswith("I-") and (not spans or spans[-1]["end"] != i
                                                             or spans[-1]["type"] != tag[2:])):
            spans.append({"start": i, "end": i + 1, "type": tag[2:]})
        elif tag.startswith("I-"):
            spans[-1]["end"] = i + 1
    return spans


@pytest.mark.klue
def test_klue_nli_records_are_accepted() -> None:
    nli = get_task_type("nli")
    schema = nli.default_schema()
    for record in load_json("klue-nli-v1.1_dev.json")[:200]:
        premise_only = nli.validate_item({"premise": record["premise"], "source": record["source"],
                                          "target_label": record["author"]})
        written = nli.validate_annotation({"hypothesis": record["hypothesis"], "label": record["author"]},
                                          item=premise_only, schema=schema, stage="writing")
        pair = nli.validate_item({**premise_only, "hypothesis": written["hypothesis"]})
        for key in ("label2", "label3", "label4", "label5"):
            nli.validate_annotation({"label": record[key]}, item=pair, schema=schema, stage="validation")


@pytest.mark.klue
def test_klue_sts_records_are_accepted() -> None:
    sts = get_task_type("sts")
    schema = sts.default_schema()
    count = 0
    for record in load_json("klue-sts-v1.1_dev.json")[:200]:
        item = sts.validate_item({k: record[k] for k in ("sentence1", "sentence2", "source")})
        for score in record["annotations"]["annotations"]:
            sts.validate_annotation({"score": score}, item=item, schema=schema, stage=LABEL_STAGE)
            count += 1
    assert count >= 1000


@pytest.mark.klue
def test_klue_ner_records_are_accepted() -> None:
    ner = get_task_type("ner")
    schema = ner.default_schema()
    blocks = read_tsv_blocks("klue-ner-v1.1_dev.tsv")[:200]
    assert len(blocks) == 200
    entities = 0
    for _, rows in blocks:
        item = ner.validate_item({"sentence": "".join(char for char, _ in rows)})
        spans = bio_to_spans([tag for _, tag in rows])
        result = ner.validate_annotation({"entities": spans}, item=item, schema=schema, stage=LABEL_STAGE)
        assert len(result["entities"]) == len(spans)
        entities += len(spans)
    assert entities > 200


@pytest.mark.klue
def test_klue_dp_records_are_accepted() -> None:
    dp = get_task_type("dp")
    schema = dp.default_schema()
    blocks = read_tsv_blocks("klue-dp-v1.1_dev.tsv")[:200]
    assert len(blocks) == 200
    for sentence, rows in blocks:
        tokens = [{"index": int(r[0]), "form": r[1], "lemma": r[2], "pos": r[3]} for r in rows]
        item = dp.validate_item({"sentence": sentence, "tokens": tokens})
        payload = {"heads": [int(r[4]) for r in rows], "deprels": [r[5] for r in rows]}
        assert dp.validate_annotation(payload, item=item, schema=schema, stage=LABEL_STAGE) == payload


def wos_records() -> list[tuple[dict[str, Any], list[list[str]]]]:
    dialogues = load_json("wos-v1.1_dev_sample_10.json")
    assert len(dialogues) == 10
    dst = get_task_type("dst")
    records = []
    for record in dialogues:
        turns = [{"role": t["role"], "text": t["text"]} for t in record["dialogue"]]
        item = dst.validate_item({"domains": record["domains"], "dialogue": turns})
        records.append((item, [t["state"] for t in record["dialogue"] if t["role"] == "user"]))
    return records


@pytest.mark.klue
def test_klue_wos_dialogues_are_accepted() -> None:
    # The released ontology lacks some dev values of open slots (e.g. 식당-이름-매일식사), so the real
    # ontology is used with Goldset's free-value slots; every closed slot must still match it exactly.
    dst = get_task_type("dst")
    schema = {**dst.default_schema(), "ontology": load_json("wos-v1.1_ontology.json")}
    for item, states in wos_records():
        result = dst.validate_annotation({"states": states}, item=item, schema=schema, stage=LABEL_STAGE)
        assert result == {"states": states}


@pytest.mark.klue
def test_klue_wos_values_outside_the_ontology_are_all_in_free_value_slots() -> None:
    dst = get_task_type("dst")
    ontology = load_json("wos-v1.1_ontology.json")
    closed = {**dst.default_schema(), "ontology": ontology, "free_value_slots": []}
    records = wos_records()
    outside = set()
    for _, states in records:
        for entry in (e for state in states for e in state):
            domain, slot, value = entry.split("-", 2)
            if value not in ontology[f"{domain}-{slot}"]:
                outside.add(f"{domain}-{slot}")
    assert outside and outside <= set(dst.default_schema()["free_value_slots"])
    item, states = records[0]
    assert_rejects(lambda: dst.validate_annotation({"states": states}, item=item, schema=closed,
                                                   stage=LABEL_STAGE),
                   "states[2][8]", "'매일식사' is not a value of '식당-이름'")


@pytest.mark.parametrize("slug", slugs())
def test_every_task_type_names_each_default_label_in_korean_and_english(slug: str) -> None:
    task = get_task_type(slug)
    schema = task.default_schema()
    values = task.label_values(schema)
    assert values, "the task type offers labels a page shows"
    assert schema["label_names"] == task.default_label_names()
    assert set(schema["label_names"]) == set(values)
    for value, names in schema["label_names"].items():
        assert set(names) == {"ko", "en"} and all(name.strip() for name in names.values()), value
    assert set(task.label_display(schema, "ko")) == set(values) == set(task.label_display(schema, "en"))
