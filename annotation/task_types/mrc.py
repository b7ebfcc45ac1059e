"""Machine reading comprehension (KLUE-MRC): write a question with its answer span, then answer it."""

from __future__ import annotations

import random
from typing import Any

from django.utils.translation import gettext_noop

from ._common import (
    check_quoted,
    get,
    join,
    keep_extra,
    optional_str,
    require_dict,
    require_int,
    require_list,
    require_str,
    str_field,
)
from ._records import CORPUS, external_id, first_payload, individual, ordered, rest, split_from_guid, text_key
from ._synthetic import PEOPLE, PLACES
from .base import (
    LABEL_NAMES,
    SQUAD,
    GuidelineTemplate,
    KlueFile,
    Names,
    ParsedRecord,
    PayloadError,
    RecordAnnotation,
    SpanField,
    Stage,
    TaskType,
    copy_names,
)

WRITING = "writing"
VALIDATION = "validation"
UNANSWERABLE = 3
#: Keys are strings because schemas are stored as JSON, whose object keys are always strings.
QUESTION_TYPES = {"1": "paraphrase", "2": "multi-sentence reasoning", "3": "unanswerable"}
#: The guideline's names of the question types ("질문 유형").
NAMES: Names = {
    "1": {"ko": "바꿔 쓰기", "en": "paraphrase"},
    "2": {"ko": "여러 문장 추론", "en": "multi-sentence reasoning"},
    "3": {"ko": "답할 수 없음", "en": "unanswerable"},
}
#: One question of the SQuAD nesting, flattened: document fields, the paragraph's context, the qa fields.
#: Where KLUE puts ``plausible_answers`` among the qa fields is not in the shared files; this is a guess.
DOCUMENT_FIELDS = ("title", "news_category", "source")
QA_FIELDS = ("question", "answers", "question_type", "is_impossible", "plausible_answers", "guid")
RECORD_ORDER = (*DOCUMENT_FIELDS, "context", *QA_FIELDS)

INSTRUCTIONS = """\
## 작업 개요
이 작업은 두 단계입니다.
1. **질문 작성**: 지문(뉴스 기사나 위키백과 문서)을 읽고 질문을 쓴 뒤, 답이 되는 부분을 지문에서
   **드래그해 표시**합니다.
2. **검증**: 다른 작업자가 쓴 질문을 보고 지문에서 답을 찾아 표시하거나, 답이 없다고 표시합니다.

## 질문 유형
- **1 바꿔 쓰기(paraphrase)**: 답이 든 문장의 표현을 바꿔 묻습니다. 지문 문장을 그대로 옮기지 않습니다.
- **2 여러 문장 추론**: 두 문장 이상을 함께 읽어야 답할 수 있게 묻습니다.
- **3 답할 수 없음**: 지문과 관련 있어 보이지만 지문에 답이 **없는** 질문입니다. 답은 비워 두고,
  답처럼 보이는 **그럴듯한 오답**(plausible answer)을 지문에서 표시합니다.

## 답 표시 규칙
- 답은 지문의 **연속된 글자열**이며 가장 짧게 잡습니다. 조사는 빼고 단위는 넣습니다.
  - 질문: "북태평양 기단과 오호츠크해 기단이 만나 국내에 머무르는 기간은?" → 답: `한 달가량`
- 같은 답이 지문에 여러 번 나오면 질문의 근거가 되는 위치의 것을 표시합니다.
- 유형 1·2는 답이 반드시 있어야 하고, 유형 3은 답이 없어야 합니다.

## 좋은 질문
- 지문을 읽지 않고는 답할 수 없어야 합니다. 상식만으로 답할 수 있는 질문은 쓰지 않습니다.
- "무엇/누가/언제/어디서/얼마나"처럼 답이 짧게 정해지는 질문을 씁니다. "왜"에 긴 문장으로 답해야 하는
  질문은 피합니다.
- 지문의 단어를 그대로 이어 붙인 질문은 검색만으로 풀리므로 유의어와 다른 어순을 씁니다.
- 답할 수 없는 질문은 지문의 인물, 날짜, 수치를 살짝 바꾸는 식으로 만듭니다.

## 검증할 때
- 질문 작성자의 답은 보이지 않습니다. 스스로 답을 찾아 표시합니다.
- 답이 지문에 없으면 "답 없음"을 고릅니다. 질문이 모호하거나 비문이면 신고를 남깁니다.
"""

ETHICS = """\
## 윤리 지침
- 질문에 성별, 나이, 지역, 국적, 종교, 장애 등에 대한 **고정관념**을 담지 않습니다.
- 지문에 없는 인물의 **민감한 정보**(건강, 종교, 정치 성향, 사생활)를 묻는 질문은 쓰지 않습니다.
  답할 수 없는 질문을 만들 때도 실존 인물에 대한 추문이나 거짓 사실을 지어내지 않습니다.
- 지문에 혐오 표현이나 폭력적·선정적 내용이 있으면 작업을 멈추고 **"유해·혐오 표현" 신고**를 남긴 뒤
  건너뜁니다.
"""

PII = """\
## 개인정보 지침
- 지문은 뉴스와 위키백과 등에서 왔습니다. 개인정보는 **일반인**의 실명, 연락처, 주소, 이메일,
  주민등록번호, 계좌번호처럼 한 사람을 알아볼 수 있는 정보입니다.
- 식별자는 작업 전에 `[이름1]`, `[전화번호1]`처럼 **유형이 붙은 자리표시자**로 바뀌어 있습니다.
  일반인의 개인정보를 **답으로 삼는 질문은 쓰지 마세요.**
- 바뀌지 않은 개인정보가 보이면 그 값을 질문이나 메모에 **옮겨 적지 말고** "개인정보" 신고만 남기세요.
- 기사에 나오는 **공인**의 이름과 공개된 직함은 질문과 답에 써도 됩니다.
"""


def _span(context: str, raw: Any, field: str) -> dict[str, Any] | None:
    """An answer-like span ``{"text", "start"}`` that must quote the context exactly (null allowed)."""
    if raw is None:
        return None
    span = require_dict(raw, field)
    text = str_field(span, "text", field)
    start = require_int(get(span, "start", field), join(field, "start"), lo=0)
    if start + len(text) > len(context):
        raise PayloadError(join(field, "start"), f"{start} + {len(text)} characters runs past the end of the "
                                                 f"context (length {len(context)})")
    check_quoted(context, text, start, join(field, "text"), text_name="context")
    return {"text": text, "start": start}


def _question_type(value: Any, field: str, allowed: set[int]) -> int:
    qtype = require_int(value, field)
    if qtype not in allowed:
        raise PayloadError(field, f"unknown question type {qtype}; expected one of "
                                  f"{', '.join(map(str, sorted(allowed)))}")
    return qtype


class MachineReadingComprehension(TaskType):
    slug = "mrc"
    klue_name = "KLUE-MRC"
    title = gettext_noop("Machine reading comprehension")
    order = 7
    text_fields = ("title", "context", "question")
    span_fields = (
        SpanField("annotation", "answer", "context", "start", quote="text"),
        SpanField("annotation", "plausible", "context", "start", quote="text"),
        SpanField("meta", "answers[]", "context", "answer_start", quote="text"),
        SpanField("meta", "plausible_answers[]", "context", "answer_start", quote="text"),
    )
    csv_columns = ("title", "context")
    klue_file = KlueFile("klue-mrc", "json", SQUAD)
    standard_formats = ("squad",)
    widget = "annotation/widgets/mrc.js"
    widget_styles = "annotation/widgets/mrc.css"

    def widget_strings(self) -> dict[str, str]:
        from django.utils.translation import gettext as _

        return {
            "mrc_passage": _("Passage"),
            "mrc_question": _("Question"),
            "mrc_question_type": _("Question type"),
            "mrc_write_instruction": _("Write a question about the passage, pick its type and select the answer in "
                                       "the passage."),
            "mrc_validate_instruction": _("Select the answer to the question in the passage, or mark it "
                                          "unanswerable."),
            "mrc_key_select": _("move in the passage / extend the selection"),
            "mrc_key_answer": _("use the selection as the answer (the plausible answer for type 3)"),
            "mrc_key_types": _("question type"),
            "mrc_key_unanswerable": _("unanswerable"),
            "mrc_answer": _("Answer"),
            "mrc_plausible": _("Plausible answer"),
            "mrc_unanswerable": _("Unanswerable"),
            "mrc_need_question": _("write a question"),
            "mrc_need_type": _("choose the question type"),
            "mrc_need_answer": _("select the answer in the passage"),
            "mrc_need_plausible": _("select the plausible (tempting but wrong) answer in the passage"),
            "mrc_need_answer_or_unanswerable": _("select the answer, or mark the question unanswerable"),
        }

    def agreement_measure(self) -> Any:
        from annotation.agreement.measures.answers import AnswerMeasure

        return AnswerMeasure()

    def gold_rule(self) -> Any:
        from annotation.gold.rules import ExactMajorityRule

        return ExactMajorityRule(("answer",))

    def flat_schema(self) -> Any:
        from exports.writers.flat import BOOL, INT, INTS, STRINGS, FlatSchema, column

        return FlatSchema((
            column("guid"), column("title"), column("news_category"), column("source"), column("context"),
            column("question"), column("question_type", INT), column("is_impossible", BOOL),
            column("answer_texts", STRINGS, "answers.*.text"), column("answer_starts", INTS, "answers.*.answer_start"),
            column("plausible_answer_texts", STRINGS, "plausible_answers.*.text"),
            column("plausible_answer_starts", INTS, "plausible_answers.*.answer_start"),
        ), stratify="question_type", hf_categories=("question-answering",), hf_task_ids=("extractive-qa",))

    def metrics(self) -> Any:
        from exports.baselines.bootstrap import mrc_stats
        from exports.metrics import TaskMetrics
        from exports.metrics.mrc import score_mrc

        return TaskMetrics(self.slug, score_mrc, ("exact_match", "rouge_w"), ("rouge_w_lcs",), "rouge_w", mrc_stats,
                           answer_map=True)

    def baseline(self) -> Any:
        from exports.baselines.mrc import BASELINE

        return BASELINE

    def suggestion_payload(self, record: dict[str, Any], item: dict[str, Any], schema: dict[str, Any]
                           ) -> dict[str, Any]:
        """The predicted answer text, placed where it first occurs in the context (none when it does not)."""
        text = record.get("answer") or ""
        start = item.get("context", "").find(text) if text else -1
        return {"answer": {"text": text, "start": start} if start >= 0 else None}
    # Only the question moves into the item: the answer (and type 3 = unanswerable) would give it away.
    stages = (
        Stage(WRITING, gettext_noop("Write a question"), annotators=1, produces=(("question", "question"),)),
        Stage(VALIDATION, gettext_noop("Answer the question")),
    )

    def synthetic_record(self, rng: random.Random, n: int) -> dict[str, Any]:
        """Three people's home towns and a question on one of them; three in ten ask about someone absent."""
        people = rng.sample(PEOPLE, 3)
        places = rng.sample(PLACES, 3)
        context = " ".join(f"{person}의 고향은 {place}이다." for person, place in zip(people, places, strict=True))
        answerable = rng.random() < 0.7
        asked = rng.randrange(3)
        person = people[asked] if answerable else rng.choice([p for p in PEOPLE if p not in people])
        lead = f"{people[asked]}의 고향은 "
        answers = [{"text": places[asked], "answer_start": context.index(lead) + len(lead)}]
        return {"guid": f"klue-mrc-v1_train_{n:05d}", "title": f"인물 {n}", "context": context,
                "question": f"{person}의 고향은 어디인가?", "answers": answers if answerable else [],
                "plausible_answers": [] if answerable else answers, "is_impossible": not answerable,
                "question_type": 1 if answerable else 3}

    def default_schema(self) -> dict[str, Any]:
        return {"question_types": dict(QUESTION_TYPES), LABEL_NAMES: self.default_label_names()}

    def default_label_names(self) -> Names:
        return copy_names(NAMES)

    def label_values(self, schema: dict[str, Any]) -> list[str]:
        types = schema.get("question_types")
        return [str(key) for key in types] if isinstance(types, dict) else []

    def guideline_template(self) -> GuidelineTemplate:
        return GuidelineTemplate(instructions=INSTRUCTIONS, ethics=ETHICS, pii=PII)

    def validate_item(self, payload: Any) -> dict[str, Any]:
        payload = require_dict(payload)
        question = payload.get("question")
        qtype = payload.get("question_type")
        return keep_extra(payload, {
            "title": str_field(payload, "title"),
            "context": str_field(payload, "context"),
            "question": None if question is None else require_str(question, "question"),
            "question_type": None if qtype is None else _question_type(qtype, "question_type", {1, 2, 3}),
            "news_category": optional_str(payload, "news_category"),
            "source": optional_str(payload, "source"),
        })

    def validate_annotation(
        self, payload: Any, *, item: dict[str, Any], schema: dict[str, Any], stage: str
    ) -> dict[str, Any]:
        self.stage(stage)
        payload = require_dict(payload)
        context = str(item.get("context", ""))
        if stage == VALIDATION:
            if not item.get("question"):
                raise PayloadError("item.question", "this passage has no question yet; it cannot be answered")
            return {"answer": _span(context, get(payload, "answer"), "answer")}

        question = require_str(get(payload, "question"), "question").strip()
        allowed = {int(k) for k in schema.get("question_types", QUESTION_TYPES)}
        qtype = _question_type(get(payload, "question_type"), "question_type", allowed)
        answer = _span(context, payload.get("answer"), "answer")
        plausible = _span(context, payload.get("plausible"), "plausible")
        if qtype == UNANSWERABLE:
            if answer is not None:
                raise PayloadError("answer", "an unanswerable question (type 3) must have answer null; "
                                             "mark the tempting span as plausible instead")
        else:
            if answer is None:
                raise PayloadError("answer", f"a type {qtype} question needs an answer span from the context")
            if plausible is not None:
                raise PayloadError("plausible",
                                   "only unanswerable questions (type 3) have a plausible answer")
        return {"question": question, "question_type": qtype, "answer": answer, "plausible": plausible}

    def validate_carried(self, meta: dict[str, Any], *, item: dict[str, Any], schema: dict[str, Any]) -> None:
        """Every kept SQuAD answer and plausible answer quotes the context at its ``answer_start`` (the writing
        annotation holds the first one only), and ``is_impossible`` agrees with the type and the answers:
        the release writes these lists back as they came."""
        context = item["context"]
        answers = [_quoted(context, a, join("answers", i))
                   for i, a in enumerate(require_list(meta.get("answers") or [], "answers"))]
        plausible = [_quoted(context, a, join("plausible_answers", i))
                     for i, a in enumerate(require_list(meta.get("plausible_answers") or [], "plausible_answers"))]
        impossible = meta.get("is_impossible")
        if impossible is not None and not isinstance(impossible, bool):
            raise PayloadError("is_impossible", f"must be true or false, got {impossible!r}")
        qtype = meta.get("question_type")
        if impossible is not None and isinstance(qtype, int) and impossible != (qtype == UNANSWERABLE):
            raise PayloadError("is_impossible", f"is {str(impossible).lower()} but question_type is {qtype}; only "
                                                f"type {UNANSWERABLE} questions are unanswerable")
        if impossible is None and qtype is None:
            return
        if impossible or qtype == UNANSWERABLE:
            if answers:
                raise PayloadError("answers", "an unanswerable question has no answers; the tempting span "
                                              "belongs in plausible_answers")
        else:
            if not answers and item.get("question"):
                raise PayloadError("answers", "an answerable question needs at least one answer from the context")
            if plausible:
                raise PayloadError("plausible_answers", "only unanswerable questions (type 3) have plausible answers")

    def parse_record(self, record: dict[str, Any]) -> ParsedRecord:
        """One question with its passage (the SQuAD nesting flattened by the reader)."""
        record = require_dict(record)
        guid = external_id(record)
        title, context = str_field(record, "title"), str_field(record, "context")
        payload: dict[str, Any] = {"title": title, "context": context}
        annotations: list[RecordAnnotation] = []
        question = record.get("question")
        if question is not None:
            # The question is the writing stage's output, so an imported item goes straight to validation.
            payload["question"] = require_str(question, "question")
            answers = [_from_squad(a, join("answers", i))
                       for i, a in enumerate(require_list(record.get("answers") or [], "answers"))]
            plausible = [_from_squad(a, join("plausible_answers", i))
                         for i, a in enumerate(require_list(record.get("plausible_answers") or [],
                                                            "plausible_answers"))]
            qtype = record.get("question_type")
            if qtype is not None:
                annotations.append(RecordAnnotation(CORPUS, WRITING, {
                    "question": question, "question_type": qtype,
                    "answer": answers[0] if answers else None, "plausible": plausible[0] if plausible else None,
                }))
        return ParsedRecord(
            external_id=guid,
            payload=payload,
            # All answers stay in meta (the writing annotation holds only the first) for an exact export.
            meta=rest(record, ("guid", "title", "context", "question")),
            split=split_from_guid(guid),
            group_key=text_key(title, context),
            annotations=annotations,
        )

    def build_record(
        self, *, external_id: str, payload: dict[str, Any], meta: dict[str, Any],
        annotations: list[RecordAnnotation], gold: dict[str, Any] | None,
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {"title": payload["title"], "context": payload["context"], "guid": external_id}
        writing = first_payload(annotations, WRITING)
        question = payload.get("question") or (writing or {}).get("question")
        if question is not None:
            fields["question"] = question
        if writing is not None:
            fields["question_type"] = writing["question_type"]
            fields["is_impossible"] = writing["question_type"] == UNANSWERABLE
            # The gold answer leads; kept answers win while they still start with it (import, then export).
            primary = gold["answer"] if gold is not None and "answer" in gold else writing.get("answer")
            fields["answers"] = _keep_or(meta.get("answers"), primary, [
                primary, writing.get("answer"), *(a.payload.get("answer") for a in individual(annotations, VALIDATION)),
            ])
            plausible = _keep_or(meta.get("plausible_answers"), writing.get("plausible"), [writing.get("plausible")])
            if plausible or "plausible_answers" in meta:
                fields["plausible_answers"] = plausible
        return ordered(RECORD_ORDER, fields, meta)


def _from_squad(raw: Any, field: str) -> dict[str, Any]:
    span = require_dict(raw, field)
    return {"text": str_field(span, "text", field), "start": require_int(get(span, "answer_start", field),
                                                                         join(field, "answer_start"), lo=0)}


def _quoted(context: str, raw: Any, field: str) -> dict[str, Any]:
    """A SQuAD answer that must be exactly what the context holds at its ``answer_start``."""
    span = _from_squad(raw, field)
    if span["start"] + len(span["text"]) > len(context):
        raise PayloadError(join(field, "answer_start"), f"{span['start']} + {len(span['text'])} characters runs past "
                                                        f"the end of the context (length {len(context)})")
    check_quoted(context, span["text"], span["start"], join(field, "text"), text_name="context")
    return span


def _keep_or(kept: Any, first: dict[str, Any] | None, spans: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """The kept SQuAD answer list when it still starts with ``first``; else the distinct ``spans``."""
    if isinstance(kept, list) and (_from_squad(kept[0], "answers[0]") if kept else None) == first:
        return kept
    result: list[dict[str, Any]] = []
    for span in spans:
        entry = None if span is None else {"text": span["text"], "answer_start": span["start"]}
        if entry is not None and entry not in result:
            result.append(entry)
    return result


TASK_TYPE = MachineReadingComprehension()
