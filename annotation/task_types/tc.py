"""Topic classification of news headlines (KLUE YNAT)."""

from __future__ import annotations

import random
from typing import Any

from django.utils.translation import gettext_noop

from ._common import (
    get,
    join,
    keep_extra,
    optional_str,
    require_choice,
    require_dict,
    require_list,
    require_str,
    schema_list,
    str_field,
)
from ._records import CORPUS, external_id, individual, majority, ordered, rest, split_from_guid
from ._synthetic import FILLER
from .base import (
    LABEL_NAMES,
    LABEL_STAGE,
    GuidelineTemplate,
    KlueFile,
    Names,
    ParsedRecord,
    PayloadError,
    RecordAnnotation,
    TaskType,
    copy_names,
)

LABELS = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]
NAMES: Names = {
    "IT과학": {"ko": "IT과학", "en": "IT and science"},
    "경제": {"ko": "경제", "en": "economy"},
    "사회": {"ko": "사회", "en": "society"},
    "생활문화": {"ko": "생활문화", "en": "life and culture"},
    "세계": {"ko": "세계", "en": "world"},
    "스포츠": {"ko": "스포츠", "en": "sports"},
    "정치": {"ko": "정치", "en": "politics"},
}
#: YNAT writes "no 2nd/3rd topic" as this string; Goldset payloads use null instead.
NONE_LABEL = "해당없음"

INSTRUCTIONS = """\
## 작업 개요
뉴스 기사 **제목 한 줄**만 보고, 그 기사가 다루는 주제를 7개 주제 중에서 고릅니다.
주제: `IT과학`, `경제`, `사회`, `생활문화`, `세계`, `스포츠`, `정치`.

## 라벨링 방법
1. **1순위 주제(필수)**: 제목이 가장 직접적으로 다루는 주제 하나를 고릅니다.
2. **2순위·3순위 주제(선택)**: 제목이 다른 주제에도 분명히 걸쳐 있을 때만 고릅니다.
   해당하는 주제가 없으면 비워 둡니다(`해당없음`). 같은 주제를 두 번 고를 수 없고,
   2순위를 비워 두고 3순위만 고를 수도 없습니다.
3. 기사 본문, 언론사가 붙인 분류, URL은 판단 근거로 쓰지 않습니다. 제목에 드러난 내용만 봅니다.

## 예시
- "5억원 무이자 융자는 되고 7천만원 이사비는 안된다" → 1순위 `사회`, 2순위 `경제`
  (금액이 나오지만 핵심은 제도의 형평성 논란입니다.)
- "삼성전자, 3나노 반도체 양산 돌입" → 1순위 `IT과학`, 2순위 `경제`
- "손흥민 시즌 10호골…토트넘 3연승" → 1순위 `스포츠`
- "유엔 안보리, 대북 제재 결의안 채택" → 1순위 `세계`, 2순위 `정치`

## 헷갈리는 경우
- 국내 정당·국회·대통령실·선거는 `정치`, 외국 정부와 국제기구의 소식은 `세계`입니다.
  한국과 외국이 함께 나오면 사건이 일어난 곳과 주체를 기준으로 고릅니다.
- 기업 실적·주가·부동산·물가는 `경제`, 기술 자체(신제품 성능, 연구 성과)는 `IT과학`입니다.
- 사건·사고·교육·노동·복지는 `사회`, 공연·여행·건강·음식·날씨는 `생활문화`입니다.
- 스포츠 선수의 사생활이나 범죄 기사는 내용에 따라 `사회`가 될 수 있습니다.
- 제목만으로 주제를 정할 수 없을 만큼 모호하면 가장 그럴듯한 주제를 고르되,
  `건너뛰기`를 쓰지 말고 **"모호함" 신고**를 남겨 관리자가 볼 수 있게 합니다.
- 제목이 잘렸거나 뉴스 제목이 아닌 경우(광고, 깨진 문자)는 신고 후 건너뜁니다.
"""

ETHICS = """\
## 윤리 지침
- 주제는 제목의 **내용**으로만 고릅니다. 제목에 나온 인물의 성별·지역·종교·국적 등으로
  주제를 추측하지 않습니다.
- 기사 논조에 동의하는지와 무관하게 주제만 판단합니다. 개인의 정치적 견해를 라벨에 반영하지 마세요.
- 특정 집단을 비하하거나 혐오를 부추기는 제목, 폭력적·선정적인 제목은 라벨링을 멈추고
  **"유해·혐오 표현" 신고**를 남깁니다. 관리자가 데이터셋에서 뺄지 결정합니다.
- 읽기 힘든 내용이면 언제든 건너뛸 수 있으며, 건너뛰어도 불이익은 없습니다.
"""

PII = """\
## 개인정보 지침
- 이 작업의 개인정보는 제목에 드러난 **일반인**의 실명, 전화번호, 주소, 이메일, 계좌·주민등록번호,
  차량번호 등입니다.
- 이런 식별자는 작업 전에 `[이름1]`, `[전화번호1]`처럼 **유형이 붙은 자리표시자**로 미리 바뀌어
  있습니다. 자리표시자는 그대로 두고 평소처럼 주제를 고르면 됩니다.
- 바뀌지 않은 개인정보가 보이면 그 값을 메모나 댓글에 **옮겨 적지 말고** "개인정보" 신고만
  남기세요.
- 뉴스에 나오는 **공인**(정치인, 기업 대표, 연예인, 운동선수 등)의 이름은 개인정보로 보지 않으며
  그대로 두어도 됩니다.
"""


#: The synthetic headlines' words per topic (``synthetic_record``); one headline in ten shows another topic's.
SYNTHETIC_TOPICS = {
    "IT과학": ["반도체", "인공지능", "스마트폰", "위성", "소프트웨어", "데이터"],
    "경제": ["주가", "환율", "수출", "금리", "물가", "투자"],
    "사회": ["경찰", "사고", "재판", "복지", "시민", "교통"],
    "생활문화": ["공연", "전시", "여행", "요리", "축제", "패션"],
    "세계": ["미국", "유럽", "중국", "정상회담", "외교", "유엔"],
    "스포츠": ["축구", "야구", "우승", "감독", "선수", "올림픽"],
    "정치": ["국회", "선거", "대통령", "정당", "장관", "법안"],
}


class TopicClassification(TaskType):
    slug = "tc"
    klue_name = "YNAT"
    title = gettext_noop("Topic classification")
    order = 1
    text_fields = ("title",)
    interop_labels = "categories"
    span_fields = ()
    csv_columns = ("title",)
    klue_file = KlueFile("ynat", "json")
    widget = "annotation/widgets/tc.js"
    widget_styles = "annotation/widgets/tc.css"
    label_list = "labels"

    def widget_strings(self) -> dict[str, str]:
        from django.utils.translation import gettext as _

        return {
            "tc_group": _("Topic"),
            "tc_instruction": _("Choose the topic of the headline. Press a second or third number for optional "
                                "2nd and 3rd topics."),
            "tc_key_digits": _("choose a topic (again to remove it)"),
            "tc_key_backspace": _("remove the last choice"),
            "tc_need_first": _("choose at least the first topic"),
        }

    def agreement_measure(self) -> Any:
        from annotation.agreement.measures.categorical import CategoricalMeasure

        return CategoricalMeasure()

    def gold_rule(self) -> Any:
        from annotation.gold.rules import MajorityRule

        return MajorityRule("label")

    def flat_schema(self) -> Any:
        from exports.writers.flat import STRINGS, FlatSchema, column

        return FlatSchema((
            column("guid"), column("title"), column("label"), column("predefined_news_category"),
            column("annotators", STRINGS, "annotations.annotators"),
            column("first_scope", STRINGS, "annotations.annotations.first-scope"),
            column("second_scope", STRINGS, "annotations.annotations.second-scope"),
            column("third_scope", STRINGS, "annotations.annotations.third-scope"),
            column("url"), column("date"),
        ), stratify="label", hf_categories=("text-classification",), hf_task_ids=("topic-classification",))

    def metrics(self) -> Any:
        from exports.baselines.bootstrap import tc_stats
        from exports.metrics import TaskMetrics
        from exports.metrics.classification import score_tc

        return TaskMetrics(self.slug, score_tc, ("macro_f1",), (), "macro_f1", tc_stats)

    def baseline(self) -> Any:
        from exports.baselines.text import TC_BASELINE

        return TC_BASELINE

    def suggestion_payload(self, record: dict[str, Any], item: dict[str, Any], schema: dict[str, Any]
                           ) -> dict[str, Any]:
        return {"label": record["label"], "second": None, "third": None}

    def synthetic_record(self, rng: random.Random, n: int) -> dict[str, Any]:
        """Two words of the topic's list and two fillers, shuffled."""
        label = rng.choice(sorted(SYNTHETIC_TOPICS))
        shown = label if rng.random() > 0.1 else rng.choice(sorted(SYNTHETIC_TOPICS))
        words = rng.sample(SYNTHETIC_TOPICS[shown], 2) + rng.sample(FILLER, 2)
        rng.shuffle(words)
        return {"guid": f"ynat-v1_train_{n:05d}", "title": " ".join(words), "label": label}

    def default_schema(self) -> dict[str, Any]:
        return {"labels": list(LABELS), "none_label": NONE_LABEL, LABEL_NAMES: self.default_label_names()}

    def default_label_names(self) -> Names:
        return copy_names(NAMES)

    def guideline_template(self) -> GuidelineTemplate:
        return GuidelineTemplate(instructions=INSTRUCTIONS, ethics=ETHICS, pii=PII)

    def validate_item(self, payload: Any) -> dict[str, Any]:
        payload = require_dict(payload)
        return keep_extra(payload, {
            "title": str_field(payload, "title"),
            "predefined_news_category": optional_str(payload, "predefined_news_category"),
            "url": optional_str(payload, "url"),
            "date": optional_str(payload, "date"),
        })

    def validate_annotation(
        self, payload: Any, *, item: dict[str, Any], schema: dict[str, Any], stage: str
    ) -> dict[str, Any]:
        self.stage(stage)
        payload = require_dict(payload)
        labels = schema_list(schema, "labels")
        none_label = schema.get("none_label", NONE_LABEL)

        def topic(field: str, value: Any) -> str:
            if value == none_label:
                raise PayloadError(field, f"{none_label!r} is not a topic; send null for 'no topic'")
            return require_choice(value, labels, field, "topic")

        label = topic("label", get(payload, "label"))
        ranked: dict[str, str | None] = {}
        for key in ("second", "third"):
            value = payload.get(key)
            ranked[key] = None if value is None else topic(key, value)
        if ranked["second"] == label:
            raise PayloadError("second", f"repeats the first topic {label!r}")
        if ranked["third"] is not None:
            if ranked["second"] is None:
                raise PayloadError("third", "a third topic needs a second topic first")
            if ranked["third"] in (label, ranked["second"]):
                raise PayloadError("third", f"repeats an earlier topic {ranked['third']!r}")
        return {"label": label, **ranked}

    def validate_carried(self, meta: dict[str, Any], *, item: dict[str, Any], schema: dict[str, Any]) -> None:
        # YNAT's gold ``label`` sits beside the annotators' scopes and is written back when no gold replaces it.
        label = meta.get("label")
        if label is None:
            return
        none_label = schema.get("none_label", NONE_LABEL)
        if label == none_label:
            raise PayloadError("label", f"{none_label!r} is not a topic; a record's gold label must be one")
        require_choice(label, schema_list(schema, "labels"), "label", "topic")

    def parse_record(self, record: dict[str, Any]) -> ParsedRecord:
        record = require_dict(record)
        guid = external_id(record)
        annotations: list[RecordAnnotation] = []
        block = record.get("annotations")
        if block is not None:
            annotations = _scoped_annotations(require_dict(block, "annotations"))
        elif record.get("label") is not None:
            annotations = [RecordAnnotation(CORPUS, LABEL_STAGE, {
                "label": require_str(record["label"], "label"), "second": None, "third": None})]
        return ParsedRecord(
            external_id=guid,
            payload={"title": str_field(record, "title")},
            # The publisher's category, URL and date stay out of the payload: annotators judge the title only.
            meta=rest(record, ("guid", "title", "annotations")),
            split=split_from_guid(guid),
            annotations=annotations,
        )

    def build_record(
        self, *, external_id: str, payload: dict[str, Any], meta: dict[str, Any],
        annotations: list[RecordAnnotation], gold: dict[str, Any] | None,
    ) -> dict[str, Any]:
        voters = individual(annotations)
        label = (gold or {}).get("label") or meta.get("label") or majority(a.payload.get("label") for a in voters)
        if label is None and annotations:
            label = annotations[0].payload.get("label")
        fields: dict[str, Any] = {"guid": external_id, "title": payload["title"]}
        if label is not None:
            fields["label"] = label
        if voters:
            scopes = {name: [a.payload.get(key) or NONE_LABEL for a in voters] for key, name in SCOPES}
            fields["annotations"] = {"annotators": [a.annotator for a in voters], "annotations": scopes}
        return ordered(RECORD_ORDER, fields, meta)


#: (annotation payload key, YNAT scope name).
SCOPES = (("label", "first-scope"), ("second", "second-scope"), ("third", "third-scope"))
RECORD_ORDER = ("guid", "title", "predefined_news_category", "label", "annotations", "url", "date")


def _scoped_annotations(block: dict[str, Any]) -> list[RecordAnnotation]:
    """YNAT's ``annotations`` block -> one annotation per annotator with ranked topics (해당없음 -> null)."""
    annotators = require_list(get(block, "annotators", "annotations"), "annotations.annotators")
    scopes = require_dict(get(block, "annotations", "annotations"), "annotations.annotations")
    columns: dict[str, list[Any]] = {}
    for key, name in SCOPES:
        field = join("annotations.annotations", name)
        values = require_list(get(scopes, name, "annotations.annotations"), field)
        if len(values) != len(annotators):
            raise PayloadError(field, f"has {len(values)} entries for {len(annotators)} annotators")
        columns[key] = values
    result = []
    for i, annotator in enumerate(annotators):
        ranked = {key: columns[key][i] for key, _ in SCOPES}
        result.append(RecordAnnotation(
            require_str(annotator, join("annotations.annotators", i)), LABEL_STAGE,
            {key: None if value == NONE_LABEL else value for key, value in ranked.items()},
        ))
    return result


TASK_TYPE = TopicClassification()
