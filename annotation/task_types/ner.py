"""Named entity recognition as character spans (KLUE-NER)."""

from __future__ import annotations

import random
from itertools import pairwise
from typing import Any

from django.utils.translation import gettext_noop

from ._common import (
    check_span,
    get,
    join,
    keep_extra,
    require_choice,
    require_dict,
    require_list,
    require_str,
    schema_list,
    str_field,
)
from ._markup import LABELS, check_markup_balance, parse_markup, spans_from_tags, tags_from_spans, to_markup
from ._records import CORPUS, external_id, first_payload, ordered, rest, split_from_guid
from ._synthetic import NOUNS, ORGS, PEOPLE, PLACES
from .base import (
    CHAR_TSV,
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

DESCRIPTIONS = {"PS": "인물", "LC": "지명·장소", "OG": "기관·단체", "DT": "날짜", "TI": "시간", "QT": "수량"}
ENGLISH = {"PS": "person", "LC": "location", "OG": "organization", "DT": "date", "TI": "time", "QT": "quantity"}
NAMES: Names = {label: {"ko": DESCRIPTIONS[label], "en": ENGLISH[label]} for label in LABELS}

INSTRUCTIONS = """\
## 작업 개요
문장에서 개체명을 찾아 **글자 범위**를 드래그하고 유형을 붙입니다. 유형은 여섯 가지입니다.
- `PS` 인물: 사람 이름, 별명 (예: `박`씨의 `박`, `홍길동`)
- `LC` 지명·장소: 나라, 도시, 산, 강, 건물 등 (예: `서울`, `한강`)
- `OG` 기관·단체: 회사, 정부 기관, 학교, 팀, 정당 (예: `경찰`, `삼성전자`)
- `DT` 날짜: 연, 월, 일, 요일, 기간 (예: `2017년 9월`, `지난해`)
- `TI` 시간: 시각과 시간 범위 (예: `오후 5시`, `30분`)
- `QT` 수량: 수와 단위, 나이, 금액, 비율, 순서 (예: `16명`, `32`, `5억원`)

## 범위 정하는 법
- 범위는 개체를 가리키는 **가장 짧은 연속 글자열**입니다. 조사는 빼고 단위는 넣습니다.
  - "<경찰:OG>은", "<16명:QT>을", "<박:PS>씨의"
- 호칭과 직함(씨, 대표, 장관)은 인물 범위에 넣지 않습니다.
- 띄어쓰기가 있는 이름은 한 범위로 묶습니다: "<조지 해리슨:PS>".
- 날짜와 시간이 붙어 있으면 각각 표시합니다: "<9월 21일:DT> <오후 5시:TI>".
- 범위는 서로 겹칠 수 없습니다. "서울대학교"처럼 지명이 기관명 안에 들어 있으면 바깥 개체(`OG`) 하나만
  표시합니다.

## 헷갈리는 경우
- 같은 단어라도 문맥이 유형을 정합니다. "청와대가 발표했다"는 `OG`, "청와대 앞에서 만났다"는 `LC`입니다.
- 괄호 안의 나이 "(32)"는 괄호를 빼고 `32`만 `QT`로 표시합니다.
- "여러 명", "많은 사람"처럼 수가 정해지지 않은 표현은 표시하지 않습니다.
- 제품명, 작품명, 사건명은 이 작업의 유형이 아니므로 표시하지 않습니다.
- 개체가 하나도 없는 문장도 있습니다. 그럴 때는 아무것도 표시하지 않고 제출합니다.
- 맞춤법이 틀린 이름도 문장에 쓰인 그대로의 범위를 표시합니다. 글자를 고치지 않습니다.
"""

ETHICS = """\
## 윤리 지침
- 이름만 보고 인물의 성별, 국적, 출신 지역, 종교를 추측해 메모하거나 유형을 바꾸지 않습니다.
- 범죄 기사 속 인물도 다른 인물과 똑같이 `PS`로만 표시합니다. 평가나 추측을 덧붙이지 않습니다.
- 특정 집단을 비하하는 표현이나 혐오 표현이 담긴 문장은 라벨링을 멈추고 **"유해·혐오 표현" 신고**를
  남긴 뒤 건너뜁니다.
- 불편한 내용은 언제든 건너뛸 수 있습니다.
"""

PII = """\
## 개인정보 지침
- 이 작업에서 개인정보는 **일반인**의 실명, 전화번호, 주소, 이메일, 주민등록번호, 계좌번호,
  차량번호처럼 한 사람을 알아볼 수 있는 정보입니다.
- 식별자는 작업 전에 `[이름1]`, `[전화번호1]`처럼 **유형이 붙은 자리표시자**로 바뀌어 있습니다.
  인물 자리표시자는 평소처럼 `PS`로 표시하되, 자리표시자 전체를 한 범위로 잡습니다.
- 바뀌지 않은 개인정보가 보이면 그 값을 메모에 **옮겨 적지 말고** "개인정보" 신고만 남기세요.
- 뉴스에 나오는 **공인**(정치인, 기업인, 연예인, 운동선수)의 이름은 개인정보가 아니며 그대로 `PS`로
  표시합니다. 기사 속 성씨만 남은 일반인("김모씨")은 이미 익명화된 것으로 봅니다.
"""


class NamedEntityRecognition(TaskType):
    slug = "ner"
    klue_name = "KLUE-NER"
    title = gettext_noop("Named entity recognition")
    order = 4
    text_fields = ("sentence",)
    interop_labels = "spans"
    standard_formats = ("conll", "doccano", "labelstudio")
    span_fields = (SpanField("annotation", "entities[]", "sentence", "start", "end"),)
    csv_columns = ("sentence",)
    klue_file = KlueFile("klue-ner", "tsv", CHAR_TSV)
    widget = "annotation/widgets/ner.js"
    widget_styles = "annotation/widgets/ner.css"
    label_list = "labels"

    def widget_strings(self) -> dict[str, str]:
        from django.utils.translation import gettext as _

        return {
            "ner_group": _("Entity type"),
            "ner_instruction": _("Select characters with the mouse or with Shift+arrows, then press the number of "
                                 "the entity type."),
            "ner_key_move": _("move the cursor / extend the selection"),
            "ner_key_types": _("label the selection with a type"),
            "ner_key_delete": _("delete the entity under the cursor"),
            "ner_key_adjust": _("move the end / the start of the entity under the cursor"),
            "ner_entities": _("Entities"),
            "ner_no_entities": _("No entities yet. A sentence without entities can be submitted as it is."),
            "ner_overlap": _("spans may not overlap"),
            "ner_select_first": _("select some characters first"),
        }

    def agreement_measure(self) -> Any:
        from annotation.agreement.measures.spans import SpanMeasure

        return SpanMeasure()

    def gold_rule(self) -> Any:
        from annotation.gold.rules import SpanMajorityRule

        return SpanMajorityRule()

    def flat_schema(self) -> Any:
        from exports.writers.flat import STRINGS, FlatSchema, column

        return FlatSchema((
            column("guid"), column("source"), column("sentence"), column("markup"), column("chars", STRINGS),
            column("tags", STRINGS),
        ), hf_categories=("token-classification",), hf_task_ids=("named-entity-recognition",))

    def metrics(self) -> Any:
        from exports.baselines.bootstrap import ner_stats
        from exports.metrics import TaskMetrics
        from exports.metrics.ner import score_ner

        return TaskMetrics(self.slug, score_ner, ("entity_macro_f1", "char_macro_f1"), ("char_macro_f1_without_o",),
                           "entity_macro_f1", ner_stats)

    def baseline(self) -> Any:
        from exports.baselines.ner import BASELINE

        return BASELINE

    def doccano_record(self, record: dict[str, Any]) -> dict[str, Any]:
        from exports.writers.standard import doccano_ner_record

        return doccano_ner_record(record)

    def suggestion_payload(self, record: dict[str, Any], item: dict[str, Any], schema: dict[str, Any]
                           ) -> dict[str, Any]:
        """IOB2 tags to spans, reading a stray ``I-X`` (a model's, not a corpus's) as the start of an entity."""
        entities: list[dict[str, Any]] = []
        current: dict[str, Any] | None = None
        for i, tag in enumerate(record["tags"]):
            if tag == "O" or not isinstance(tag, str) or len(tag) < 3:
                current = None
            elif tag.startswith("I-") and current is not None and current["type"] == tag[2:]:
                current["end"] = i + 1
            else:
                current = {"start": i, "end": i + 1, "type": tag[2:]}
                entities.append(current)
        return {"entities": entities}

    def synthetic_record(self, rng: random.Random, n: int) -> dict[str, Any]:
        """One sentence pattern with a person, a place, an organisation, a date and a quantity."""
        parts = [(rng.choice(PEOPLE), "PS"), ("은 ", None), (rng.choice(PLACES), "LC"), ("에 있는 ", None),
                 (rng.choice(ORGS), "OG"), ("에서 ", None), (f"{rng.randint(1, 12)}월", "DT"), (" ", None),
                 (f"{rng.randint(2, 9)}명", "QT"), ("과 ", None), (rng.choice(NOUNS), None), ("을 봤다.", None)]
        sentence, entities = "", []
        for text, kind in parts:
            if kind:
                entities.append({"start": len(sentence), "end": len(sentence) + len(text), "type": kind})
            sentence += text
        tags = ["O"] * len(sentence)
        for e in entities:
            tags[e["start"]:e["end"]] = [f"B-{e['type']}"] + [f"I-{e['type']}"] * (e["end"] - e["start"] - 1)
        return {"guid": f"klue-ner-v1_train_{n:05d}", "sentence": sentence, "markup": to_markup(sentence, entities),
                "chars": list(sentence), "tags": tags}

    def prediction_record(self, record: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
        """The sentence's characters, all tagged ``O`` (the baseline reads the character column)."""
        chars = list(item.get("sentence", ""))
        return {**record, "chars": chars, "tags": ["O"] * len(chars)}

    def default_schema(self) -> dict[str, Any]:
        return {"labels": list(LABELS), "descriptions": dict(DESCRIPTIONS), "allow_overlap": False,
                LABEL_NAMES: self.default_label_names()}

    def default_label_names(self) -> Names:
        return copy_names(NAMES)

    def guideline_template(self) -> GuidelineTemplate:
        return GuidelineTemplate(instructions=INSTRUCTIONS, ethics=ETHICS, pii=PII)

    def validate_item(self, payload: Any) -> dict[str, Any]:
        payload = require_dict(payload)
        return keep_extra(payload, {"sentence": str_field(payload, "sentence")})

    def validate_annotation(
        self, payload: Any, *, item: dict[str, Any], schema: dict[str, Any], stage: str
    ) -> dict[str, Any]:
        self.stage(stage)
        payload = require_dict(payload)
        labels = schema_list(schema, "labels")
        sentence = str(item.get("sentence", ""))
        spans: list[tuple[int, int, str, int]] = []
        for i, raw in enumerate(require_list(get(payload, "entities"), "entities")):
            field = join("entities", i)
            entity = require_dict(raw, field)
            start, end = check_span(sentence, get(entity, "start", field), get(entity, "end", field), field,
                                    text_name="sentence")
            label = require_choice(get(entity, "type", field), labels, join(field, "type"), "entity type")
            spans.append((start, end, label, i))

        spans.sort()
        allow_overlap = bool(schema.get("allow_overlap", False))
        for (s1, e1, t1, i1), (s2, e2, t2, i2) in pairwise(spans):
            if (s1, e1, t1) == (s2, e2, t2):
                raise PayloadError(f"entities[{max(i1, i2)}]", f"duplicates entities[{min(i1, i2)}] "
                                                               f"([{s1}, {e1}) {t1})")
        if not allow_overlap:
            # Sorted by start, so a span overlaps an earlier one iff it starts before the furthest end so far.
            furthest: tuple[int, int, int] | None = None  # (end, start, original index)
            for start, end, _, i in spans:
                if furthest is not None and start < furthest[0]:
                    f_end, f_start, other = furthest
                    raise PayloadError(f"entities[{i}]",
                                       f"[{start}, {end}) {sentence[start:end]!r} overlaps entities[{other}] "
                                       f"[{f_start}, {f_end}) {sentence[f_start:f_end]!r}; "
                                       f"spans may not overlap")
                if furthest is None or end > furthest[0]:
                    furthest = (end, start, i)
        return {"entities": [{"start": s, "end": e, "type": t} for s, e, t, _ in spans]}

    def suggestion_parts(self, suggested: dict[str, Any], annotated: dict[str, Any]) -> dict[str, Any]:
        """Per suggested span: ``accepted`` (kept exactly), else ``changed`` — retyped (same characters,
        another type), resized (an overlapping span replaced it) or removed; spans no suggestion
        accounts for count as ``added``."""
        mine = [(e["start"], e["end"], e["type"]) for e in annotated.get("entities") or []]
        offered = [(e["start"], e["end"], e["type"]) for e in suggested.get("entities") or []]
        # Kept spans first, so a retyped or resized span is matched only against what the annotator added.
        used = set(offered) & set(mine)
        parts = []
        for start, end, entity_type in offered:
            part: dict[str, Any] = {"start": start, "end": end, "type": entity_type, "status": "accepted"}
            if (start, end, entity_type) not in used:
                free = [m for m in mine if m not in used and m not in offered]
                retyped = next((m for m in free if m[:2] == (start, end)), None)
                resized = next((m for m in free if m[0] < end and start < m[1]), None)
                replacement = retyped or resized
                part["status"] = "changed"
                part["how"] = "type" if retyped else "boundary" if resized else "removed"
                if replacement is not None:
                    part["now"] = {"start": replacement[0], "end": replacement[1], "type": replacement[2]}
                    used.add(replacement)
            parts.append(part)
        added = [m for m in mine if m not in used and m not in offered]
        parts += [{"start": start, "end": end, "type": entity_type, "status": "added"}
                  for start, end, entity_type in added]
        return {"unit": "entity", "accepted": sum(p["status"] == "accepted" for p in parts),
                "changed": sum(p["status"] == "changed" for p in parts), "added": len(added), "parts": parts}

    def parse_record(self, record: dict[str, Any]) -> ParsedRecord:
        """Four shapes: the TSV reader's (``chars`` + ``tags``, with ``markup``), a plain ``sentence`` with
        an ``entities`` list of ``{start, end, type}`` spans (Goldset's own label), a ``sentence`` with
        ``<text:TYPE>`` markup, or a plain ``sentence`` (no entities: an item still to be annotated)."""
        record = require_dict(record)
        guid = external_id(record)
        entities: list[dict[str, Any]] | None
        if "tags" in record:
            chars = require_list(get(record, "chars"), "chars")
            for i, char in enumerate(chars):
                if not isinstance(char, str) or len(char) != 1:
                    raise PayloadError(join("chars", i), f"must be exactly one character, got {char!r}")
            sentence = "".join(chars)
            entities = spans_from_tags(chars, require_list(record["tags"], "tags"))
            for key, text in (("sentence", record.get("sentence")), ("markup", record.get("markup"))):
                if text is not None and (parse_markup(text)[0] if key == "markup" else text) != sentence:
                    raise PayloadError(key, f"{text!r} does not match the characters of the tag sequence "
                                            f"{sentence!r}")
        elif "entities" in record:
            # The spans are checked with the other labels (validate_annotation), so their errors name
            # annotations[0].entities[i]; taking them as given keeps a bad span from vanishing into meta.
            sentence = require_str(get(record, "sentence"), "sentence")
            if parse_markup(sentence)[1]:
                raise PayloadError("entities", "the sentence also has <text:TYPE> markup; give the entities "
                                               "either as markup or as a list, not both")
            entities = require_list(record["entities"], "entities")
        else:
            key = "markup" if record.get("markup") is not None else "sentence"
            source_text = require_str(get(record, key), key)
            # Only here is markup the sole source of the labels; with tags, the tags say what is an entity.
            check_markup_balance(source_text, key)
            sentence, found = parse_markup(source_text)
            entities = found or None
        annotations = [] if entities is None else [RecordAnnotation(CORPUS, LABEL_STAGE, {"entities": entities})]
        return ParsedRecord(
            external_id=guid,
            payload={"sentence": require_str(sentence, "sentence")},
            meta=rest(record, ("guid", "sentence", "markup", "chars", "tags", "entities")),
            split=split_from_guid(guid),
            annotations=annotations,
        )

    def parse_tool_record(self, record: dict[str, Any]) -> ParsedRecord:
        """doccano's and Label Studio's text is plain: ``<x:TYPE>`` in it is text (KLUE-NER's own dev sentence
        ``klue-ner-v1_dev_03639`` holds ``20기:QT>``), and the spans are the tool's span fields only."""
        record = require_dict(record)
        guid = external_id(record)
        return ParsedRecord(
            external_id=guid,
            payload={"sentence": require_str(get(record, "sentence"), "sentence")},
            meta=rest(record, ("guid", "sentence")),
            split=split_from_guid(guid),
        )

    def build_record(
        self, *, external_id: str, payload: dict[str, Any], meta: dict[str, Any],
        annotations: list[RecordAnnotation], gold: dict[str, Any] | None,
    ) -> dict[str, Any]:
        sentence = payload["sentence"]
        label = gold if gold is not None else first_payload(annotations)
        fields: dict[str, Any] = {"guid": external_id, "sentence": sentence}
        if label is not None:
            entities = label.get("entities") or []
            fields.update(markup=to_markup(sentence, entities), chars=list(sentence),
                          tags=tags_from_spans(len(sentence), entities))
        return ordered(("guid", "source", "sentence", "markup", "chars", "tags"), fields, meta)


TASK_TYPE = NamedEntityRecognition()
