"""Semantic textual similarity of sentence pairs (KLUE-STS)."""

from __future__ import annotations

import math
import random
from typing import Any

from django.utils.translation import gettext_noop

from ._common import (
    get,
    join,
    keep_extra,
    optional_str,
    require_dict,
    require_list,
    require_number,
    require_str,
    str_field,
)
from ._records import CORPUS, external_id, individual, ordered, rest, split_from_guid
from ._synthetic import FILLER, NOUNS, ORGS, PEOPLE, PLACES
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

#: The guideline's meaning of each whole score (its "점수 기준").
NAMES: Names = {
    "0": {"ko": "공유하는 의미 없음", "en": "nothing in common"},
    "1": {"ko": "주제만 같음", "en": "same topic only"},
    "2": {"ko": "일부 정보만 겹침", "en": "some information shared"},
    "3": {"ko": "대체로 같음", "en": "roughly the same"},
    "4": {"ko": "핵심 의미가 같음", "en": "same core meaning"},
    "5": {"ko": "의미가 같음", "en": "same meaning"},
}
#: KLUE's ``binary-label``: 1 when the mean score is at least this.
BINARY_THRESHOLD = 3.0

INSTRUCTIONS = """\
## 작업 개요
두 문장이 **같은 의미를 얼마나 공유하는지** 0점에서 5점 사이의 점수로 매깁니다.
문장의 형태(어순, 조사, 띄어쓰기)가 아니라 전달하는 **내용**을 비교합니다.

## 점수 기준
- **5점**: 의미가 완전히 같습니다. 표현만 다릅니다.
- **4점**: 핵심 의미가 같고, 중요하지 않은 세부 정보만 다릅니다.
- **3점**: 대체로 같지만 중요한 정보 하나가 빠졌거나 다릅니다.
- **2점**: 일부 정보만 겹치고 핵심 의미는 다릅니다.
- **1점**: 주제는 같지만 말하는 내용이 다릅니다.
- **0점**: 주제부터 다르며 공유하는 의미가 없습니다.
프로젝트에서 0.5점 단위를 허용한 경우에만 중간 점수를 씁니다.

## 예시
- "무엇보다도 호스트분들이 너무 친절하셨습니다." / "무엇보다도, 호스트들은 매우 친절했습니다." → **5점**
- "주요 관광지 모두 걸어서 이동가능합니다." / "위치는 피렌체 중심가까지 걸어서 이동 가능합니다." → **1~2점**
  (둘 다 도보 이동을 말하지만 대상이 다릅니다.)
- "숙소가 역에서 가깝고 깨끗했어요." / "역과 가까웠지만 청소 상태는 별로였어요." → **2점**
  (위치는 같고 청결도는 반대입니다.)
- "회의는 오후 3시에 시작합니다." / "오늘 날씨가 맑습니다." → **0점**

## 헷갈리는 경우
- 한 문장이 다른 문장을 완전히 포함하면서 정보가 더 많으면 빠진 정보의 중요도에 따라 3~4점입니다.
- 부정("친절했다" / "친절하지 않았다")은 겉모양이 비슷해도 의미가 반대이므로 낮은 점수를 줍니다.
- 번역투나 맞춤법 오류는 점수에 반영하지 않습니다. 의미가 이해되면 그 의미로 비교합니다.
- 숫자, 날짜, 장소가 다르면 중요한 정보가 다른 것입니다.
- 문장이 깨져 의미를 알 수 없으면 점수를 주지 말고 신고를 남긴 뒤 건너뜁니다.
- 다른 작업자의 점수는 볼 수 없습니다. 평균을 맞추려 하지 말고 각자 판단한 점수를 주세요.
"""

ETHICS = """\
## 윤리 지침
- 문장에 나온 사람이나 집단에 대한 호감·비호감을 점수에 섞지 않습니다. 의미의 유사도만 봅니다.
- 리뷰·대화 문장에 혐오 표현, 특정 집단에 대한 고정관념, 성적·폭력적 내용이 있으면 점수를 매기지 말고
  **"유해·혐오 표현" 신고**를 남긴 뒤 건너뜁니다.
- 문장에서 작성자의 성별·나이·출신 같은 민감한 속성을 추측하지 않습니다.
- 작업이 불편하면 언제든 멈추고 관리자에게 알릴 수 있습니다.
"""

PII = """\
## 개인정보 지침
- 이 작업의 문장은 숙소 리뷰, 정책 게시글, 대화 등에서 왔습니다. 개인정보는 일반인의 이름,
  연락처, 주소, 계정 아이디, 예약 번호처럼 한 사람을 알아볼 수 있는 정보입니다.
- 식별자는 작업 전에 `[이름1]`, `[전화번호1]`처럼 **유형이 붙은 자리표시자**로 미리 바뀌어 있습니다.
  두 문장의 자리표시자가 같으면 같은 대상을 가리키는 것으로 보고 비교합니다.
- 바뀌지 않은 개인정보를 발견하면 그 값을 어디에도 **옮겨 적지 말고** "개인정보" 신고만 남기세요.
- 뉴스나 공식 발표에 나오는 **공인**의 이름은 개인정보로 보지 않습니다.
"""


class SemanticTextualSimilarity(TaskType):
    slug = "sts"
    klue_name = "KLUE-STS"
    title = gettext_noop("Semantic textual similarity")
    order = 2
    text_fields = ("sentence1", "sentence2")
    span_fields = ()
    csv_columns = ("sentence1", "sentence2")
    klue_file = KlueFile("klue-sts", "json", newline="\r\n")
    widget = "annotation/widgets/sts.js"
    widget_styles = "annotation/widgets/sts.css"

    def widget_strings(self) -> dict[str, str]:
        from django.utils.translation import gettext as _

        return {
            "sts_group": _("Similarity score"),
            "sts_instruction": _("How similar are the meanings of the two sentences? 0 = unrelated, 5 = the same."),
            "sts_sentence1": _("Sentence 1"),
            "sts_sentence2": _("Sentence 2"),
            "sts_key_digits": _("set the score"),
            "sts_key_half": _("add half a point"),
            "sts_key_arrows": _("one step down / up"),
            "sts_need_score": _("choose a score"),
        }

    def agreement_measure(self) -> Any:
        from annotation.agreement.measures.scores import ScoreMeasure

        return ScoreMeasure()

    def gold_rule(self) -> Any:
        from annotation.gold.rules import MeanRule

        return MeanRule()

    def flat_schema(self) -> Any:
        from exports.writers.flat import FLOAT, FLOATS, INT, STRING, STRINGS, FlatSchema, column

        return FlatSchema((
            column("guid"), column("source"), column("sentence1"), column("sentence2"),
            column("label", FLOAT, "labels.label"), column("real_label", FLOAT, "labels.real-label"),
            column("binary_label", INT, "labels.binary-label"),
            column("agreement", STRING, "annotations.agreement"),
            column("annotators", STRINGS, "annotations.annotators"),
            column("scores", FLOATS, "annotations.annotations"),
        ), stratify="labels.binary-label", hf_categories=("sentence-similarity",),
            hf_task_ids=("semantic-similarity-scoring",))

    def metrics(self) -> Any:
        from exports.baselines.bootstrap import sts_stats
        from exports.metrics import TaskMetrics
        from exports.metrics.classification import score_sts

        return TaskMetrics(self.slug, score_sts, ("pearsonr", "f1"), (), "pearsonr", sts_stats)

    def baseline(self) -> Any:
        from exports.baselines.text import STS_BASELINE

        return STS_BASELINE

    def suggestion_payload(self, record: dict[str, Any], item: dict[str, Any], schema: dict[str, Any]
                           ) -> dict[str, Any]:
        """The predicted real-valued score on the project's scale and step."""
        low, high = float(schema.get("min", 0)), float(schema.get("max", 5))
        step = float(schema.get("step", 1) or 0)
        value = float(record["labels"]["real-label"])
        if step > 0:
            value = low + round((value - low) / step) * step
        value = min(high, max(low, value))
        return {"score": int(value) if float(value).is_integer() else round(value, 6)}

    def synthetic_record(self, rng: random.Random, n: int) -> dict[str, Any]:
        """Eight words and a copy with some replaced: the fewer replaced, the higher the score."""
        words = rng.sample(NOUNS + FILLER + PLACES, 8)
        changed = rng.randint(0, 8)
        other = list(words)
        for i in rng.sample(range(8), changed):
            other[i] = rng.choice(ORGS + PEOPLE)
        value = round(min(5.0, max(0.0, 5.0 * (1 - changed / 8) + rng.uniform(-0.4, 0.4))), 2)
        return {"guid": f"klue-sts-v1_train_{n:05d}", "sentence1": " ".join(words), "sentence2": " ".join(other),
                "labels": {"label": round(value, 1), "real-label": value, "binary-label": int(value >= 3.0)}}

    def default_schema(self) -> dict[str, Any]:
        # KLUE collected integer scores; a project may set step 0.5 for finer judgements.
        return {"min": 0, "max": 5, "step": 1, LABEL_NAMES: self.default_label_names()}

    def default_label_names(self) -> Names:
        return copy_names(NAMES)

    def label_values(self, schema: dict[str, Any]) -> list[str]:
        # The whole scores of the range: a half-point grid's in-between scores carry no name of their own.
        low, high = schema.get("min", 0), schema.get("max", 5)
        if isinstance(low, bool) or isinstance(high, bool) or not isinstance(low, int | float) \
                or not isinstance(high, int | float):
            return []
        return [str(score) for score in range(math.ceil(low), math.floor(high) + 1)]

    def guideline_template(self) -> GuidelineTemplate:
        return GuidelineTemplate(instructions=INSTRUCTIONS, ethics=ETHICS, pii=PII)

    def validate_item(self, payload: Any) -> dict[str, Any]:
        payload = require_dict(payload)
        return keep_extra(payload, {
            "sentence1": str_field(payload, "sentence1"),
            "sentence2": str_field(payload, "sentence2"),
            "source": optional_str(payload, "source"),
        })

    def validate_annotation(
        self, payload: Any, *, item: dict[str, Any], schema: dict[str, Any], stage: str
    ) -> dict[str, Any]:
        self.stage(stage)
        payload = require_dict(payload)
        score = require_number(get(payload, "score"), "score")
        low = require_number(schema.get("min", 0), "schema.min")
        high = require_number(schema.get("max", 5), "schema.max")
        step = require_number(schema.get("step", 1), "schema.step")
        if not low <= score <= high:
            raise PayloadError("score", f"{score} is outside {low}..{high}")
        if step > 0:
            steps = (score - low) / step
            # Tolerance, because 0.1-style steps are not exact in binary floating point.
            if not math.isclose(steps, round(steps), abs_tol=1e-9):
                raise PayloadError("score", f"{score} is not on the {step}-point grid from {low}")
        return {"score": score}

    def validate_carried(self, meta: dict[str, Any], *, item: dict[str, Any], schema: dict[str, Any]) -> None:
        """KLUE's ``labels``: scores inside the schema's range, ``label`` = ``real-label`` rounded to one
        decimal, ``binary-label`` = ``real-label`` ≥ 3.0. They are written back as they came while the raters'
        mean is unchanged, so a broken triple would reach a release."""
        labels = meta.get("labels")
        if labels is None:
            return
        labels = require_dict(labels, "labels")
        low = require_number(schema.get("min", 0), "schema.min")
        high = require_number(schema.get("max", 5), "schema.max")
        scores: dict[str, float] = {}
        for key in ("real-label", "label"):
            if key in labels:
                value = require_number(labels[key], join("labels", key))
                if not low <= value <= high:
                    raise PayloadError(join("labels", key), f"{value} is outside {low}..{high}")
                scores[key] = value
        real = scores.get("real-label")
        if real is not None and "label" in scores:
            # KLUE rounds half up (4.85 -> 4.9); Python's round() rounds half to even: either is KLUE's label.
            expected = {round(real, 1), math.floor(real * 10 + 0.5 + 1e-9) / 10}
            if not any(math.isclose(scores["label"], e, abs_tol=1e-9) for e in expected):
                raise PayloadError("labels.label", f"{scores['label']} is not labels.real-label {real} rounded to one "
                                                   f"decimal ({max(expected)})")
        if "binary-label" in labels:
            binary = labels["binary-label"]
            if isinstance(binary, bool) or binary not in (0, 1):
                raise PayloadError("labels.binary-label", f"must be 0 or 1, got {binary!r}")
            basis = real if real is not None else scores.get("label")
            expected_binary = None if basis is None else int(basis >= BINARY_THRESHOLD)
            if expected_binary is not None and binary != expected_binary:
                name = "labels.real-label" if real is not None else "labels.label"
                side = "at or above" if expected_binary else "below"
                raise PayloadError("labels.binary-label", f"is {binary} but {name} {basis} is {side} the threshold "
                                                          f"{BINARY_THRESHOLD:g} (expected {expected_binary})")

    def parse_record(self, record: dict[str, Any]) -> ParsedRecord:
        record = require_dict(record)
        guid = external_id(record)
        block = record.get("annotations")
        labels = record.get("labels")
        annotations: list[RecordAnnotation] = []
        if block is not None:
            block = require_dict(block, "annotations")
            annotators = require_list(get(block, "annotators", "annotations"), "annotations.annotators")
            scores = require_list(get(block, "annotations", "annotations"), "annotations.annotations")
            if len(scores) != len(annotators):
                raise PayloadError("annotations.annotations",
                                   f"has {len(scores)} scores for {len(annotators)} annotators")
            annotations = [
                RecordAnnotation(require_str(a, join("annotations.annotators", i)), LABEL_STAGE,
                                 {"score": require_number(s, join("annotations.annotations", i))})
                for i, (a, s) in enumerate(zip(annotators, scores, strict=True))
            ]
        elif labels is not None:
            real = get(require_dict(labels, "labels"), "real-label", "labels")
            annotations = [RecordAnnotation(CORPUS, LABEL_STAGE, {"score": require_number(real, "labels.real-label")})]
        return ParsedRecord(
            external_id=guid,
            payload={"sentence1": str_field(record, "sentence1"), "sentence2": str_field(record, "sentence2")},
            # The agreement string is recomputed from the scores on export, so it is not kept.
            meta=rest(record, ("guid", "sentence1", "sentence2", "annotations")),
            split=split_from_guid(guid),
            annotations=annotations,
        )

    def build_record(
        self, *, external_id: str, payload: dict[str, Any], meta: dict[str, Any],
        annotations: list[RecordAnnotation], gold: dict[str, Any] | None,
    ) -> dict[str, Any]:
        raters = individual(annotations)
        scores = [_plain_number(a.payload["score"]) for a in raters]
        original = meta.get("labels")
        if gold is not None:
            real = gold["score"]
        elif scores:
            real = sum(scores) / len(scores)
        elif original is not None:
            real = original["real-label"]
        else:
            real = next((a.payload["score"] for a in annotations), None)
        fields: dict[str, Any] = {"guid": external_id, **payload}
        if real is not None:
            # KLUE's own means differ from Python's in the last digit for a third of the pairs: an unchanged
            # mean keeps the original numbers, so an imported file is given back byte for byte.
            if isinstance(original, dict) and math.isclose(original.get("real-label", math.nan), real,
                                                           rel_tol=1e-9, abs_tol=1e-12):
                fields["labels"] = original
            else:
                # A gold payload may carry its own rounding and threshold (the gold rule's); else KLUE's.
                gold = gold or {}
                fields["labels"] = {"label": gold.get("label", round(real, 1)), "real-label": real,
                                    "binary-label": gold.get("binary_label", int(real >= BINARY_THRESHOLD))}
        if raters:
            fields["annotations"] = {"agreement": agreement(scores), "annotators": [a.annotator for a in raters],
                                     "annotations": scores}
        return ordered(("guid", "source", "sentence1", "sentence2", "labels", "annotations"), fields, meta)


def agreement(scores: list[int | float]) -> str:
    """KLUE's ``agreement``: how many scores fell on 0, 1, …, 5, joined by ``:`` (half points count down)."""
    counts = [0] * 6
    for score in scores:
        counts[min(5, max(0, int(score)))] += 1
    return ":".join(map(str, counts))


def _plain_number(score: int | float) -> int | float:
    """4.0 -> 4: KLUE writes whole scores as integers."""
    return int(score) if isinstance(score, float) and score.is_integer() else score


TASK_TYPE = SemanticTextualSimilarity()
