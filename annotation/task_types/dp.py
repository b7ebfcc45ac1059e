"""Dependency parsing over eojeol (KLUE-DP): one head and one DEPREL per eojeol."""

from __future__ import annotations

import random
from typing import Any

from django.utils.translation import gettext_noop

from ._common import (
    get,
    join,
    keep_extra,
    require_choice,
    require_dict,
    require_int,
    require_list,
    schema_list,
    str_field,
)
from ._records import CORPUS, external_id, first_payload, ordered, rest, split_from_guid
from ._synthetic import NOUNS, PEOPLE, VERBS
from .base import (
    EOJEOL_TSV,
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

#: The Hugging Face klue/dp columns (one list per column, one entry per eojeol), as the TSV reader yields.
TOKEN_COLUMNS = ("index", "word_form", "lemma", "pos")
LABEL_COLUMNS = ("head", "deprel")
RECORD_ORDER = ("guid", "source", "sentence", *TOKEN_COLUMNS, *LABEL_COLUMNS)

#: The official label list, in the order the KLUE baseline indexes it (its "others" pooling depends on it).
DEPRELS = [
    "NP", "NP_AJT", "VP", "NP_SBJ", "VP_MOD", "NP_OBJ", "AP", "NP_CNJ", "NP_MOD", "VNP", "DP", "VP_AJT",
    "VNP_MOD", "NP_CMP", "VP_SBJ", "VP_CMP", "VP_OBJ", "VNP_CMP", "AP_MOD", "X_AJT", "VP_CNJ", "VNP_AJT",
    "IP", "X", "X_SBJ", "VNP_OBJ", "VNP_SBJ", "X_OBJ", "AP_AJT", "L", "X_MOD", "X_CNJ", "VNP_CNJ", "X_CMP",
    "AP_CMP", "AP_SBJ", "R", "NP_SVJ",
]
PHRASE_TAGS = {
    "NP": "체언구", "VP": "용언구", "AP": "부사구", "VNP": "긍정지정사구", "DP": "관형사구", "IP": "감탄사구",
    "X": "의사구", "L": "왼쪽 부호", "R": "오른쪽 부호",
}
FUNCTIONS = {
    "SBJ": "주어", "OBJ": "목적어", "MOD": "관형어(체언 수식)", "AJT": "부사어(용언 수식)", "CMP": "보어",
    "CNJ": "접속",
}
PHRASE_TAGS_EN = {
    "NP": "noun phrase", "VP": "verb phrase", "AP": "adverb phrase", "VNP": "copula phrase",
    "DP": "determiner phrase", "IP": "interjection phrase", "X": "pseudo phrase", "L": "left bracket",
    "R": "right bracket",
}
FUNCTIONS_EN = {"SBJ": "subject", "OBJ": "object", "MOD": "noun modifier", "AJT": "adjunct", "CMP": "complement",
                "CNJ": "conjunct"}


def _deprel_names(deprel: str) -> dict[str, str]:
    """A DEPREL's name from its phrase tag and function (``NP_SBJ``: 체언구·주어). A function the guideline
    does not describe (KLUE's ``SVJ``) keeps its tag."""
    phrase, _, function = deprel.partition("_")
    if not function:
        return {"ko": PHRASE_TAGS[phrase], "en": PHRASE_TAGS_EN[phrase]}
    return {"ko": f"{PHRASE_TAGS[phrase]}·{FUNCTIONS.get(function, function)}",
            "en": f"{PHRASE_TAGS_EN[phrase]}, {FUNCTIONS_EN.get(function, function)}"}


NAMES: Names = {deprel: _deprel_names(deprel) for deprel in DEPRELS}

INSTRUCTIONS = """\
## 작업 개요
문장이 **어절**(띄어쓰기 단위)로 나뉘어 보입니다. 각 어절마다 두 가지를 정합니다.
1. **지배소(head)**: 이 어절이 꾸미거나 의존하는 어절의 번호. 문장 전체의 중심 어절(보통 마지막
   서술어)은 지배소가 없으므로 `0`(root)을 고릅니다.
2. **의존 관계(DEPREL)**: 구문 태그와 기능 태그를 `_`로 이은 라벨. 예: `NP_SBJ`(체언구·주어).
   - 구문 태그: `NP` 체언, `VP` 용언, `AP` 부사, `VNP` 긍정지정사(이다), `DP` 관형사, `IP` 감탄사,
     `X` 의사구, `L`/`R` 왼쪽·오른쪽 부호
   - 기능 태그: `SBJ` 주어, `OBJ` 목적어, `MOD` 체언 수식, `AJT` 용언 수식, `CMP` 보어, `CNJ` 접속

## 규칙
- 한국어는 지배소 후행 언어입니다. 지배소는 거의 항상 **오른쪽**에 있습니다.
- root는 문장마다 **정확히 하나**입니다.
- 자기 자신을 지배소로 고를 수 없고, 지배 관계가 **순환**해서도 안 됩니다(3→5, 5→3 금지).

## 예시: "'K팝스타3’ 유희열이 홍정희의 탈락에 눈물을 흘렸다."
| 번호 | 어절 | 지배소 | 관계 |
|---|---|---|---|
| 1 | 'K팝스타3’ | 2 | NP |
| 2 | 유희열이 | 6 | NP_SBJ |
| 3 | 홍정희의 | 4 | NP_MOD |
| 4 | 탈락에 | 6 | NP_AJT |
| 5 | 눈물을 | 6 | NP_OBJ |
| 6 | 흘렸다. | 0 | VP |

## 헷갈리는 경우
- 보조 용언 구성("깨져 버려")은 앞 본용언이 뒤 보조 용언을 지배소로 삼고 `VP`를 붙입니다.
- 접속 구성("최씨와 김씨가")은 앞 항이 뒤 항을 지배소로 삼고 `NP_CNJ`를 붙입니다.
- 관형사형 어미로 끝나는 용언("공정한 수사")은 `VP_MOD`입니다.
- 따옴표나 괄호만 있는 어절은 `L`/`R`로 표시합니다.
- 어절 분리가 잘못되어 판단할 수 없으면 신고를 남기고 건너뜁니다.
"""

ETHICS = """\
## 윤리 지침
- 구문 분석은 문장의 구조만 다룹니다. 문장 속 인물이나 집단에 대한 평가를 메모에 남기지 않습니다.
- 혐오 표현, 특정 집단에 대한 고정관념, 폭력적·선정적 내용이 담긴 문장은 분석을 멈추고
  **"유해·혐오 표현" 신고**를 남긴 뒤 건너뜁니다. 관리자가 데이터셋에서 뺄지 결정합니다.
- 불편한 내용은 언제든 건너뛸 수 있으며 불이익은 없습니다.
"""

PII = """\
## 개인정보 지침
- 문장은 뉴스와 위키백과 등에서 왔습니다. 개인정보는 **일반인**의 실명, 연락처, 주소,
  주민등록번호, 계좌번호처럼 한 사람을 알아볼 수 있는 정보입니다.
- 식별자는 작업 전에 `[이름1]`, `[전화번호1]`처럼 **유형이 붙은 자리표시자**로 바뀌어 있습니다.
  자리표시자가 든 어절도 보통 어절처럼 분석합니다(예: `[이름1]이`는 `NP_SBJ`).
- 바뀌지 않은 개인정보가 보이면 그 값을 메모에 **옮겨 적지 말고** "개인정보" 신고만 남기세요.
- 뉴스에 나오는 **공인**의 이름은 그대로 두어도 됩니다.
"""


def _find_cycle(heads: list[int]) -> list[int] | None:
    """The first cycle among 1-based tokens (``heads[i-1]`` is token i's head), as token numbers."""
    done: set[int] = set()
    for token in range(1, len(heads) + 1):
        path: list[int] = []
        on_path: set[int] = set()
        node = token
        while node != 0 and node not in done:
            if node in on_path:
                return path[path.index(node):]
            path.append(node)
            on_path.add(node)
            node = heads[node - 1]
        done.update(path)
    return None

#: DP records that carry these (KLUE TSV rows, or the Hugging Face layout) need no analyser.
_DP_COLUMNS = ("word_form", "tokens", "rows")


class DependencyParsing(TaskType):
    slug = "dp"
    klue_name = "KLUE-DP"
    title = gettext_noop("Dependency parsing")
    order = 6
    text_fields = ("sentence",)
    span_fields = ()
    csv_columns = ("sentence",)
    klue_file = KlueFile("klue-dp", "tsv", EOJEOL_TSV)
    standard_formats = ("conllu",)
    widget = "annotation/widgets/dp.js"
    widget_styles = "annotation/widgets/dp.css"
    label_list = "deprels"

    def widget_strings(self) -> dict[str, str]:
        from django.utils.translation import gettext as _

        return {
            "dp_instruction": _("For each eojeol choose its head (click the head token or type its number; 0 = root) "
                                "and its DEPREL."),
            "dp_token": _("Eojeol"),
            "dp_pos": _("POS"),
            "dp_head": _("Head"),
            "dp_deprel": _("DEPREL"),
            "dp_key_select": _("select the previous / next eojeol"),
            "dp_key_next": _("attach to the next eojeol"),
            "dp_key_root": _("make it the root"),
            "dp_key_head": _("type the head number"),
            "dp_key_deprel": _("type the DEPREL"),
            "dp_key_reset": _("attach every eojeol to the next one (head-final default)"),
            "dp_attach_next": _("Attach all to the next eojeol"),
            "dp_cycle": _("cycle through eojeol %(tokens)s"),
            "dp_roots": _("exactly one eojeol must be the root (head 0); now %(n)s"),
            "dp_bad_head": _("eojeol %(i)s: head must be a number from 0 to %(n)s, not itself"),
            "dp_bad_deprel": _("eojeol %(i)s: choose a DEPREL from the list"),
            "dp_root": _("root"),
            "dp_arcs": _("Dependency arcs, from each head to its dependents"),
            "dp_sentence": _("The sentence's eojeol and their arcs"),
        }

    def agreement_measure(self) -> Any:
        from annotation.agreement.measures.trees import TreeMeasure

        return TreeMeasure()

    def gold_rule(self) -> Any:
        from annotation.gold.rules import ExactMajorityRule

        return ExactMajorityRule(("heads", "deprels"))

    def flat_schema(self) -> Any:
        from exports.writers.flat import INTS, STRINGS, FlatSchema, column

        return FlatSchema((
            column("guid"), column("source"), column("sentence"), column("index", INTS),
            column("word_form", STRINGS), column("lemma", STRINGS), column("pos", STRINGS), column("head", INTS),
            column("deprel", STRINGS),
        ), hf_categories=("token-classification",), hf_task_ids=("parsing",))

    def metrics(self) -> Any:
        from exports.baselines.bootstrap import dp_stats
        from exports.metrics import TaskMetrics
        from exports.metrics.dp import score_dp

        return TaskMetrics(self.slug, score_dp, ("uas_macro_f1", "las_macro_f1"), ("uas", "las"), "uas", dp_stats)

    def baseline(self) -> Any:
        from exports.baselines.dp import BASELINE

        return BASELINE

    def suggestion_payload(self, record: dict[str, Any], item: dict[str, Any], schema: dict[str, Any]
                           ) -> dict[str, Any]:
        return {"heads": [int(h) for h in record["head"]], "deprels": [str(d) for d in record["deprel"]]}

    def synthetic_record(self, rng: random.Random, n: int) -> dict[str, Any]:
        """Subject, optional modifier chain, object, verb: a head-final tree with the verb as root."""
        name = rng.choice(PEOPLE)
        rows: list[tuple[str, str, str, str]] = [(name + "이", name + " 이", "NNP+JKS", "NP_SBJ")]
        for _ in range(rng.randint(0, 3)):
            noun = rng.choice(NOUNS)
            rows.append((noun + "의", f"{noun} 의", "NNG+JKG", "NP_MOD"))
        noun = rng.choice(NOUNS)
        rows.append((noun + "을", f"{noun} 을", "NNG+JKO", "NP_OBJ"))
        stem, past = rng.choice(VERBS)
        rows.append((past, f"{stem} 었 다 .", "VV+EP+EF+SF", "VP"))
        last = len(rows)
        heads = [last] + [i + 2 for i in range(1, last - 1)] + [0]
        return {"guid": f"klue-dp-v1_train_{n:05d}", "sentence": " ".join(r[0] for r in rows),
                "index": list(range(1, last + 1)), "word_form": [r[0] for r in rows],
                "lemma": [r[1] for r in rows], "pos": [r[2] for r in rows], "head": heads,
                "deprel": [r[3] for r in rows]}

    def complete_record(self, record: dict[str, Any]) -> dict[str, Any]:
        """A raw sentence gets the eojeol columns KLUE-DP has, so annotators start from the same columns."""
        if any(k in record for k in _DP_COLUMNS) or not isinstance(record.get("sentence"), str) or not (
                record["sentence"].strip()):
            return record
        from datasets_build import morph

        return {**record, **morph.analyse_sentence(record["sentence"])}

    def default_schema(self) -> dict[str, Any]:
        return {"deprels": list(DEPRELS), "phrase_tags": dict(PHRASE_TAGS), "functions": dict(FUNCTIONS),
                LABEL_NAMES: self.default_label_names()}

    def default_label_names(self) -> Names:
        return copy_names(NAMES)

    def guideline_template(self) -> GuidelineTemplate:
        return GuidelineTemplate(instructions=INSTRUCTIONS, ethics=ETHICS, pii=PII)

    def validate_item(self, payload: Any) -> dict[str, Any]:
        payload = require_dict(payload)
        tokens = []
        for i, raw in enumerate(require_list(get(payload, "tokens"), "tokens", non_empty=True)):
            field = join("tokens", i)
            token = require_dict(raw, field)
            index = require_int(get(token, "index", field), join(field, "index"))
            if index != i + 1:
                raise PayloadError(join(field, "index"),
                                   f"is {index}; token indices must run 1, 2, … in order (expected {i + 1})")
            tokens.append({**token, "index": index, "form": str_field(token, "form", field),
                           "lemma": str_field(token, "lemma", field), "pos": str_field(token, "pos", field)})
        # The sentence is not required to equal the joined forms: KLUE itself has a few mismatches.
        return keep_extra(payload, {"sentence": str_field(payload, "sentence"), "tokens": tokens})

    def validate_annotation(
        self, payload: Any, *, item: dict[str, Any], schema: dict[str, Any], stage: str
    ) -> dict[str, Any]:
        self.stage(stage)
        payload = require_dict(payload)
        deprels_allowed = schema_list(schema, "deprels")
        n = len(item.get("tokens") or [])
        heads_raw = require_list(get(payload, "heads"), "heads")
        deprels_raw = require_list(get(payload, "deprels"), "deprels")
        for key, values in (("heads", heads_raw), ("deprels", deprels_raw)):
            if len(values) != n:
                raise PayloadError(key, f"has {len(values)} entries but the sentence has {n} eojeol")

        heads = [require_int(h, join("heads", i), lo=0, hi=n) for i, h in enumerate(heads_raw)]
        for i, head in enumerate(heads):
            if head == i + 1:
                raise PayloadError(join("heads", i), f"token {i + 1} cannot be its own head")
        roots = [i + 1 for i, head in enumerate(heads) if head == 0]
        if not roots:
            raise PayloadError("heads", "no root: exactly one token must have head 0")
        if len(roots) > 1:
            raise PayloadError("heads", f"{len(roots)} roots (tokens {', '.join(map(str, roots))}); "
                                        f"exactly one token must have head 0")
        cycle = _find_cycle(heads)
        if cycle:
            arrows = " → ".join(str(t) for t in [*cycle, cycle[0]])
            raise PayloadError("heads", f"cycle through tokens {arrows}; every token must reach the root")
        deprels = [require_choice(d, deprels_allowed, join("deprels", i), "DEPREL")
                   for i, d in enumerate(deprels_raw)]
        return {"heads": heads, "deprels": deprels}

    def suggestion_parts(self, suggested: dict[str, Any], annotated: dict[str, Any]) -> dict[str, Any]:
        """Per eojeol's arc: ``accepted`` when head and DEPREL are the suggested ones, else ``changed`` with
        what changed (``head``, ``deprel`` or both)."""
        parts = []
        for i, (head, deprel, new_head, new_deprel) in enumerate(zip(
                suggested.get("heads") or [], suggested.get("deprels") or [], annotated.get("heads") or [],
                annotated.get("deprels") or [], strict=False)):
            part: dict[str, Any] = {"token": i + 1, "head": head, "deprel": deprel}
            how = [name for name, same in (("head", head == new_head), ("deprel", deprel == new_deprel)) if not same]
            if how:
                part.update(status="changed", how="+".join(how), now={"head": new_head, "deprel": new_deprel})
            else:
                part["status"] = "accepted"
            parts.append(part)
        accepted = sum(p["status"] == "accepted" for p in parts)
        return {"unit": "arc", "accepted": accepted, "changed": len(parts) - accepted, "added": 0, "parts": parts}

    def parse_record(self, record: dict[str, Any]) -> ParsedRecord:
        """The HF column layout; a record with only ``sentence`` is a raw sentence whose eojeol, lemmas and
        POS tags the importer adds (``tokens``) before the item is validated."""
        record = require_dict(record)
        guid = external_id(record)
        payload: dict[str, Any] = {"sentence": str_field(record, "sentence")}
        annotations: list[RecordAnnotation] = []
        if "word_form" in record:
            columns = {key: require_list(get(record, key), key) for key in TOKEN_COLUMNS}
            n = len(columns["word_form"])
            for key, values in columns.items():
                if len(values) != n:
                    raise PayloadError(key, f"has {len(values)} entries but word_form has {n}")
            payload["tokens"] = [
                {"index": index, "form": form, "lemma": lemma, "pos": pos}
                for index, form, lemma, pos in zip(*(columns[k] for k in TOKEN_COLUMNS), strict=True)
            ]
            if record.get("head") is not None:
                heads = require_list(record["head"], "head")
                deprels = require_list(get(record, "deprel"), "deprel")
                for key, values in (("head", heads), ("deprel", deprels)):
                    if len(values) != n:
                        raise PayloadError(key, f"has {len(values)} entries but the sentence has {n} eojeol")
                annotations.append(RecordAnnotation(CORPUS, LABEL_STAGE, {"heads": heads, "deprels": deprels}))
        return ParsedRecord(
            external_id=guid,
            payload=payload,
            meta=rest(record, ("guid", "sentence", *TOKEN_COLUMNS, *LABEL_COLUMNS)),
            split=split_from_guid(guid),
            annotations=annotations,
        )

    def build_record(
        self, *, external_id: str, payload: dict[str, Any], meta: dict[str, Any],
        annotations: list[RecordAnnotation], gold: dict[str, Any] | None,
    ) -> dict[str, Any]:
        tokens = payload.get("tokens") or []
        fields: dict[str, Any] = {"guid": external_id, "sentence": payload["sentence"]}
        if tokens:
            fields.update(index=[t["index"] for t in tokens], word_form=[t["form"] for t in tokens],
                          lemma=[t["lemma"] for t in tokens], pos=[t["pos"] for t in tokens])
        label = gold if gold is not None else first_payload(annotations)
        if label is not None:
            fields.update(head=list(label["heads"]), deprel=list(label["deprels"]))
        return ordered(RECORD_ORDER, fields, meta)


TASK_TYPE = DependencyParsing()
