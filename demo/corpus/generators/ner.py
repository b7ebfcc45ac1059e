"""Sentences with entity markup from eight patterns with typed slots (PS only for public historical figures)."""

from __future__ import annotations

import random
from collections.abc import Callable

from ._korean import ORGS, Record, guid

_LOCS = ["판교", "부산", "광주", "대전", "제주도", "강릉", "인천항", "전주 한옥마을", "여의도", "세종시"]
_DATES = ["2026년 3월", "지난달 12일", "올해 초", "2025년 11월", "다음 달 5일", "지난해 여름", "6월 1일"]
_TIMES = ["오후 7시", "오전 10시 30분", "새벽 5시", "밤 9시", "정오"]
#: (what, how many, what the company decided to do with it)
_QTYS = [
    ("신제품", "3종", "출시하기로"),
    ("직원", "200명", "새로 뽑기로"),
    ("매장", "12곳", "새로 열기로"),
    ("투자금", "500억 원", "추가로 투입하기로"),
]
_CROWDS = [("관람객", "1만 명"), ("관중", "2만 명"), ("시민", "5천 명"), ("여행객", "3만 명")]
_PEOPLE = ["세종", "이순신", "장영실", "정약용", "신사임당", "김구"]
_NER_PATTERNS: list[Callable[[random.Random], str]] = [
    lambda r: f"<{r.choice(ORGS)}:OG>는 <{r.choice(_DATES)}:DT> <{r.choice(_LOCS)}:LC>에서 새 서비스를 선보였다.",
    lambda r: (lambda thing, n, plan: f"<{r.choice(ORGS)}:OG>는 올해 {thing} <{n}:QT>을 {plan} 했다.")(
        *r.choice(_QTYS)
    ),
    lambda r: f"<{r.choice(_DATES)}:DT> <{r.choice(_TIMES)}:TI> <{r.choice(_LOCS)}:LC> 일대에 강한 비가 내렸다.",
    lambda r: f"<{r.choice(_PEOPLE)}:PS>의 업적을 기리는 전시가 <{r.choice(_LOCS)}:LC>에서 열린다.",
    lambda r: (lambda thing, n: f"<{r.choice(_LOCS)}:LC> 축제에 {thing} <{n}:QT>이 몰렸다.")(*r.choice(_CROWDS)),
    lambda r: f"<{r.choice(ORGS)}:OG>와 <{r.choice(ORGS)}:OG>는 <{r.choice(_DATES)}:DT> 업무 협약을 맺었다.",
    lambda r: f"경기는 <{r.choice(_TIMES)}:TI>에 <{r.choice(_LOCS)}:LC> 종합운동장에서 시작된다.",
    lambda r: f"<{r.choice(_PEOPLE)}:PS> 탄생을 기념해 <{r.choice(ORGS)}:OG>가 장학금을 내놓았다.",
]


def records(rng: random.Random, n: int = 96) -> list[Record]:
    sentences: list[str] = []
    while len(sentences) < n:
        sentence = _NER_PATTERNS[len(sentences) % len(_NER_PATTERNS)](rng)
        if sentence not in sentences and not _same_org_twice(sentence):
            sentences.append(sentence)
    return [{"guid": guid("ner", i), "sentence": s} for i, s in enumerate(sentences)]


def _same_org_twice(sentence: str) -> bool:
    orgs = [o for o in ORGS if f"<{o}:OG>" in sentence]
    return any(sentence.count(f"<{o}:OG>") > 1 for o in orgs)
