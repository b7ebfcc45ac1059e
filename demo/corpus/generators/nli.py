"""Premises with one hypothesis per label: a generalisation, a negation or a changed time, an added
unverifiable fact."""

from __future__ import annotations

import random

from ._korean import Record, guid, obj_particle, subj_particle, topic_particle

_NLI_SUBJECTS = [
    "가람시",
    "서해시 교육청",
    "한빛물산",
    "누리구 보건소",
    "새봄 도서관",
    "한울시 체육회",
    "가상전자",
    "미래과학원",
]
_NLI_EVENTS = [
    ("시민 건강 강좌", "강좌"),
    ("신입 사원 채용 설명회", "설명회"),
    ("여름 독서 캠프", "캠프"),
    ("지역 농산물 장터", "장터"),
    ("청소년 코딩 대회", "대회"),
    ("무료 법률 상담회", "상담회"),
    ("야간 걷기 행사", "행사"),
    ("봉사자 발대식", "발대식"),
]
_NLI_TIMES = [
    ("지난 토요일", "지난 일요일"),
    ("이번 달 초", "지난달 말"),
    ("어제 오후", "오늘 아침"),
    ("지난 3일", "지난 10일"),
]
_NLI_PLACES = ["시청 대강당", "중앙공원 야외무대", "본사 1층 로비", "구민회관", "체육관", "시립미술관 앞마당"]
#: Neutral hypotheses: a plausible fact the premise does not settle ({s}: the organiser, {e}: the event).
_NLI_EXTRA = [
    "{e}에는 참가자가 예상보다 적었다.",
    "{s}{t} 내년에도 {e}{o} 열 계획이다.",
    "{e} 비용은 모두 후원금으로 마련했다.",
    "{e} 참석자 대부분은 20대였다.",
    "{s}{t} {e}{o} 준비하는 데 석 달이 걸렸다.",
    "지역 방송이 {e}{o} 생중계했다.",
]


def records(rng: random.Random, premises: int = 32) -> list[Record]:
    records: list[Record] = []
    combos = [(s, e, t, p) for s in _NLI_SUBJECTS for e in _NLI_EVENTS for t in _NLI_TIMES for p in _NLI_PLACES]
    for subject, (event, short), (when, other_when), place in rng.sample(combos, premises):
        topic = topic_particle(subject)
        premise = f"{subject}{topic} {when} {place}에서 {event}{obj_particle(event)} 열었다."
        source = rng.choice(["wikinews", "policy", "wikitree"])
        hypotheses = {
            "entailment": rng.choice(
                [
                    f"{place}에서 {short}{subj_particle(short)} 열렸다.",
                    f"{subject}{topic} {short}{obj_particle(short)} 개최했다.",
                    f"{when} {subject}{subj_particle(subject)} 주최한 {short}{subj_particle(short)} 있었다.",
                ]
            ),
            "contradiction": rng.choice(
                [
                    f"{subject}{topic} {event}{obj_particle(event)} 열지 않았다.",
                    f"{subject}{topic} {other_when}에 {event}{obj_particle(event)} 열었다.",
                    f"{event}{topic_particle(event)} 취소되어 {place}에서는 아무 행사도 없었다.",
                ]
            ),
            "neutral": rng.choice(_NLI_EXTRA).format(s=subject, t=topic, e=event, o=obj_particle(event)),
        }
        for label, hypothesis in hypotheses.items():
            records.append(
                {
                    "guid": "",
                    "source": source,
                    "premise": premise,
                    "hypothesis": hypothesis,
                    "gold_label": label,
                    "author": label,
                }
            )
    for n, record in enumerate(records):
        record["guid"] = guid("nli", n)
    return records
