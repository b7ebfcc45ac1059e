"""WoS dialogues over the demo ontology (``demo/corpus/dst_ontology.json``), the state cumulated turn by turn."""

from __future__ import annotations

import json
import random
from pathlib import Path

from ._korean import Record, guid, obj_particle, ro_particle, subj_particle

CORPUS = Path(__file__).resolve().parents[1]


def _dst_restaurant(rng: random.Random, ontology: dict[str, list[str]]) -> tuple[list[str], list[Record]]:
    area, price, kind = (
        rng.choice(_values(ontology, "식당-지역")),
        rng.choice(_values(ontology, "식당-가격대")),
        rng.choice(_values(ontology, "식당-종류")),
    )
    name, day, people = (
        rng.choice(_values(ontology, "식당-이름")),
        rng.choice(_values(ontology, "식당-예약 요일")),
        rng.choice(_values(ontology, "식당-예약 명수")),
    )
    state = [f"식당-지역-{area}", f"식당-가격대-{price}", f"식당-종류-{kind}"]
    priced = {"저렴": "저렴한", "적당": "적당한", "비싼": "비싼"}[price]
    turns = [
        {
            "role": "user",
            "text": f"{area}에 가격대가 {priced} {kind}{subj_particle(kind)} 있을까요?",
            "state": list(state),
        },
        {"role": "sys", "text": f"네, '{name}'{obj_particle(name)} 추천드려요. 예약을 도와드릴까요?"},
    ]
    state += [f"식당-이름-{name}", f"식당-예약 요일-{day}", f"식당-예약 명수-{people}"]
    turns += [
        {
            "role": "user",
            "text": f"좋아요. {name}{ro_particle(name)} {day}에 {people}명 예약해 주세요.",
            "state": list(state),
        },
        {"role": "sys", "text": "예약이 완료되었습니다. 더 필요하신 것이 있을까요?"},
    ]
    return ["식당"], turns


def _dst_hotel(rng: random.Random, ontology: dict[str, list[str]]) -> tuple[list[str], list[Record]]:
    area, kind = rng.choice(_values(ontology, "숙소-지역")), rng.choice(_values(ontology, "숙소-종류"))
    parking = rng.choice(["yes", "no"])
    name, nights = rng.choice(_values(ontology, "숙소-이름")), rng.choice(_values(ontology, "숙소-예약 기간"))
    state = [f"숙소-지역-{area}", f"숙소-종류-{kind}"]
    turns = [
        {"role": "user", "text": f"{area}에 있는 {kind}{obj_particle(kind)} 찾고 있어요.", "state": list(state)},
        {"role": "sys", "text": "주차가 필요하신가요?"},
    ]
    state.append(f"숙소-주차 가능-{parking}")
    answer = (
        "네, 차를 가져가서 주차가 되면 좋겠어요."
        if parking == "yes"
        else "아니요, 대중교통으로 갈 거라 주차는 필요 없어요."
    )
    turns += [
        {"role": "user", "text": answer, "state": list(state)},
        {"role": "sys", "text": f"'{name}'{subj_particle(name)} 조건에 맞습니다. 며칠 묵으시나요?"},
    ]
    state += [f"숙소-이름-{name}", f"숙소-예약 기간-{nights}"]
    turns += [
        {"role": "user", "text": f"{name}{ro_particle(name)} {nights}박 예약할게요.", "state": list(state)},
        {"role": "sys", "text": "예약되었습니다. 즐거운 여행 되세요."},
    ]
    return ["숙소"], turns


def _dst_taxi(rng: random.Random, ontology: dict[str, list[str]]) -> tuple[list[str], list[Record]]:
    start, end = rng.sample(_values(ontology, "택시-출발지"), 1)[0], rng.choice(_values(ontology, "택시-도착지"))
    leave = rng.choice(_values(ontology, "택시-출발 시간"))
    state = [f"택시-출발지-{start}", f"택시-도착지-{end}"]
    turns = [
        {"role": "user", "text": f"{start}에서 {end}까지 가는 택시를 불러 주세요.", "state": list(state)},
        {"role": "sys", "text": "몇 시에 출발하실 건가요?"},
    ]
    state.append(f"택시-출발 시간-{leave}")
    turns += [
        {"role": "user", "text": f"{leave}에 출발할게요.", "state": list(state)},
        {"role": "sys", "text": "택시 예약이 끝났습니다. 차량 번호는 문자로 보내 드릴게요."},
    ]
    return ["택시"], turns


def _dst_sight(rng: random.Random, ontology: dict[str, list[str]]) -> tuple[list[str], list[Record]]:
    kind, area = rng.choice(_values(ontology, "관광-종류")), rng.choice(_values(ontology, "관광-지역"))
    name = rng.choice(_values(ontology, "관광-이름"))
    state = [f"관광-종류-{kind}", f"관광-지역-{area}"]
    turns = [
        {"role": "user", "text": f"{area}에서 가 볼 만한 {kind} 있나요?", "state": list(state)},
        {"role": "sys", "text": f"'{name}'{subj_particle(name)} 인기가 많습니다. 교육적인 곳을 찾으시나요?"},
    ]
    state += [f"관광-이름-{name}", "관광-교육적-yes"]
    turns += [
        {
            "role": "user",
            "text": f"네, 아이들과 갈 거라 교육적인 곳이면 좋아요. {name}{subj_particle(name)} 좋겠네요.",
            "state": list(state),
        },
        {"role": "sys", "text": "좋은 선택입니다. 즐거운 시간 보내세요."},
    ]
    return ["관광"], turns


def _values(ontology: dict[str, list[str]], slot: str) -> list[str]:
    return [v for v in ontology[slot] if v not in ("none", "dontcare")]


def records(rng: random.Random, n: int = 96) -> list[Record]:
    ontology = json.loads((CORPUS / "dst_ontology.json").read_text(encoding="utf-8"))
    makers = [_dst_restaurant, _dst_hotel, _dst_taxi, _dst_sight]
    records: list[Record] = []
    seen: set[str] = set()
    while len(records) < n:
        domains, dialogue = makers[len(records) % len(makers)](rng, ontology)
        key = json.dumps(dialogue, ensure_ascii=False)
        if key in seen:
            continue
        seen.add(key)
        records.append({"guid": guid("dst", len(records)), "domains": domains, "dialogue": dialogue})
    return records
