"""Natural language inference, built in two stages like KLUE-NLI: write, then validate."""

from __future__ import annotations

import random
from typing import Any

from django.utils.translation import gettext_noop

from ._common import (
    get,
    keep_extra,
    optional_str,
    require_choice,
    require_dict,
    require_str,
    schema_list,
    str_field,
)
from ._records import CORPUS, external_id, first_payload, individual, majority, ordered, rest, split_from_guid, text_key
from ._synthetic import NOUNS, PEOPLE, PLACES, VERBS
from .base import (
    LABEL_NAMES,
    GuidelineTemplate,
    KlueFile,
    Names,
    ParsedRecord,
    PayloadError,
    RecordAnnotation,
    Stage,
    TaskType,
    copy_names,
)

LABELS = ["entailment", "neutral", "contradiction"]
NAMES: Names = {
    "entailment": {"ko": "함의", "en": "entailment"},
    "neutral": {"ko": "중립", "en": "neutral"},
    "contradiction": {"ko": "모순", "en": "contradiction"},
}
WRITING = "writing"
VALIDATION = "validation"
#: KLUE's per-annotator fields: the writer's intended label, then one per validator.
AUTHOR = "author"
VALIDATOR_FIELDS = ("label2", "label3", "label4", "label5")
LABEL_FIELDS = (AUTHOR, *VALIDATOR_FIELDS)

INSTRUCTIONS = """\
## 작업 개요
이 작업은 두 단계입니다.
1. **가설 작성**: 전제 문장을 읽고, 지정된 관계(목표 라벨)가 되도록 가설 문장을 **직접 씁니다**.
2. **검증**: 다른 작업자가 쓴 전제–가설 쌍을 보고 관계를 고릅니다.

## 세 가지 관계
- **함의(entailment)**: 전제가 참이면 가설도 **반드시** 참입니다.
- **중립(neutral)**: 전제만으로는 가설이 참인지 거짓인지 알 수 없습니다.
- **모순(contradiction)**: 전제가 참이면 가설은 **반드시** 거짓입니다.

## 예시 (전제: "10명이 함께 사용하기 불편함없이 만족했다.")
- 함의: "여러 명이 함께 사용해도 괜찮았다."
- 중립: "성인 10명이 함께 사용하기 불편함이 없었다." (성인인지는 알 수 없음)
- 모순: "10명이 함께 사용하기 불편함이 많았다."

## 가설을 쓸 때
- 가설은 한 문장으로, 전제와 같은 주제를 다루는 자연스러운 한국어로 씁니다.
- 전제를 그대로 복사하거나 단어 하나만 부정어로 바꾸는 방식은 피합니다.
  "안", "못", "없다"만 붙인 모순 가설이 많으면 모델이 단어만 보고 답을 맞히게 됩니다.
- 함의 가설을 전제의 일부를 잘라 만드는 방식도 반복하지 마세요. 바꿔 말하기, 일반화, 추론을 섞습니다.
- 중립 가설에는 전제에 없는 그럴듯한 정보(목적, 원인, 수량 등)를 더합니다.
- 상식 수준의 배경지식은 써도 되지만 전문 지식이 필요한 가설은 쓰지 않습니다.

## 검증할 때
- 가설을 쓴 사람이 의도한 라벨은 보이지 않습니다. 전제와 가설만 보고 판단합니다.
- 시제, 수량, 부정, "모두/일부" 같은 표현을 꼼꼼히 비교합니다.
- 가설이 비문이거나 전제와 무관해 판단할 수 없으면 라벨 대신 신고를 남기고 건너뜁니다.
- 다섯 표(작성자 1 + 검증자 4) 중 3표 이상이 같아야 정답이 되고, 그렇지 않은 쌍은 버려집니다.
"""

ETHICS = """\
## 윤리 지침
- 가설을 쓸 때 성별, 나이, 지역, 국적, 종교, 장애, 직업 등에 대한 **고정관념**을 담지 않습니다.
  예: 전제에 "간호사"가 나온다고 가설에서 여성으로 단정하지 않습니다.
- 전제에 없는 인물의 **민감한 속성**(건강, 성적 지향, 정치 성향, 종교)을 추측해 가설에 넣지 않습니다.
- 실존 인물을 비방하거나 사실이 아닌 범죄·추문을 지어내는 가설은 중립이라도 쓰지 않습니다.
- 전제에 혐오 표현이나 폭력적·선정적 내용이 있으면 가설을 쓰거나 라벨을 고르지 말고
  **"유해·혐오 표현" 신고**를 남긴 뒤 건너뜁니다. 검증 중 편향된 가설을 보면 "사회적 편향" 신고를 남깁니다.
"""

PII = """\
## 개인정보 지침
- 전제는 리뷰, 뉴스, 정책 게시글 등에서 왔습니다. 개인정보는 일반인의 이름, 연락처, 주소,
  계정 아이디, 주민등록번호, 계좌번호처럼 한 사람을 알아볼 수 있는 정보입니다.
- 식별자는 작업 전에 `[이름1]`, `[주소1]`처럼 **유형이 붙은 자리표시자**로 바뀌어 있습니다.
  가설에서도 자리표시자를 그대로 쓰고, **새로운 실명·연락처를 지어내지 마세요.**
- 바뀌지 않은 개인정보가 보이면 그 값을 가설이나 메모에 **옮겨 적지 말고** "개인정보" 신고만 남기세요.
- 뉴스에 나오는 **공인**의 이름은 그대로 써도 됩니다.
"""


class NaturalLanguageInference(TaskType):
    slug = "nli"
    klue_name = "KLUE-NLI"
    title = gettext_noop("Natural language inference")
    order = 3
    text_fields = ("premise", "hypothesis")
    span_fields = ()
    csv_columns = ("premise",)
    klue_file = KlueFile("klue-nli", "json")
    widget = "annotation/widgets/nli.js"
    widget_styles = "annotation/widgets/nli.css"
    label_list = "labels"

    def widget_strings(self) -> dict[str, str]:
        from django.utils.translation import gettext as _

        return {
            "nli_group": _("Relation"),
            "nli_premise": _("Premise"),
            "nli_hypothesis": _("Hypothesis"),
            "nli_write_instruction": _("Write one hypothesis sentence that stands in this relation to the premise:"),
            "nli_choose_target": _("Choose the relation your hypothesis will have, then write it."),
            "nli_validate_instruction": _("What is the relation between the premise and the hypothesis?"),
            "nli_key_labels": _("choose the relation"),
            "nli_key_labels_alt": _("choose the relation while typing"),
            "nli_need_hypothesis": _("write a hypothesis"),
            "nli_need_label": _("choose a relation"),
            "nli_copy": _("the hypothesis copies the premise"),
        }

    def agreement_measure(self) -> Any:
        from annotation.agreement.measures.categorical import CategoricalMeasure

        return CategoricalMeasure()

    def gold_rule(self) -> Any:
        from annotation.gold.rules import DISCARDED, MajorityRule

        return MajorityRule("label", on_failure=DISCARDED)

    def flat_schema(self) -> Any:
        from exports.writers.flat import STRING, FlatSchema, column

        return FlatSchema((
            column("guid"), column("source", STRING, "source", "genre"), column("premise"), column("hypothesis"),
            column("gold_label"), column("author"), column("label2"), column("label3"), column("label4"),
            column("label5"),
        ), stratify="gold_label", hf_categories=("text-classification",),
            hf_task_ids=("natural-language-inference",))

    def metrics(self) -> Any:
        from exports.baselines.bootstrap import nli_stats
        from exports.metrics import TaskMetrics
        from exports.metrics.classification import score_nli

        return TaskMetrics(self.slug, score_nli, ("accuracy",), (), "accuracy", nli_stats)

    def baseline(self) -> Any:
        from exports.baselines.text import NLI_BASELINE

        return NLI_BASELINE

    def suggestion_payload(self, record: dict[str, Any], item: dict[str, Any], schema: dict[str, Any]
                           ) -> dict[str, Any]:
        return {"label": record["gold_label"]}
    # One writer per premise; validation uses the project's annotators_per_item (KLUE: 4 validators).
    # Only the hypothesis moves into the item: validators must not see the writer's label.
    stages = (
        Stage(WRITING, gettext_noop("Write a hypothesis"), annotators=1, produces=(("hypothesis", "hypothesis"),)),
        Stage(VALIDATION, gettext_noop("Validate")),
    )

    def synthetic_record(self, rng: random.Random, n: int) -> dict[str, Any]:
        """A premise ``<who>은 <where>에서 <noun>을 <verb>.`` and a hypothesis that drops the place (entailment),
        adds a companion (neutral) or negates the verb (contradiction)."""
        who, where, noun = rng.choice(PEOPLE), rng.choice(PLACES), rng.choice(NOUNS)
        stem, past = rng.choice(VERBS)
        premise = f"{who}은 {where}에서 {noun}을 {past}."
        label = rng.choice(["entailment", "neutral", "contradiction"])
        hypothesis = {"entailment": f"{who}은 {noun}을 {past}.",
                      "neutral": f"{who}은 {where}에서 친구와 함께 {noun}을 {past}.",
                      "contradiction": f"{who}은 {where}에서 {noun}을 {stem}지 않았다."}[label]
        return {"guid": f"klue-nli-v1_train_{n:05d}", "premise": premise, "hypothesis": hypothesis,
                "gold_label": label}

    def default_schema(self) -> dict[str, Any]:
        return {"labels": list(LABELS), "gold_min_votes": 3, LABEL_NAMES: self.default_label_names()}

    def default_label_names(self) -> Names:
        return copy_names(NAMES)

    def guideline_template(self) -> GuidelineTemplate:
        return GuidelineTemplate(instructions=INSTRUCTIONS, ethics=ETHICS, pii=PII)

    def validate_item(self, payload: Any) -> dict[str, Any]:
        payload = require_dict(payload)
        hypothesis = payload.get("hypothesis")
        target = payload.get("target_label")
        return keep_extra(payload, {
            "premise": str_field(payload, "premise"),
            "hypothesis": None if hypothesis is None else require_str(hypothesis, "hypothesis"),
            "target_label": None if target is None else require_choice(target, LABELS, "target_label"),
            "source": optional_str(payload, "source"),
        })

    def annotator_view(self, payload: dict[str, Any], stage: str) -> dict[str, Any]:
        # Validators must not learn which label the writer aimed for.
        if stage == WRITING:
            return payload
        return {key: value for key, value in payload.items() if key != "target_label"}

    def validate_annotation(
        self, payload: Any, *, item: dict[str, Any], schema: dict[str, Any], stage: str
    ) -> dict[str, Any]:
        self.stage(stage)
        payload = require_dict(payload)
        labels = schema_list(schema, "labels")
        if stage == VALIDATION:
            if not item.get("hypothesis"):
                raise PayloadError("item.hypothesis",
                                   "this pair has no hypothesis yet; it cannot be validated")
            return {"label": require_choice(get(payload, "label"), labels, "label")}

        hypothesis = require_str(get(payload, "hypothesis"), "hypothesis").strip()
        label = require_choice(get(payload, "label"), labels, "label")
        target = item.get("target_label")
        if target is not None and label != target:
            raise PayloadError("label", f"the hypothesis was requested as {target!r}, not {label!r}")
        if hypothesis == str(item.get("premise", "")).strip():
            raise PayloadError("hypothesis", "copies the premise; write a new sentence")
        return {"hypothesis": hypothesis, "label": label}

    def validate_carried(self, meta: dict[str, Any], *, item: dict[str, Any], schema: dict[str, Any]) -> None:
        # The release writes gold_label back as it came when Goldset resolved no gold of its own.
        gold_label = meta.get("gold_label")
        if gold_label is not None:
            require_choice(gold_label, schema_list(schema, "labels"), "gold_label")

    def parse_record(self, record: dict[str, Any]) -> ParsedRecord:
        record = require_dict(record)
        guid = external_id(record)
        premise = str_field(record, "premise")
        payload: dict[str, Any] = {"premise": premise}
        annotations: list[RecordAnnotation] = []
        hypothesis = record.get("hypothesis")
        if hypothesis is not None:
            payload["hypothesis"] = require_str(hypothesis, "hypothesis")
            author = record.get(AUTHOR)
            if author:
                annotations.append(RecordAnnotation(AUTHOR, WRITING, {
                    "hypothesis": hypothesis, "label": require_str(author, AUTHOR)}))
            for key in VALIDATOR_FIELDS:
                if record.get(key):
                    annotations.append(RecordAnnotation(key, VALIDATION, {"label": require_str(record[key], key)}))
            if not annotations and record.get("gold_label"):
                annotations.append(RecordAnnotation(CORPUS, VALIDATION, {
                    "label": require_str(record["gold_label"], "gold_label")}))
        return ParsedRecord(
            external_id=guid,
            payload=payload,
            meta=rest(record, ("guid", "premise", "hypothesis", *LABEL_FIELDS)),
            split=split_from_guid(guid),
            # Pairs written from one premise must stay in one split.
            group_key=text_key(premise),
            annotations=annotations,
        )

    def build_record(
        self, *, external_id: str, payload: dict[str, Any], meta: dict[str, Any],
        annotations: list[RecordAnnotation], gold: dict[str, Any] | None,
    ) -> dict[str, Any]:
        writing = first_payload(annotations, WRITING)
        validators = individual(annotations, VALIDATION)
        fields: dict[str, Any] = {"guid": external_id, "premise": payload["premise"]}
        hypothesis = payload.get("hypothesis") or (writing or {}).get("hypothesis")
        if hypothesis is not None:
            fields["hypothesis"] = hypothesis
        votes = [(writing or {}).get("label"), *(a.payload.get("label") for a in validators)]
        gold_label = (gold or {}).get("label") or meta.get("gold_label") or majority(votes, min_votes=3)
        if gold_label is None and not writing and not validators:
            gold_label = (first_payload(annotations, VALIDATION) or {}).get("label")
        if gold_label is not None:
            fields["gold_label"] = gold_label
        if writing is not None:
            fields[AUTHOR] = writing.get("label")
        # KLUE has four validators; a project with more continues the numbering (label6, …).
        validator_fields = [f"label{i + 2}" for i in range(len(validators))]
        fields.update(zip(validator_fields, (a.payload.get("label") for a in validators), strict=True))
        order = ("guid", "genre", "source", "premise", "hypothesis", "gold_label", AUTHOR,
                 *dict.fromkeys([*VALIDATOR_FIELDS, *validator_fields]))
        return ordered(order, fields, meta)


TASK_TYPE = NaturalLanguageInference()
