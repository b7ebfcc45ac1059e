"""Relation extraction between a marked subject and object (KLUE-RE)."""

from __future__ import annotations

import random
from typing import Any

from django.utils.translation import gettext_noop

from ._common import (
    check_quoted,
    get,
    join,
    keep_extra,
    require_choice,
    require_dict,
    require_int,
    schema_list,
    str_field,
)
from ._records import CORPUS, external_id, first_payload, ordered, rest, split_from_guid
from ._synthetic import ORGS, PEOPLE, PLACES
from .base import (
    LABEL_NAMES,
    LABEL_STAGE,
    GuidelineTemplate,
    KlueFile,
    Names,
    ParsedRecord,
    PayloadError,
    RecordAnnotation,
    SpanField,
    TaskType,
    copy_names,
)

#: The official order of klue-re-v1.1_relation_list.json (label ids follow it).
RELATIONS = [
    "no_relation",
    "org:dissolved", "org:founded", "org:place_of_headquarters", "org:alternate_names", "org:member_of",
    "org:members", "org:political/religious_affiliation", "org:product", "org:founded_by",
    "org:top_members/employees", "org:number_of_employees/members",
    "per:date_of_birth", "per:date_of_death", "per:place_of_birth", "per:place_of_death",
    "per:place_of_residence", "per:origin", "per:employee_of", "per:schools_attended", "per:alternate_names",
    "per:parents", "per:children", "per:siblings", "per:spouse", "per:other_family", "per:colleagues",
    "per:product", "per:religion", "per:title",
]
ENTITY_TYPES = ["PER", "ORG", "LOC", "DAT", "POH", "NOH"]
NAMES: Names = {value: {"ko": ko, "en": en} for value, ko, en in (
    ("no_relation", "관계 없음", "no relation"),
    ("org:dissolved", "해산 날짜", "date dissolved"),
    ("org:founded", "설립 날짜", "date founded"),
    ("org:place_of_headquarters", "본사 위치", "headquarters location"),
    ("org:alternate_names", "기관의 다른 이름", "other names of the organization"),
    ("org:member_of", "상위 소속 기관", "member of"),
    ("org:members", "소속 구성원", "members"),
    ("org:political/religious_affiliation", "정치·종교 성향", "political or religious affiliation"),
    ("org:product", "기관의 제품", "products"),
    ("org:founded_by", "설립자", "founded by"),
    ("org:top_members/employees", "대표·임원", "top members or employees"),
    ("org:number_of_employees/members", "구성원 수", "number of employees or members"),
    ("per:date_of_birth", "출생일", "date of birth"),
    ("per:date_of_death", "사망일", "date of death"),
    ("per:place_of_birth", "출생지", "place of birth"),
    ("per:place_of_death", "사망지", "place of death"),
    ("per:place_of_residence", "거주지", "place of residence"),
    ("per:origin", "출신", "origin"),
    ("per:employee_of", "소속 기관", "employee of"),
    ("per:schools_attended", "출신 학교", "schools attended"),
    ("per:alternate_names", "인물의 다른 이름", "other names of the person"),
    ("per:parents", "부모", "parents"),
    ("per:children", "자녀", "children"),
    ("per:siblings", "형제자매", "siblings"),
    ("per:spouse", "배우자", "spouse"),
    ("per:other_family", "그 밖의 가족", "other family"),
    ("per:colleagues", "동료", "colleagues"),
    ("per:product", "인물의 작품·제품", "works or products"),
    ("per:religion", "종교", "religion"),
    ("per:title", "직함·직업", "title"),
)}

INSTRUCTIONS = """\
## 작업 개요
문장 안에 **주어 개체**(파란색)와 **목적어 개체**(주황색)가 표시되어 있습니다. 문장이 두 개체 사이에
어떤 관계를 **직접 말하고 있는지** 30개 관계 중 하나를 고릅니다. 개체의 범위와 유형은 이미 정해져 있으니
고치지 않습니다.

## 관계 고르는 법
- 관계는 방향이 있습니다. "주어의 무엇이 목적어인가"로 읽습니다.
  - `per:parents`: 목적어가 주어의 부모입니다. `per:children`은 그 반대입니다.
  - `org:founded_by`: 목적어가 주어 기관을 세웠습니다.
- `org:`로 시작하는 관계는 주어가 기관(ORG)일 때, `per:`로 시작하는 관계는 주어가 인물(PER)일 때 씁니다.
- 문장에 근거가 없으면, 배경지식으로 관계를 알고 있더라도 `no_relation`을 고릅니다.
- 관계가 둘 이상 성립하면 문장에서 가장 직접적으로 드러난 관계 하나를 고릅니다.

## 예시
- "〈Something〉는 [조지 해리슨]이 쓰고 [비틀즈]가 1969년 앨범 《Abbey Road》에 담은 노래다."
  (주어: 비틀즈, 목적어: 조지 해리슨) → `no_relation` (문장은 두 개체의 관계를 말하지 않습니다.
  배경지식상 멤버이지만 근거가 문장에 없습니다.)
- "[이순신]은 1545년 [한성]에서 태어났다." (주어: 이순신, 목적어: 한성) → `per:place_of_birth`
- "[카카오]는 2010년 [김범수]가 설립했다." (주어: 카카오, 목적어: 김범수) → `org:founded_by`
- "[홍길동] [대표]는 …" (목적어가 직함) → `per:title`

## 헷갈리는 경우
- `per:employee_of`는 소속 기관, `per:title`은 직함·직업입니다.
- `per:origin`은 출신 국가·민족·지역, `per:place_of_residence`는 현재 사는 곳입니다.
- 별칭·약칭·옛 이름은 `per:alternate_names` / `org:alternate_names`입니다.
- 개체 표시가 잘못되어 판단할 수 없으면 관계를 고르지 말고 신고를 남긴 뒤 건너뜁니다.
"""

ETHICS = """\
## 윤리 지침
- 문장에 쓰여 있지 않은 **민감한 관계**(종교, 정치 성향, 가족 관계)를 추측해 고르지 않습니다.
  `per:religion`, `org:political/religious_affiliation`은 문장이 명시할 때만 씁니다.
- 이름이나 국적에서 출신이나 종교를 짐작하지 않습니다.
- 인물을 비방하거나 혐오를 부추기는 문장은 라벨링을 멈추고 **"유해·혐오 표현" 신고**를 남깁니다.
- 불편한 내용은 언제든 건너뛸 수 있습니다.
"""

PII = """\
## 개인정보 지침
- 문장은 위키백과, 뉴스 등에서 왔습니다. 개인정보는 **일반인**의 실명, 생년월일, 주소, 연락처,
  가족 관계처럼 한 사람을 알아볼 수 있게 하는 정보입니다.
- 일반인의 식별자는 작업 전에 `[이름1]`, `[주소1]`처럼 **유형이 붙은 자리표시자**로 바뀌어 있습니다.
  자리표시자도 일반 개체처럼 관계를 판단합니다.
- 바뀌지 않은 일반인의 개인정보가 보이면 그 값을 메모에 **옮겨 적지 말고** "개인정보" 신고만 남기세요.
- 위키백과 표제어나 뉴스에 나오는 **공인**의 이름, 생년, 소속은 공개된 정보이므로 그대로 둡니다.
"""


def _entity(sentence: str, raw: Any, field: str) -> dict[str, Any]:
    entity = require_dict(raw, field)
    word = str_field(entity, "word", field)
    start = require_int(get(entity, "start_idx", field), join(field, "start_idx"), lo=0)
    # end_idx is inclusive in KLUE-RE, unlike the end-exclusive offsets everywhere else.
    end = require_int(get(entity, "end_idx", field), join(field, "end_idx"), lo=start, hi=len(sentence) - 1)
    if end - start + 1 != len(word):
        raise PayloadError(join(field, "end_idx"),
                           f"span [{start}, {end}] (inclusive) is {end - start + 1} characters but word "
                           f"{word!r} has {len(word)}; the sentence holds {sentence[start:end + 1]!r} there")
    check_quoted(sentence, word, start, join(field, "word"), text_name="sentence")
    entity_type = str_field(entity, "type", field)
    return {**entity, "word": word, "start_idx": start, "end_idx": end, "type": entity_type}


#: The synthetic sentences (``synthetic_record``): relation -> (pattern, subject type, object type).
SYNTHETIC_TEMPLATES = {
    "org:founded_by": ("{o}는 {p}이 세운 회사다.", "ORG", "PER"),
    "per:employee_of": ("{p}은 {o}에서 일한다.", "PER", "ORG"),
    "org:place_of_headquarters": ("{o}의 본사는 {l}에 있다.", "ORG", "LOC"),
    "per:origin": ("{p}은 {l} 출신이다.", "PER", "LOC"),
    "no_relation": ("{p}과 {o}는 같은 날 {l}에서 언급되었다.", "PER", "ORG"),
}


class RelationExtraction(TaskType):
    slug = "re"
    klue_name = "KLUE-RE"
    title = gettext_noop("Relation extraction")
    order = 5
    text_fields = ("sentence",)
    interop_labels = "relations"
    standard_formats = ("doccano", "labelstudio")
    span_fields = (
        SpanField("payload", "subject_entity", "sentence", "start_idx", "end_idx", inclusive=True, quote="word"),
        SpanField("payload", "object_entity", "sentence", "start_idx", "end_idx", inclusive=True, quote="word"),
    )
    csv_columns = ("sentence", "subject_entity", "object_entity")
    klue_file = KlueFile("klue-re", "json")
    widget = "annotation/widgets/re.js"
    widget_styles = "annotation/widgets/re.css"
    label_list = "labels"

    def widget_strings(self) -> dict[str, str]:
        from django.utils.translation import gettext as _

        return {
            "re_subject": _("Subject"),
            "re_object": _("Object"),
            "re_instruction": _("Which relation does the sentence state between the subject and the object?"),
            "re_search": _("Search relations"),
            "re_key_search": _("search the relation list"),
            "re_key_updown": _("move in the list"),
            "re_key_enter": _("pick the highlighted relation"),
            "re_key_submit": _("pick the highlighted relation and submit it"),
            "re_key_zero": _("no_relation"),
            "re_need_label": _("choose a relation"),
            "re_chosen": _("Chosen relation"),
        }

    def agreement_measure(self) -> Any:
        from annotation.agreement.measures.categorical import CategoricalMeasure

        return CategoricalMeasure()

    def gold_rule(self) -> Any:
        from annotation.gold.rules import MajorityRule

        return MajorityRule("label")

    def flat_schema(self) -> Any:
        from exports.writers.flat import INT, STRING, Extra, FlatSchema, column

        entity = [column(f"{prefix}_{name}", type_, f"{prefix}_entity.{key}") for prefix in ("subject", "object")
                  for name, type_, key in (("word", STRING, "word"), ("start_idx", INT, "start_idx"),
                                           ("end_idx", INT, "end_idx"), ("type", STRING, "type"))]
        return FlatSchema((
            column("guid"), column("sentence"), *entity, column("label"), column("source"),
        ), stratify="label", hf_categories=("text-classification",), hf_task_ids=("multi-class-classification",),
            extras=(Extra("relation_list", lambda schema: {"relations": list(schema.get("labels") or [])}, 4, True),))

    def metrics(self) -> Any:
        from exports.baselines.bootstrap import re_stats
        from exports.metrics import TaskMetrics
        from exports.metrics.re import score_re

        return TaskMetrics(self.slug, score_re, ("micro_f1", "auprc"), ("auprc_present",), "micro_f1", re_stats)

    def baseline(self) -> Any:
        from exports.baselines.text import RE_BASELINE

        return RE_BASELINE

    def doccano_record(self, record: dict[str, Any]) -> dict[str, Any]:
        from exports.writers.standard import doccano_re_record

        return doccano_re_record(record)

    def suggestion_payload(self, record: dict[str, Any], item: dict[str, Any], schema: dict[str, Any]
                           ) -> dict[str, Any]:
        return {"label": record["label"]}

    def synthetic_record(self, rng: random.Random, n: int) -> dict[str, Any]:
        """One sentence pattern per relation, filled with a person, an organisation and a place."""
        label = rng.choice(sorted(SYNTHETIC_TEMPLATES))
        template, subj_type, obj_type = SYNTHETIC_TEMPLATES[label]
        fill = {"p": rng.choice(PEOPLE), "o": rng.choice(ORGS), "l": rng.choice(PLACES)}
        sentence = template.format(**fill)
        keys = {"PER": "p", "ORG": "o", "LOC": "l"}

        def entity(kind: str) -> dict[str, Any]:
            word = fill[keys[kind]]
            start = sentence.index(word)
            return {"word": word, "start_idx": start, "end_idx": start + len(word) - 1, "type": kind}

        return {"guid": f"klue-re-v1_train_{n:05d}", "sentence": sentence, "subject_entity": entity(subj_type),
                "object_entity": entity(obj_type), "label": label, "source": "synthetic"}

    def default_schema(self) -> dict[str, Any]:
        return {"labels": list(RELATIONS), "entity_types": list(ENTITY_TYPES), LABEL_NAMES: self.default_label_names()}

    def default_label_names(self) -> Names:
        return copy_names(NAMES)

    def guideline_template(self) -> GuidelineTemplate:
        return GuidelineTemplate(instructions=INSTRUCTIONS, ethics=ETHICS, pii=PII)

    def validate_item(self, payload: Any) -> dict[str, Any]:
        payload = require_dict(payload)
        sentence = str_field(payload, "sentence")
        return keep_extra(payload, {
            "sentence": sentence,
            "subject_entity": _entity(sentence, get(payload, "subject_entity"), "subject_entity"),
            "object_entity": _entity(sentence, get(payload, "object_entity"), "object_entity"),
        })

    def validate_annotation(
        self, payload: Any, *, item: dict[str, Any], schema: dict[str, Any], stage: str
    ) -> dict[str, Any]:
        self.stage(stage)
        payload = require_dict(payload)
        return {"label": require_choice(get(payload, "label"), schema_list(schema, "labels"), "label",
                                        "relation")}

    def validate_carried(self, meta: dict[str, Any], *, item: dict[str, Any], schema: dict[str, Any]) -> None:
        # The entity spans are checked with the item; their types are written back as they came.
        types = schema.get("entity_types") or ENTITY_TYPES
        for key in ("subject_entity", "object_entity"):
            require_choice(item[key]["type"], types, join(key, "type"), "entity type")

    def parse_record(self, record: dict[str, Any]) -> ParsedRecord:
        record = require_dict(record)
        guid = external_id(record)
        label = record.get("label")
        return ParsedRecord(
            external_id=guid,
            payload={"sentence": str_field(record, "sentence"),
                     "subject_entity": require_dict(get(record, "subject_entity"), "subject_entity"),
                     "object_entity": require_dict(get(record, "object_entity"), "object_entity")},
            meta=rest(record, ("guid", "sentence", "subject_entity", "object_entity", "label")),
            split=split_from_guid(guid),
            annotations=[] if label is None else [
                RecordAnnotation(CORPUS, LABEL_STAGE, {"label": str_field(record, "label")})],
        )

    def build_record(
        self, *, external_id: str, payload: dict[str, Any], meta: dict[str, Any],
        annotations: list[RecordAnnotation], gold: dict[str, Any] | None,
    ) -> dict[str, Any]:
        label = gold if gold is not None else first_payload(annotations)
        fields = {"guid": external_id, **payload}
        if label is not None:
            fields["label"] = label["label"]
        return ordered(("guid", "sentence", "subject_entity", "object_entity", "label", "source"), fields, meta)


TASK_TYPE = RelationExtraction()
