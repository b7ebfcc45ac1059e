"""Dialogue state tracking (WoS): the cumulative belief state after every user turn."""

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
    require_list,
    require_str,
    str_field,
)
from ._records import CORPUS, external_id, first_payload, ordered, rest, split_from_guid
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

ROLES = ["user", "sys"]
SPECIAL_VALUES = ["none", "dontcare"]

_YES_NO = ["yes", "no"]
_PRICE = ["저렴", "적당", "비싼"]
_AREA = ["서울 동쪽", "서울 서쪽", "서울 남쪽", "서울 북쪽", "서울 중앙"]
_WEEKDAYS = ["월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일"]
_COUNTS = [str(n) for n in range(1, 11)]

#: Names, times and places are open-ended: any non-empty value is accepted for these slots.
FREE_VALUE_SLOTS = [
    "관광-이름", "숙소-이름", "식당-이름",
    "식당-예약 시간", "지하철-출발 시간", "택시-출발 시간", "택시-도착 시간",
    "지하철-출발지", "지하철-도착지", "택시-출발지", "택시-도착지",
]

#: Goldset's own small value lists (closed slots); the 45 slot names are WoS's.
ONTOLOGY: dict[str, list[str]] = {
    **{slot: list(_YES_NO) for slot in [
        "관광-경치 좋은", "관광-교육적", "관광-도보 가능", "관광-문화 예술", "관광-역사적", "관광-주차 가능",
        "숙소-도보 가능", "숙소-수영장 유무", "숙소-스파 유무", "숙소-인터넷 가능", "숙소-조식 가능",
        "숙소-주차 가능", "숙소-헬스장 유무", "숙소-흡연 가능",
        "식당-도보 가능", "식당-야외석 유무", "식당-인터넷 가능", "식당-주류 판매", "식당-주차 가능",
        "식당-흡연 가능",
    ]},
    **{slot: list(_PRICE) for slot in ["숙소-가격대", "식당-가격대"]},
    **{slot: list(_AREA) for slot in ["관광-지역", "숙소-지역", "식당-지역"]},
    **{slot: list(_WEEKDAYS) for slot in ["숙소-예약 요일", "식당-예약 요일"]},
    **{slot: list(_COUNTS) for slot in ["숙소-예약 명수", "식당-예약 명수", "숙소-예약 기간"]},
    "관광-종류": ["공원", "박물관", "미술관", "궁궐", "공연", "쇼핑", "랜드마크", "놀이공원", "동물원",
              "종교 시설", "기타"],
    "숙소-종류": ["호텔", "모텔", "게스트 하우스", "호스텔", "에어비엔비", "펜션", "리조트"],
    "식당-종류": ["한식당", "중식당", "일식당", "양식당", "분식집", "치킨집", "베이커리", "카페", "주점",
              "뷔페"],
    "택시-종류": ["일반", "모범", "대형", "고급", "에코", "개인"],
    **{slot: [] for slot in FREE_VALUE_SLOTS},
}

DOMAINS_EN = {"관광": "attraction", "숙소": "hotel", "식당": "restaurant", "지하철": "subway", "택시": "taxi"}
SLOTS_EN = {
    "경치 좋은": "scenic", "교육적": "educational", "도보 가능": "within walking distance",
    "문화 예술": "culture and arts", "역사적": "historic", "주차 가능": "parking", "수영장 유무": "pool",
    "스파 유무": "spa", "인터넷 가능": "internet", "조식 가능": "breakfast", "헬스장 유무": "gym",
    "흡연 가능": "smoking", "야외석 유무": "outdoor seating", "주류 판매": "serves alcohol",
    "가격대": "price range", "지역": "area", "예약 요일": "booking day", "예약 명수": "booking people",
    "예약 기간": "booking nights", "종류": "type", "이름": "name", "예약 시간": "booking time",
    "출발 시간": "departure time", "도착 시간": "arrival time", "출발지": "departure", "도착지": "destination",
}


def _slot_names(slot: str) -> dict[str, str]:
    domain, _, name = slot.partition("-")
    return {"ko": slot, "en": f"{DOMAINS_EN[domain]} – {SLOTS_EN[name]}"}


#: WoS's domains and slots are Korean: the English names are Goldset's.
NAMES: Names = {**{domain: {"ko": domain, "en": en} for domain, en in DOMAINS_EN.items()},
                **{slot: _slot_names(slot) for slot in ONTOLOGY}}

INSTRUCTIONS = """\
## 작업 개요
여행 안내 대화(사용자 ↔ 시스템)를 읽고, **사용자 발화가 끝날 때마다** 그때까지 사용자가 원한 조건을
`도메인-슬롯-값` 목록(대화 상태)으로 적습니다. 도메인은 `관광`, `숙소`, `식당`, `지하철`, `택시`입니다.

## 상태 적는 법
- 상태는 **누적**입니다. 앞 턴에서 정한 조건은 바뀌거나 취소되지 않는 한 다음 턴에도 그대로 남깁니다.
- 사용자가 조건을 바꾸면 이전 값을 지우고 새 값으로 적습니다. 한 상태에 같은 슬롯은 한 번만 씁니다.
- 값은 목록에서 고릅니다. 이름·시간·출발지·도착지처럼 목록이 없는 슬롯은 대화에 나온 표현을 그대로 적습니다.
- 사용자가 "아무 데나 괜찮아요"처럼 상관없다고 하면 `dontcare`를 씁니다.
- 시스템이 제안했더라도 사용자가 **받아들인** 조건만 적습니다. 시스템의 제안만으로는 상태가 바뀌지 않습니다.
- 사용자가 정보를 묻기만 하고(예: "주소 알려주세요") 조건을 말하지 않으면 상태는 그대로입니다.

## 예시
사용자: "서울 동쪽에 저렴한 가격대의 인터넷이 되는 숙소를 알려주세요."
→ `숙소-지역-서울 동쪽`, `숙소-가격대-저렴`, `숙소-인터넷 가능-yes`

시스템: "숙소 종류는 어떤 걸 선호하시나요?"
사용자: "게스트 하우스면 좋겠어요. 토요일부터 2박, 2명이에요."
→ 위 세 개 + `숙소-종류-게스트 하우스`, `숙소-예약 요일-토요일`, `숙소-예약 기간-2`, `숙소-예약 명수-2`

## 헷갈리는 경우
- "좀 싼 곳"은 `저렴`, "너무 비싸지 않은 곳"은 `적당`으로 적습니다.
- 시간은 `18:30`처럼 24시간 형식으로 적습니다. "저녁 6시 반" → `18:30`.
- 택시의 출발지·도착지가 앞에서 정한 숙소나 식당이면 그 이름을 값으로 적습니다.
- 여러 도메인이 한 대화에 나올 수 있습니다. 각 도메인의 슬롯을 모두 남깁니다.
- 대화가 깨져 사용자의 의도를 알 수 없으면 신고를 남기고 건너뜁니다.
"""

ETHICS = """\
## 윤리 지침
- 사용자의 말투나 요청에서 성별, 나이, 국적, 경제 사정 같은 속성을 추측해 메모하지 않습니다.
- 대화에 혐오 표현, 특정 집단에 대한 고정관념, 괴롭힘이 있으면 작업을 멈추고 **"유해·혐오 표현" 신고**를
  남긴 뒤 건너뜁니다.
- 사용자가 건강·종교 같은 민감한 사정을 말하더라도 슬롯에 없는 정보는 상태에 적지 않습니다.
"""

PII = """\
## 개인정보 지침
- 이 작업의 대화는 작업자들이 연기한 가상 대화지만 실제 정보가 섞일 수 있습니다. 개인정보는 사용자의
  실명, 전화번호, 이메일, 집 주소, 카드·계좌번호, 예약자 정보처럼 한 사람을 알아볼 수 있는 정보입니다.
- 식별자는 작업 전에 `[이름1]`, `[전화번호1]`처럼 **유형이 붙은 자리표시자**로 바뀌어 있습니다.
  택시 출발지·도착지가 자리표시자이면 자리표시자를 그대로 값으로 적습니다.
- 바뀌지 않은 개인정보가 보이면 그 값을 상태나 메모에 **옮겨 적지 말고** "개인정보" 신고만 남기세요.
- 관광지, 식당, 숙소, 역 이름처럼 공개된 장소 이름과, 대화에 나오는 **공인**(연예인, 정치인 등)의
  이름은 개인정보가 아니므로 그대로 적어도 됩니다.
"""


#: The synthetic dialogues' slots and values (``synthetic_record``), and how a user asks for each.
SYNTHETIC_SLOTS = {"숙소-지역": ["서울 동쪽", "서울 서쪽", "서울 남쪽"], "숙소-가격대": ["저렴", "적당", "비싼"],
                   "식당-종류": ["한식당", "중식당", "양식당"], "택시-도착지": ["서울역", "강남역", "잠실역"]}
SYNTHETIC_PHRASES = {"숙소-지역": "{v}에 있는 숙소를 찾아요.", "숙소-가격대": "가격대는 {v}한 곳이면 좋겠어요.",
                     "식당-종류": "{v}도 알려주세요.", "택시-도착지": "{v}까지 가는 택시를 불러주세요."}


class DialogueStateTracking(TaskType):
    slug = "dst"
    klue_name = "WoS"
    title = gettext_noop("Dialogue state tracking")
    order = 8
    text_fields = ("dialogue",)
    turn_fields = ("dialogue",)
    span_fields = ()
    csv_columns = ("domains", "dialogue")
    klue_file = KlueFile("wos", "json", ontology=True)
    widget = "annotation/widgets/dst.js"
    widget_styles = "annotation/widgets/dst.css"

    def widget_strings(self) -> dict[str, str]:
        from django.utils.translation import gettext as _

        return {
            "dst_instruction": _("For each user turn, edit the cumulative dialogue state; it carries over from the "
                                 "previous user turn."),
            "dst_dialogue": _("Dialogue"),
            "dst_turn": _("Turn %(n)s"),
            "dst_user": _("User"),
            "dst_system": _("System"),
            "dst_state": _("State after this turn"),
            "dst_domain": _("Domain"),
            "dst_slot": _("Slot"),
            "dst_value": _("Value"),
            "dst_add": _("Add"),
            "dst_empty_state": _("No slots yet."),
            "dst_key_turns": _("previous / next user turn"),
            "dst_key_add": _("add a slot (domain → slot → value, Enter to add)"),
            "dst_unknown_slot": _("unknown slot %(slot)s"),
            "dst_bad_value": _("%(value)s is not a value of %(slot)s"),
            "dst_carried": _("carried over from the previous turn"),
        }

    def agreement_measure(self) -> Any:
        from annotation.agreement.measures.states import StateMeasure

        return StateMeasure()

    def gold_rule(self) -> Any:
        from annotation.gold.rules import ExactMajorityRule

        return ExactMajorityRule(("states",))

    def flat_schema(self) -> Any:
        from exports.writers.flat import STRING_LISTS, STRINGS, Extra, FlatSchema, column

        return FlatSchema((
            column("guid"), column("domains", STRINGS),
            column("roles", STRINGS, "dialogue.*.role"), column("texts", STRINGS, "dialogue.*.text"),
            column("states", STRING_LISTS, "dialogue.*.state"),
        ), hf_categories=("text-classification",), hf_task_ids=("dialogue-state-tracking",),
            extras=(Extra("ontology", release_ontology, 2, False),))

    def metrics(self) -> Any:
        from exports.baselines.bootstrap import dst_stats
        from exports.metrics import TaskMetrics
        from exports.metrics.dst import score_dst

        return TaskMetrics(self.slug, score_dst, ("joint_goal_accuracy", "slot_micro_f1"), ("slot_f1_pooled",),
                           "slot_micro_f1", dst_stats)

    def baseline(self) -> Any:
        from exports.baselines.dst import BASELINE

        return BASELINE

    def suggestion_payload(self, record: dict[str, Any], item: dict[str, Any], schema: dict[str, Any]
                           ) -> dict[str, Any]:
        return {"states": [list(t.get("state") or []) for t in record["dialogue"] if t.get("role") == "user"]}

    def synthetic_record(self, rng: random.Random, n: int) -> dict[str, Any]:
        """One to three slots asked for turn by turn, the state cumulated."""
        slots = rng.sample(sorted(SYNTHETIC_SLOTS), rng.randint(1, 3))
        state: list[str] = []
        turns = []
        for slot in slots:
            value = rng.choice(SYNTHETIC_SLOTS[slot])
            state = [*state, f"{slot}-{value}"]
            turns.append({"role": "user", "text": SYNTHETIC_PHRASES[slot].format(v=value), "state": list(state)})
            turns.append({"role": "sys", "text": "네, 알겠습니다. 더 필요하신 것이 있나요?"})
        turns.append({"role": "user", "text": "감사합니다.", "state": list(state)})
        return {"guid": f"wos-v1_train_{n:05d}", "domains": sorted({s.split("-")[0] for s in slots}),
                "dialogue": turns}

    def synthetic_ontology(self) -> dict[str, list[str]] | None:
        return {slot: ["none", "dontcare", *values] for slot, values in SYNTHETIC_SLOTS.items()}

    def default_schema(self) -> dict[str, Any]:
        return {
            "ontology": {slot: list(values) for slot, values in ONTOLOGY.items()},
            "special_values": list(SPECIAL_VALUES),
            "free_value_slots": list(FREE_VALUE_SLOTS),
            LABEL_NAMES: self.default_label_names(),
        }

    def default_label_names(self) -> Names:
        return copy_names(NAMES)

    def label_values(self, schema: dict[str, Any]) -> list[str]:
        # The ontology's slots and their domains: what the widget offers to pick.
        ontology = schema.get("ontology")
        slots = [str(slot) for slot in ontology] if isinstance(ontology, dict) else []
        return [*dict.fromkeys(slot.partition("-")[0] for slot in slots), *slots]

    def guideline_template(self) -> GuidelineTemplate:
        return GuidelineTemplate(instructions=INSTRUCTIONS, ethics=ETHICS, pii=PII)

    def item_text(self, payload: dict[str, Any]) -> str:
        # The dialogue is a list of turns; screening and hashing need their text, not the list's repr.
        return "\n".join(str(turn.get("text", "")) for turn in payload.get("dialogue") or []
                         if isinstance(turn, dict))

    def validate_item(self, payload: Any) -> dict[str, Any]:
        payload = require_dict(payload)
        domains = [require_str(d, join("domains", i))
                   for i, d in enumerate(require_list(get(payload, "domains"), "domains"))]
        dialogue = []
        for i, raw in enumerate(require_list(get(payload, "dialogue"), "dialogue", non_empty=True)):
            field = join("dialogue", i)
            turn = require_dict(raw, field)
            role = require_choice(get(turn, "role", field), ROLES, join(field, "role"), "role")
            dialogue.append({**turn, "role": role, "text": str_field(turn, "text", field)})
        if not any(turn["role"] == "user" for turn in dialogue):
            raise PayloadError("dialogue", "has no user turn; there is no state to track")
        return keep_extra(payload, {"domains": domains, "dialogue": dialogue})

    def validate_annotation(
        self, payload: Any, *, item: dict[str, Any], schema: dict[str, Any], stage: str
    ) -> dict[str, Any]:
        self.stage(stage)
        payload = require_dict(payload)
        ontology = require_dict(schema.get("ontology"), "schema.ontology")
        special = set(schema.get("special_values", SPECIAL_VALUES))
        free = set(schema.get("free_value_slots", []))
        user_turns = sum(1 for turn in item.get("dialogue") or [] if turn.get("role") == "user")

        raw_states = require_list(get(payload, "states"), "states")
        if len(raw_states) != user_turns:
            raise PayloadError("states", f"has {len(raw_states)} states but the dialogue has {user_turns} "
                                         f"user turns; send one cumulative state per user turn")
        states: list[list[str]] = []
        for t, raw_state in enumerate(raw_states):
            state_field = join("states", t)
            seen: dict[str, int] = {}
            state = []
            for k, entry in enumerate(require_list(raw_state, state_field)):
                field = join(state_field, k)
                entry = require_str(entry, field)
                # Values may contain '-' (e.g. place names), so only the first two split domain and slot.
                parts = entry.split("-", 2)
                if len(parts) != 3 or not all(p.strip() for p in parts):
                    raise PayloadError(field, f"{entry!r} is not 'domain-slot-value'")
                slot, value = f"{parts[0]}-{parts[1]}", parts[2]
                if slot not in ontology:
                    raise PayloadError(field, f"unknown slot {slot!r} in {entry!r}")
                if slot in seen:
                    raise PayloadError(field, f"slot {slot!r} appears twice in one state "
                                              f"(also at {join(state_field, seen[slot])})")
                seen[slot] = k
                if value not in special and slot not in free and value not in ontology[slot]:
                    allowed = [*ontology[slot], *sorted(special)]
                    shown = ", ".join(allowed[:12]) + (", …" if len(allowed) > 12 else "")
                    raise PayloadError(field,
                                       f"{value!r} is not a value of {slot!r}; expected one of {shown}")
                state.append(entry)
            states.append(state)
        return {"states": states}

    def suggestion_parts(self, suggested: dict[str, Any], annotated: dict[str, Any]) -> dict[str, Any]:
        """Per user turn's state: ``accepted`` when the annotator kept the suggested state as it was, else
        ``changed`` with the entries they removed and added."""
        parts = []
        for t, (state, new_state) in enumerate(zip(suggested.get("states") or [], annotated.get("states") or [],
                                                   strict=False)):
            removed, added = sorted(set(state) - set(new_state)), sorted(set(new_state) - set(state))
            part: dict[str, Any] = {"turn": t + 1, "status": "changed" if removed or added else "accepted"}
            if removed or added:
                part.update(removed=removed, added=added)
            parts.append(part)
        accepted = sum(p["status"] == "accepted" for p in parts)
        return {"unit": "turn", "accepted": accepted, "changed": len(parts) - accepted, "added": 0, "parts": parts}

    def validate_carried(self, meta: dict[str, Any], *, item: dict[str, Any], schema: dict[str, Any]) -> None:
        # The states are annotations (checked against the ontology); the domains are written back as they came.
        ontology = require_dict(schema.get("ontology"), "schema.ontology")
        domains = list(dict.fromkeys(slot.split("-", 1)[0] for slot in ontology))
        for i, domain in enumerate(item["domains"]):
            require_choice(domain, domains, join("domains", i), "domain")

    def parse_record(self, record: dict[str, Any]) -> ParsedRecord:
        record = require_dict(record)
        guid = external_id(record)
        turns = [require_dict(t, join("dialogue", i))
                 for i, t in enumerate(require_list(get(record, "dialogue"), "dialogue"))]
        states = [t.get("state") for t in turns if t.get("role") == "user"]
        labelled = any(state is not None for state in states)
        if labelled and None in states:
            missing = next(i for i, t in enumerate(turns) if t.get("role") == "user" and t.get("state") is None)
            raise PayloadError(join(join("dialogue", missing), "state"),
                               "is missing while other user turns have one; every user turn needs its state")
        return ParsedRecord(
            external_id=guid,
            # The state is the label: annotators see the turns without it.
            payload={"domains": get(record, "domains"),
                     "dialogue": [{k: v for k, v in t.items() if k != "state"} for t in turns]},
            meta=rest(record, ("guid", "domains", "dialogue")),
            split=split_from_guid(guid),
            group_key=guid,
            annotations=[RecordAnnotation(CORPUS, LABEL_STAGE, {"states": states})] if labelled else [],
        )

    def build_record(
        self, *, external_id: str, payload: dict[str, Any], meta: dict[str, Any],
        annotations: list[RecordAnnotation], gold: dict[str, Any] | None,
    ) -> dict[str, Any]:
        label = gold if gold is not None else first_payload(annotations)
        states = iter(label["states"] if label is not None else [])
        dialogue = []
        for turn in payload["dialogue"]:
            state = next(states, None) if turn.get("role") == "user" else None
            dialogue.append(turn if state is None else {**turn, "state": list(state)})
        return ordered(("guid", "domains", "dialogue"), {"guid": external_id, "domains": payload["domains"],
                                                          "dialogue": dialogue}, meta)



def release_ontology(schema: dict[str, Any]) -> dict[str, list[str]]:
    """WoS's ontology file from the project's schema: its slots in their recorded order (an imported ontology's,
    ``datasets_build.ontology``), each with the special values it lacks first, then its values as they are. An
    ontology imported from KLUE (every slot starts with ``none``, ``dontcare``) comes out as it went in."""
    from datasets_build.ontology import ontology_in_order

    special = list(schema.get("special_values") or ["none", "dontcare"])
    return {slot: [*(s for s in special if s not in values), *values]
            for slot, values in ontology_in_order(schema).items()}


TASK_TYPE = DialogueStateTracking()
